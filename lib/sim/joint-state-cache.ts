import type { ReceivedJointState } from '../ros/context.ts';
import type { JointStateMsg } from '../ros/messages.ts';
import type { Clock } from './clock.ts';

type Waiter = (msg: JointStateMsg) => void;

/** The latest joint state, received at a time of the clock, and the callers waiting for the next one. */
export class JointStateCache {
  private readonly clock: Clock;
  private current: ReceivedJointState | undefined;
  private waiters: Waiter[] = [];

  constructor(clock: Clock) {
    this.clock = clock;
  }

  latest(): ReceivedJointState | undefined {
    return this.current;
  }

  /** `msg` is the latest now; the waiters get it. */
  put(msg: JointStateMsg): void {
    this.current = { msg, receivedAtMs: this.clock.nowMs() };
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) waiter(msg);
  }

  /** The next joint state, or undefined when none comes within `timeoutMs` of the clock. */
  next(timeoutMs: number): Promise<JointStateMsg | undefined> {
    return new Promise((resolve) => {
      const timer = this.clock.after(timeoutMs, () => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        resolve(undefined);
      });
      const waiter: Waiter = (msg) => {
        timer.cancel();
        resolve(msg);
      };
      this.waiters.push(waiter);
    });
  }
}
