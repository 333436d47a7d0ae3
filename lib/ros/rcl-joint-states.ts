/**
 * The joint-state topic on the rclnodejs context: each message taken by name (J1..J7 when every joint is there), kept
 * in the shared cache with the callers waiting for the next, and handed on to the recorded topics; and what the
 * motions read of it: a state fresh enough to act on, the next one, whether the arm rests.
 */
import type { Clock } from '../clock.ts';
import { RestWatch, restsAt } from './at-rest.ts';
import type { ReceivedJointState } from './context.ts';
import { jointStateByName, jointStateFromRos } from './convert.ts';
import type { EndpointsFile } from '../settings/endpoints.ts';
import { JointStateCache } from './joint-state-cache.ts';
import type { JointStateMsg } from './messages.ts';

/** How long a motion's answer waits for a joint state received after it (a few periods of a 100 Hz topic). */
export const FRESH_STATE_MS = 50;

/** A joint state older than this (ms) does not tell whether the arm is at rest (as the stop's own freshness rule). */
export const REST_STATE_MS = 500;

export class RclJointStates {
  readonly #names: readonly string[];
  readonly #topic: string;
  readonly #clock: Pick<Clock, 'nowMs' | 'after'>;
  /** The topic's cache: the context's joint-state port. */
  readonly cache: JointStateCache;
  readonly #log: (line: string) => void;
  /** Each message as received (not reordered): the recorded topics take it. */
  readonly #onReceived: (msg: JointStateMsg) => void;
  #malformedLogged = false;

  constructor(
    endpoints: EndpointsFile,
    clock: Pick<Clock, 'nowMs' | 'after'>,
    log: (line: string) => void,
    onReceived: (msg: JointStateMsg) => void,
  ) {
    this.#names = endpoints.joint_names;
    this.#topic = endpoints.interfaces.joint_states.name;
    this.#clock = clock;
    this.cache = new JointStateCache(clock, endpoints);
    this.#log = log;
    this.#onReceived = onReceived;
  }

  /** The subscription's callback: one raw message of the joint-state topic. */
  receive(raw: unknown): void {
    const received = jointStateFromRos(raw);
    if (!received.ok) {
      if (!this.#malformedLogged) this.#log(`ignoring malformed joint states on ${this.#topic}: ${received.error}`);
      this.#malformedLogged = true;
      return;
    }
    // In J1..J7 order when every joint is there; otherwise as received, so a read names the missing joints.
    const ordered = jointStateByName(received.value, this.#names);
    this.cache.put(ordered.ok ? ordered.value : received.value);
    this.#onReceived(received.value);
  }

  /** The latest joint state received and when; undefined before the first. */
  get latest(): ReceivedJointState | undefined {
    return this.cache.latest;
  }

  /** The next joint state to arrive, or undefined when none comes within `timeoutMs`. */
  next(timeoutMs: number): Promise<JointStateMsg | undefined> {
    return this.cache.next(timeoutMs);
  }

  /** The latest joint state in the endpoints' joint order (any age), or undefined. */
  latestInOrder(): JointStateMsg | undefined {
    return this.inOrder(this.latest?.msg);
  }

  /** The next joint state in the endpoints' joint order, or undefined (none within `timeoutMs`, or joints missing). */
  async nextInOrder(timeoutMs: number): Promise<JointStateMsg | undefined> {
    return this.inOrder(await this.next(timeoutMs));
  }

  /** The latest joint state in the endpoints' joint order if at most `maxAgeMs` old, else undefined. */
  fresh(maxAgeMs = REST_STATE_MS): JointStateMsg | undefined {
    const latest = this.latest;
    if (!latest || this.#clock.nowMs() - latest.receivedAtMs > maxAgeMs) return undefined;
    return this.inOrder(latest.msg);
  }

  /**
   * The arm rests at `target` by a joint state of the last {@link FRESH_STATE_MS} (lib/ros/at-rest.ts); when the latest
   * is older than that but the topic is alive (a state within {@link REST_STATE_MS}), by the next one to arrive: a
   * late topic (a loaded machine, a slow network) delays the answer rather than turning it into a goal to the stack.
   */
  async restsAt(target: readonly number[]): Promise<boolean> {
    let state = this.fresh(FRESH_STATE_MS);
    if (state === undefined && this.fresh(REST_STATE_MS) !== undefined) state = await this.nextInOrder(REST_STATE_MS);
    return state !== undefined && restsAt(state.position, state.velocity, target);
  }

  /**
   * A motion's answer once a joint state received after it has arrived (at most {@link FRESH_STATE_MS}):
   * the stack answers when its controller is done, and its /joint_states may lag that by a period, so a
   * read right after the answer would show the arm short of its goal. Found on a real graph.
   */
  async after<T>(answer: T): Promise<T> {
    await this.next(FRESH_STATE_MS);
    return answer;
  }

  /** Waits (at most `timeoutMs`, or until `signal`) for joint states that say the arm rests (lib/ros/at-rest.ts). */
  async waitAtRest(timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    const deadline = this.#clock.nowMs() + timeoutMs;
    const rest = new RestWatch();
    while (this.#clock.nowMs() < deadline && !signal?.aborted) {
      const msg = await this.next(200);
      if (!msg) continue;
      const state = jointStateByName(msg, this.#names);
      if (state.ok && rest.observe(this.#clock.nowMs(), state.value.position, state.value.velocity)) return true;
    }
    return false;
  }

  private inOrder(msg: JointStateMsg | undefined): JointStateMsg | undefined {
    const state = msg ? jointStateByName(msg, this.#names) : undefined;
    return state?.ok ? state.value : undefined;
  }
}
