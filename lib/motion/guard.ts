import { err, ok, type Result } from '../result.ts';

/** Something that may be moving the arm: returns what, or undefined when it is not. */
export type ActivitySource = () => string | undefined;

/**
 * The one-command-in-flight rule: a motion request begins only when nothing else moves the arm
 * (another request of this process, a trajectory the controller executes, a sequence runner).
 * There is no queue: a busy arm is an immediate refusal naming what holds it.
 */
export class MotionGuard {
  private holder: string | undefined;
  private readonly sources: ActivitySource[] = [];

  /** Adds a source of arm activity (the context's controller, the sequence supervisor). */
  addSource(source: ActivitySource): void {
    this.sources.push(source);
  }

  /** What holds the arm now, if anything. */
  activity(): string | undefined {
    if (this.holder) return this.holder;
    for (const source of this.sources) {
      const what = source();
      if (what) return what;
    }
    return undefined;
  }

  /** Takes the arm for `what`; the returned function releases it. Busy: the message says why. */
  begin(what: string): Result<() => void, string> {
    const busy = this.activity();
    if (busy) return err(`the arm is busy (${busy}); wait until it finishes or POST /stop`);
    this.holder = what;
    let released = false;
    return ok(() => {
      if (released) return;
      released = true;
      if (this.holder === what) this.holder = undefined;
    });
  }
}

let current: MotionGuard | undefined;

/** The process's motion guard; throws when start-up has not set one. */
export function motionGuard(): MotionGuard {
  if (!current) throw new Error('motion guard is not set: server start-up must call setMotionGuard() first');
  return current;
}

/** Sets the process's motion guard (start-up and tests). */
export function setMotionGuard(guard: MotionGuard): void {
  current = guard;
}

/** Clears the motion guard. */
export function resetMotionGuard(): void {
  current = undefined;
}
