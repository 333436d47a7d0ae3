/**
 * The latest joint state a backend received, with the callers waiting for the next one: what every backend keeps of
 * its joint-state topic (the rclnodejs context uses it; the simulator keeps the same in lib/sim/context.ts for now).
 */
import type { ReceivedJointState } from './context.ts';
import type { JointStateMsg } from './messages.ts';

type Waiter = (msg: JointStateMsg) => void;

export class JointStateCache {
  readonly #nowMs: () => number;
  #latest: ReceivedJointState | undefined;
  #waiters = new Set<Waiter>();

  /** `nowMs`: the backend's clock, which stamps each message's arrival. */
  constructor(nowMs: () => number) {
    this.#nowMs = nowMs;
  }

  /** The latest message and when it arrived; undefined before the first. */
  get latest(): ReceivedJointState | undefined {
    return this.#latest;
  }

  /** Keeps `msg` as the latest, stamped now, and hands it to every caller waiting for the next one. */
  put(msg: JointStateMsg): void {
    this.#latest = { msg, receivedAtMs: this.#nowMs() };
    const waiters = this.#waiters;
    this.#waiters = new Set();
    for (const waiter of waiters) waiter(msg);
  }

  /** The next message to arrive, or undefined when none comes within `timeoutMs`. */
  next(timeoutMs: number): Promise<JointStateMsg | undefined> {
    return new Promise((resolve) => {
      const waiter = (msg: JointStateMsg) => {
        clearTimeout(timer);
        resolve(msg);
      };
      const timer = setTimeout(() => {
        this.#waiters.delete(waiter);
        resolve(undefined);
      }, timeoutMs);
      this.#waiters.add(waiter);
    });
  }
}
