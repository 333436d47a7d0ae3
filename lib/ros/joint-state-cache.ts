/**
 * The latest joint state a backend received, with the callers waiting for the next one: what every backend keeps of
 * its joint-state topic (the rclnodejs context and the simulator are composed of it).
 */
import type { Clock } from '../clock.ts';
import type { ReceivedJointState } from './context.ts';
import type { JointStateMsg } from './messages.ts';

type Waiter = (msg: JointStateMsg) => void;

export class JointStateCache {
  readonly #clock: Pick<Clock, 'nowMs' | 'after'>;
  #latest: ReceivedJointState | undefined;
  #waiters = new Set<Waiter>();

  /** `clock`: the backend's clock, which stamps each message's arrival and times the waits. */
  constructor(clock: Pick<Clock, 'nowMs' | 'after'>) {
    this.#clock = clock;
  }

  /** The latest message and when it arrived; undefined before the first. */
  get latest(): ReceivedJointState | undefined {
    return this.#latest;
  }

  /** Keeps `msg` as the latest, stamped now, and hands it to every caller waiting for the next one. */
  put(msg: JointStateMsg): void {
    this.#latest = { msg, receivedAtMs: this.#clock.nowMs() };
    const waiters = this.#waiters;
    this.#waiters = new Set();
    for (const waiter of waiters) waiter(msg);
  }

  /** The next message to arrive, or undefined when none comes within `timeoutMs` of the clock. */
  next(timeoutMs: number): Promise<JointStateMsg | undefined> {
    return new Promise((resolve) => {
      const timer = this.#clock.after(timeoutMs, () => {
        this.#waiters.delete(waiter);
        resolve(undefined);
      });
      const waiter: Waiter = (msg) => {
        timer.cancel();
        resolve(msg);
      };
      this.#waiters.add(waiter);
    });
  }
}
