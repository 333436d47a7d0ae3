import { type Clock, systemClock } from '../clock.ts';
import { err, ok, type Result } from '../result.ts';
import type { GoalOptions, InterfaceUnavailable } from './context.ts';
import { feedbackStateFromRos, motionResultFromRos } from './convert.ts';
import type { EndpointsFile } from '../settings/endpoints.ts';
import type { MotionResultMsg, TriggerResponse } from './messages.ts';
import { type Iface, type RclCalls, unavailable } from './rcl-calls.ts';
import { GOAL_STATUS, type RclActionClient, type RclGoalHandle } from './rclnodejs-api.ts';
import { ResumeGate } from './resume-gate.ts';
import { watchServer } from './server-watch.ts';
import { reasonOf, settle } from './settle.ts';

/** A motion goal or named-pose call in flight. */
interface InFlight {
  readonly name: string;
  readonly abort: AbortController;
  handle?: RclGoalHandle;
  /** Resolves once the action server answered the cancel request (or did not within server_wait_s). */
  cancelled?: Promise<void>;
  /** Aborted by the stop service call, which stops the stack itself. */
  byStop?: boolean;
  /** Aborted by its time limit. */
  timedOut?: boolean;
  /** A FollowJointTrajectory goal (a trajectory sent with wait), not a motion the stack plans. */
  readonly trajectory?: boolean;
  /** Aborted by a pause: the goal waits for a resume and is sent again. */
  paused?: boolean;
  /**
   * An accepted trajectory goal whose trajectory a hold point on the controller's topic replaced (a stop's): the
   * controller ends the goal at the hold point by itself, so its abort sends no cancel (on a cancel,
   * joint_trajectory_controller holds where the arm is at once, without braking).
   */
  heldByHoldPoint?: boolean;
  /** Resolves once this attempt is over (its goal answered, refused, or cancelled with the cancel confirmed). */
  readonly over: Promise<void>;
}

/** A motion goal's attempt that a pause ended (cancelled on the stack, to be sent again on resume). */
const PAUSED = Symbol('paused');

/** A goal to send: fixed, or built at each sending (the speed override in force then). */
export type GoalBody = object | (() => object);

/** How a FollowJointTrajectory goal ended, as the context maps it to an outcome. */
export type TrajectoryGoalEnd =
  | { readonly kind: 'rejected' }
  | { readonly kind: 'result'; readonly status: number; readonly result: unknown }
  | { readonly kind: 'aborted'; readonly reason: string; readonly by: 'caller' | 'stop' | 'timeout' };

/**
 * The motion goals of the rclnodejs context: each runs under the motion timeout and can be
 * aborted by its caller or by stop; an aborted action goal is cancelled on its server, and the
 * answer is success false with the reason (as the simulator answers).
 */
export class RclGoals {
  private readonly calls: RclCalls;
  private readonly timeouts: EndpointsFile['timeouts'];
  private readonly log: (line: string) => void;
  /** The motion timeout's clock: the context's (a stepped one in tests, as the simulator's motion deadline is). */
  private readonly clock: Clock;
  private readonly inFlight = new Set<InFlight>();
  /** Paused motion goals waiting for a resume. */
  private readonly gate = new ResumeGate();
  /** Between a pause and the resume: a motion goal waits before it is sent. */
  private pausing = false;

  constructor(
    calls: RclCalls,
    timeouts: EndpointsFile['timeouts'],
    log: (line: string) => void,
    clock: Clock = systemClock,
  ) {
    this.calls = calls;
    this.timeouts = timeouts;
    this.log = log;
    this.clock = clock;
  }

  /** Goals and named-pose calls in flight, paused ones included. */
  get size(): number {
    return this.inFlight.size + this.gate.size;
  }

  /** The motion goals and named-pose calls in flight or paused, trajectory goals left out. */
  get motions(): number {
    let n = this.gate.size;
    for (const flight of this.inFlight) if (!flight.trajectory) n++;
    return n;
  }

  /** The motion goals a stop aborted whose cancel their server has not confirmed yet (counted in {@link motions}). */
  get stopping(): number {
    let n = 0;
    for (const flight of this.inFlight) if (!flight.trajectory && flight.byStop) n++;
    return n;
  }

  /** Motion goals paused and waiting for a resume. */
  get paused(): number {
    return this.gate.size;
  }

  /**
   * Pauses the motion goals in flight (trajectory goals left out): each is cancelled on the stack
   * (a named-pose call: the stop service), which brakes the arm, and its request waits for
   * {@link resumeMotions}; a motion goal about to be sent waits without being sent. Resolves once
   * every attempt in flight is over, so nothing this pause caught is still on its way to the stack:
   * a goal being sent is cancelled once its server took it (bounded by server_wait_s twice), an
   * accepted one once its server confirmed the cancel. Returns how many were paused.
   */
  async pauseMotions(): Promise<number> {
    this.pausing = true;
    const flights = [...this.inFlight].filter((f) => !f.trajectory && !f.abort.signal.aborted);
    for (const flight of flights) {
      flight.paused = true;
      flight.abort.abort('paused');
    }
    await Promise.all(flights.map((f) => f.over));
    return flights.length;
  }

  /** Sends every paused goal again; returns how many. */
  resumeMotions(): number {
    this.pausing = false;
    return this.gate.resume();
  }

  private track(
    name: string,
    options: GoalOptions,
    timeoutS = this.timeouts.motion_s,
    timeoutReason = `timed out after ${timeoutS} s: the motion was cancelled`,
    trajectory = false,
  ): { flight: InFlight; dispose: () => void } {
    const abort = new AbortController();
    let ended: () => void = () => undefined;
    const over = new Promise<void>((resolve) => {
      ended = resolve;
    });
    const flight: InFlight = { name, abort, trajectory, over };
    const timer = this.clock.after(timeoutS * 1000, () => {
      flight.timedOut = true;
      abort.abort(timeoutReason);
    });
    const forward = () => abort.abort(options.signal ? reasonOf(options.signal) : 'cancelled');
    abort.signal.addEventListener(
      'abort',
      () => {
        if (flight.handle) flight.cancelled = this.cancel(flight.handle, name, flight);
      },
      { once: true },
    );
    if (options.signal?.aborted) forward();
    else options.signal?.addEventListener('abort', forward, { once: true });
    // Paused meanwhile (a pause between the caller's check and here): the goal is not sent, it waits.
    if (this.pausing && !trajectory && !abort.signal.aborted) {
      flight.paused = true;
      abort.abort('paused');
    }
    this.inFlight.add(flight);
    return {
      flight,
      dispose: () => {
        timer.cancel();
        options.signal?.removeEventListener('abort', forward);
        this.inFlight.delete(flight);
        ended();
      },
    };
  }

  private async cancel(handle: RclGoalHandle, name: string, flight?: InFlight): Promise<void> {
    // Sent on the next turn: a stop aborts the goals, then publishes its hold point in the same turn, and the hold
    // point must reach the controller first (on a cancel, joint_trajectory_controller holds where the arm is at once).
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (flight?.heldByHoldPoint) {
      this.log(
        `trajectory goal on ${name}: not cancelled, the hold point on the controller's topic replaced its trajectory and the controller ends it there (a cancel would hold the arm where it is at once, without braking)`,
      );
      return;
    }
    const waitS = this.timeouts.server_wait_s;
    const outcome = await settle(handle.cancelGoal(), waitS * 1000);
    if (outcome.kind === 'timeout') this.log(`cancel request on ${name}: no answer within ${waitS} s`);
    else if (outcome.kind === 'error') this.log(`cancel request on ${name} failed: ${outcome.message}`);
  }

  /**
   * A trajectory went out on the controller's topic, which replaces what the controller executes (an accepted
   * trajectory goal stays active and is judged on it): `hold` true for a hold point, false for any other.
   */
  topicTrajectory(hold: boolean): void {
    for (const flight of this.inFlight) if (flight.trajectory && flight.handle) flight.heldByHoldPoint = hold;
  }

  /** Aborts everything in flight with `reason` and waits for the servers to confirm the cancels; returns how many. */
  async cancelAll(reason: string): Promise<number> {
    const { count, confirmed } = this.abortAll(reason);
    await confirmed;
    return count;
  }

  /**
   * Aborts everything in flight with `reason` now (each accepted goal's cancel request goes out on the next turn):
   * how many, and what resolves once the servers confirmed the cancels (a cancel not answered within
   * server_wait_s, or failed, is logged and resolves it too).
   */
  abortAll(reason: string): { readonly count: number; readonly confirmed: Promise<void> } {
    const flights = [...this.inFlight];
    for (const flight of flights) {
      flight.byStop = true;
      flight.abort.abort(reason);
    }
    this.pausing = false;
    const paused = this.gate.end(reason);
    const confirmed = Promise.all(flights.map((f) => f.cancelled ?? Promise.resolve())).then(() => undefined);
    return { count: flights.length + paused, confirmed };
  }

  /**
   * Runs `attempt` until it ends other than by a pause: after a pause, waits for a resume (then
   * sends the goal again) or for the caller's abort or a stop (then answers success false with why).
   */
  private async resumable(
    iface: Iface,
    options: GoalOptions,
    attempt: () => Promise<Result<MotionResultMsg, InterfaceUnavailable> | typeof PAUSED>,
  ): Promise<Result<MotionResultMsg, InterfaceUnavailable>> {
    for (let first = true; ; first = false) {
      if (!first || !this.pausing) {
        const answer = await attempt();
        if (answer !== PAUSED) return answer;
        // Resumed while its cancel was being confirmed: the gate has already opened, go again at once.
        if (!this.pausing) {
          this.log(`goal on ${iface.name} paused and resumed: sent again from where the arm rests`);
          continue;
        }
        this.log(`goal on ${iface.name} paused: cancelled on the stack, sent again on resume`);
      } else this.log(`goal on ${iface.name} waits: the motion is paused`);
      const outcome = await this.gate.wait(options.signal);
      if (!outcome.resumed) {
        this.log(`paused goal on ${iface.name} ended: ${outcome.reason}`);
        return ok({ success: false, message: outcome.reason });
      }
      this.log(`goal on ${iface.name} resumed: sent again from where the arm rests`);
    }
  }

  /** Sends a goal and waits (server_wait_s) for the server to acknowledge it: its handle, accepted or not. */
  private async send(
    iface: Iface,
    client: RclActionClient,
    goal: object,
    feedback?: (raw: unknown) => void,
  ): Promise<Result<RclGoalHandle, InterfaceUnavailable>> {
    const waitS = this.timeouts.server_wait_s;
    const sent = await settle(feedback ? client.sendGoal(goal, feedback) : client.sendGoal(goal), waitS * 1000);
    if (sent.kind === 'value') return ok(sent.value);
    const why =
      sent.kind === 'timeout'
        ? `did not acknowledge the goal within ${waitS} s`
        : `could not take the goal: ${sent.kind === 'error' ? sent.message : sent.reason}`;
    return err(unavailable(iface.name, `action server ${iface.name} ${why}`));
  }

  /**
   * The result of an accepted goal, or how the wait ended: aborted here (stop, caller, timeout), or
   * `gone` when the action server left the graph meanwhile (its process died: no result will come).
   */
  private async result(iface: Iface, client: RclActionClient, handle: RclGoalHandle, flight: InFlight) {
    const gone = `action server ${iface.name} left the graph while its goal ran (did its process die?): the outcome is unknown; GET /robot/joint_states shows where the arm is`;
    const watch = watchServer(() => client.isActionServerAvailable(), gone);
    try {
      const outcome = await settle(
        handle.getResult(),
        Number.POSITIVE_INFINITY,
        AbortSignal.any([flight.abort.signal, watch.signal]),
      );
      if (outcome.kind === 'aborted' && watch.signal.aborted && !flight.abort.signal.aborted) {
        this.log(`goal on ${iface.name}: ${gone}`);
        return { kind: 'gone' as const, error: unavailable(iface.name, gone) };
      }
      return outcome;
    } finally {
      watch.stop();
    }
  }

  /**
   * Sends an action goal and waits for its result, feedback forwarded. A pause cancels it and a
   * resume sends it again (built again: the override in force then), from where the arm rests.
   */
  runAction(
    iface: Iface,
    goal: GoalBody,
    options: GoalOptions,
  ): Promise<Result<MotionResultMsg, InterfaceUnavailable>> {
    return this.resumable(iface, options, () =>
      this.runActionOnce(iface, typeof goal === 'function' ? goal() : goal, options),
    );
  }

  private async runActionOnce(
    iface: Iface,
    goal: object,
    options: GoalOptions,
  ): Promise<Result<MotionResultMsg, InterfaceUnavailable> | typeof PAUSED> {
    const ready = await this.calls.waitForServer(iface, 'action server', 'action');
    if (!ready.ok) return ready;
    const client = ready.value as RclActionClient;
    const { flight, dispose } = this.track(iface.name, options);
    try {
      // Aborted before it went out (a pause, the caller, a stop): nothing is sent.
      if (flight.abort.signal.aborted) {
        if (flight.paused && !flight.byStop) return PAUSED;
        return ok({ success: false, message: reasonOf(flight.abort.signal) });
      }
      const onFeedback = options.onFeedback;
      const feedback = (raw: unknown) => {
        const state = feedbackStateFromRos(raw);
        if (state && onFeedback) onFeedback(state);
      };
      const sent = await this.send(iface, client, goal, feedback);
      if (!sent.ok) return sent;
      const handle = sent.value;
      if (!handle.isAccepted()) {
        this.log(`goal on ${iface.name} rejected`);
        return ok({ success: false, message: `the action server ${iface.name} rejected the goal` });
      }
      flight.handle = handle;
      this.log(`goal on ${iface.name} accepted`);
      if (flight.abort.signal.aborted) flight.cancelled = this.cancel(handle, iface.name, flight);
      const outcome = await this.result(iface, client, handle, flight);
      if (outcome.kind === 'gone') return err(outcome.error);
      if (outcome.kind === 'aborted') {
        await flight.cancelled;
        if (flight.paused && !flight.byStop) return PAUSED;
        this.log(`goal on ${iface.name} cancelled: ${outcome.reason}`);
        return ok({ success: false, message: outcome.reason });
      }
      if (outcome.kind !== 'value') {
        return err(
          unavailable(
            iface.name,
            `action server ${iface.name} gave no result: ${outcome.kind === 'error' ? outcome.message : 'timed out'}`,
          ),
        );
      }
      const parsed = motionResultFromRos(outcome.value);
      let result: MotionResultMsg = parsed.ok
        ? parsed.value
        : { success: false, message: `malformed result from ${iface.name}: ${parsed.error}` };
      if (handle.status === GOAL_STATUS.canceled || handle.status === GOAL_STATUS.aborted) {
        const how = handle.status === GOAL_STATUS.canceled ? 'cancelled' : 'aborted';
        result = { success: false, message: result.message || `the goal was ${how} by ${iface.name}` };
      }
      this.log(
        `goal on ${iface.name} ${result.success ? 'succeeded' : 'failed'}${result.message ? `: ${result.message}` : ''}`,
      );
      return ok(result);
    } finally {
      dispose();
    }
  }

  /**
   * Sends a FollowJointTrajectory goal and waits for how it ends: rejected, its result (with the
   * goal's final status), or aborted here (by the caller's signal, by stop, or after `timeoutS`),
   * in which case the goal is cancelled on the server (the controller stops and holds).
   */
  async runTrajectoryGoal(
    iface: Iface,
    goal: object,
    options: { readonly signal?: AbortSignal; readonly timeoutS: number },
  ): Promise<Result<TrajectoryGoalEnd, InterfaceUnavailable>> {
    const ready = await this.calls.waitForServer(iface, 'action server', 'action');
    if (!ready.ok) return ready;
    const client = ready.value as RclActionClient;
    const timeoutReason = `no outcome within ${options.timeoutS.toFixed(3)} s: the trajectory goal was cancelled`;
    const goalOptions: GoalOptions = options.signal ? { signal: options.signal } : {};
    const { flight, dispose } = this.track(iface.name, goalOptions, options.timeoutS, timeoutReason, true);
    try {
      const sent = await this.send(iface, client, goal);
      if (!sent.ok) return sent;
      const handle = sent.value;
      if (!handle.isAccepted()) {
        this.log(`trajectory goal on ${iface.name} rejected`);
        return ok({ kind: 'rejected' });
      }
      flight.handle = handle;
      this.log(`trajectory goal on ${iface.name} accepted`);
      if (flight.abort.signal.aborted) flight.cancelled = this.cancel(handle, iface.name, flight);
      const outcome = await this.result(iface, client, handle, flight);
      if (outcome.kind === 'gone') return err(outcome.error);
      if (outcome.kind === 'aborted') {
        await flight.cancelled;
        const by = flight.timedOut ? 'timeout' : flight.byStop ? 'stop' : 'caller';
        this.log(`trajectory goal on ${iface.name} cancelled: ${outcome.reason}`);
        return ok({ kind: 'aborted', reason: outcome.reason, by });
      }
      if (outcome.kind !== 'value')
        return err(
          unavailable(
            iface.name,
            `action server ${iface.name} gave no result: ${outcome.kind === 'error' ? outcome.message : 'timed out'}`,
          ),
        );
      return ok({ kind: 'result', status: handle.status, result: outcome.value });
    } finally {
      dispose();
    }
  }

  /**
   * Calls a motion service (MoveToNamedPose) and waits for its answer. A service call cannot be
   * cancelled: on the motion timeout (or the caller's abort) `stop` stops the stack's motion.
   */
  runService(
    iface: Iface,
    request: GoalBody,
    options: GoalOptions,
    stop: () => Promise<Result<TriggerResponse, InterfaceUnavailable>>,
  ): Promise<Result<MotionResultMsg, InterfaceUnavailable>> {
    return this.resumable(iface, options, () =>
      this.runServiceOnce(iface, typeof request === 'function' ? request() : request, options, stop),
    );
  }

  private async runServiceOnce(
    iface: Iface,
    request: object,
    options: GoalOptions,
    stop: () => Promise<Result<TriggerResponse, InterfaceUnavailable>>,
  ): Promise<Result<MotionResultMsg, InterfaceUnavailable> | typeof PAUSED> {
    const { flight, dispose } = this.track(iface.name, options);
    try {
      // Paused before it went out: nothing is called, it waits.
      if (flight.paused && !flight.byStop) return PAUSED;
      const answer = await this.calls.request(iface, 'service', request, Number.POSITIVE_INFINITY, flight.abort.signal);
      if (!answer.ok) return answer;
      const outcome = answer.value;
      if (outcome.kind === 'aborted') {
        if (!flight.byStop) await stop();
        if (flight.paused && !flight.byStop) return PAUSED;
        this.log(`call of ${iface.name} abandoned: ${outcome.reason}`);
        return ok({ success: false, message: outcome.reason });
      }
      if (outcome.kind !== 'value')
        return err(
          unavailable(
            iface.name,
            `service ${iface.name} failed: ${outcome.kind === 'error' ? outcome.message : 'timed out'}`,
          ),
        );
      const parsed = motionResultFromRos(outcome.value);
      if (!parsed.ok)
        return err(unavailable(iface.name, `service ${iface.name} gave a malformed response: ${parsed.error}`));
      this.log(
        `call of ${iface.name} ${parsed.value.success ? 'succeeded' : 'failed'}${parsed.value.message ? `: ${parsed.value.message}` : ''}`,
      );
      return parsed;
    } finally {
      dispose();
    }
  }
}
