/**
 * The latest joint state a backend received, with the callers waiting for the next one: what every backend keeps of
 * its joint-state topic (the rclnodejs context and the simulator are composed of it), and the port a read of the joint
 * states takes (its answer, in the endpoints' joint order, worked out once per message as it arrives).
 */
import type { Clock } from '../clock.ts';
import { err, type Result } from '../result.ts';
import type { InterfaceUnavailable, JointStatePort, ReceivedJointState } from './context.ts';
import { inJointOrder, JOINT_STATE_WAIT_MS } from './joint-state.ts';
import type { JointStateMsg } from './messages.ts';
import type { EndpointsFile } from '../settings/endpoints.ts';

/** What the endpoints file says of the topic: the joint order a read answers in, and the name its errors say. */
export type JointOrder = Pick<EndpointsFile, 'joint_names'> & {
  readonly interfaces: { readonly joint_states: { readonly name: string } };
};

type Waiter = (msg: JointStateMsg) => void;

export class JointStateCache implements JointStatePort {
  readonly #clock: Pick<Clock, 'nowMs' | 'after'>;
  readonly #names: readonly string[];
  /** The topic's name. */
  readonly #iface: string;
  #latest: ReceivedJointState | undefined;
  /** The latest message in the joint order (or why it cannot be), as a read answers it: worked out as it arrives. */
  #answer: Result<JointStateMsg, InterfaceUnavailable> | undefined;
  #waiters = new Set<Waiter>();

  /** `clock`: the backend's clock, which stamps each message's arrival and times the waits. */
  constructor(clock: Pick<Clock, 'nowMs' | 'after'>, order: JointOrder) {
    this.#clock = clock;
    this.#names = order.joint_names;
    this.#iface = order.interfaces.joint_states.name;
  }

  /** The latest message and when it arrived; undefined before the first. */
  get latest(): ReceivedJointState | undefined {
    return this.#latest;
  }

  /** Keeps `msg` as the latest, stamped now, and hands it to every caller waiting for the next one. */
  put(msg: JointStateMsg): void {
    this.#latest = { msg, receivedAtMs: this.#clock.nowMs() };
    this.#answer = this.#inOrder(msg);
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

  /**
   * The joint state a read answers, in the joint order: the latest message if it arrived within the last
   * {@link JOINT_STATE_WAIT_MS}, otherwise the next one within as long; none is an `unavailable` error, and so is a
   * message that lacks a joint (naming it).
   */
  current(): Promise<Result<JointStateMsg, InterfaceUnavailable>> {
    const latest = this.#latest;
    const answer = this.#answer;
    if (latest && answer && this.#clock.nowMs() - latest.receivedAtMs <= JOINT_STATE_WAIT_MS)
      return Promise.resolve(answer);
    return this.next(JOINT_STATE_WAIT_MS).then((msg) =>
      msg
        ? this.#inOrder(msg)
        : err({
            kind: 'unavailable',
            iface: this.#iface,
            message: `no joint state on ${this.#iface} within ${JOINT_STATE_WAIT_MS / 1000} s: is the controller running?`,
          }),
    );
  }

  #inOrder(msg: JointStateMsg): Result<JointStateMsg, InterfaceUnavailable> {
    return inJointOrder(msg, this.#names, this.#iface);
  }
}
