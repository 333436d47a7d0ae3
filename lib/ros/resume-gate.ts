/**
 * Where paused motion goals of the ros2 backend wait: the stack plans and executes a goal itself and
 * cannot hold it on its path, so a pause cancels the goal (the stack brakes) and its request waits
 * here; a resume lets each waiter send its goal again from where the arm rests; a stop (or the
 * caller's own abort) ends the wait.
 */
import { reasonOf } from './settle.ts';

/** How a wait ended: resumed, or ended by an abort with its reason. */
export type GateOutcome = { readonly resumed: true } | { readonly resumed: false; readonly reason: string };

export class ResumeGate {
  private readonly waiters = new Set<(outcome: GateOutcome) => void>();

  /** Goals waiting for a resume. */
  get size(): number {
    return this.waiters.size;
  }

  /** Waits for {@link resume}, or for `signal` to abort (then with its reason). */
  wait(signal?: AbortSignal): Promise<GateOutcome> {
    return new Promise((resolve) => {
      const done = (outcome: GateOutcome) => {
        this.waiters.delete(done);
        signal?.removeEventListener('abort', onAbort);
        resolve(outcome);
      };
      const onAbort = () => done({ resumed: false, reason: signal ? reasonOf(signal) : 'cancelled' });
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.add(done);
    });
  }

  /** Lets every waiter go on; returns how many. */
  resume(): number {
    const waiters = [...this.waiters];
    for (const w of waiters) w({ resumed: true });
    return waiters.length;
  }

  /** Ends every wait with `reason` (a stop); returns how many. */
  end(reason: string): number {
    const waiters = [...this.waiters];
    for (const w of waiters) w({ resumed: false, reason });
    return waiters.length;
  }
}
