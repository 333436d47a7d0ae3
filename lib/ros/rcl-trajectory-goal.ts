/**
 * A trajectory executed through the controller's FollowJointTrajectory action on the rclnodejs context, followed in
 * plan time: a pause, a resume or the override sends the re-timed rest as a new goal (the controller replaces the
 * old one), and the request waits on that one instead; a stop ends the wait.
 */
import { ok, type Result } from '../result.ts';
import type { Clock } from '../clock.ts';
import { trajectoryGoalOutcome } from './answers.ts';
import type { InterfaceUnavailable, TrajectoryWaitOptions } from './context.ts';
import { followJointTrajectoryGoalToRos, followJointTrajectoryResultFromRos } from './convert.ts';
import type { EndpointsFile } from '../settings/endpoints.ts';
import { FJT_SUCCESSFUL, type JointTrajectoryMsg, secondsOf, type TrajectoryOutcome } from './messages.ts';
import type { RclGoals, TrajectoryGoalEnd } from './rcl-goals.ts';
import type { RclJointStates } from './rcl-joint-states.ts';
import type { RclTrajectoryChannel } from './rcl-trajectory-channel.ts';
import { GOAL_STATUS } from './rclnodejs-api.ts';
import type { RetimedPath } from './retimed-path.ts';
import { reasonOf } from './settle.ts';

/** A trajectory goal a request waits on. */
export interface GoalRun {
  readonly path: RetimedPath;
  /** The request's signal or a stop. */
  readonly signal: AbortSignal;
  readonly stop: AbortController;
  /** The re-timed rest sent as a new goal, which the request waits on next. */
  next: Promise<Result<TrajectoryGoalEnd, InterfaceUnavailable>> | undefined;
  /** Wakes the request waiting at rest after a pause (a resume sent `next`). */
  wake: (() => void) | undefined;
}

/** What the trajectory goal needs of the context it is part of. */
export interface TrajectoryGoalPorts {
  readonly endpoints: EndpointsFile;
  readonly clock: Pick<Clock, 'nowMs'>;
  readonly goals: RclGoals;
  readonly channel: RclTrajectoryChannel;
  readonly jointStates: RclJointStates;
  /** An empty trajectory goes to the topic instead (a hold point where the arm is). */
  publishTrajectory(msg: JointTrajectoryMsg): Promise<Result<void, InterfaceUnavailable>>;
}

export class RclTrajectoryGoal {
  readonly #ports: TrajectoryGoalPorts;
  /** The FollowJointTrajectory goal a request waits on, followed in plan time. */
  #run: GoalRun | undefined;

  constructor(ports: TrajectoryGoalPorts) {
    this.#ports = ports;
  }

  /**
   * Executes a trajectory through the controller's FollowJointTrajectory action
   * (`interfaces.follow_joint_trajectory`) and maps how the goal ended to an outcome: rejected ->
   * refused; otherwise as {@link trajectoryGoalOutcome} says (a newer goal -> preempted, path
   * tolerance -> stopped, ...); cancelled here by `options.signal` or stop -> stopped, by the
   * wait's limit -> timeout. An empty trajectory (which the controller rejects as a goal) goes to
   * publishTrajectory, which holds the arm where it is, and answers stopped, as the simulator does.
   */
  async execute(
    msg: JointTrajectoryMsg,
    options: TrajectoryWaitOptions = {},
  ): Promise<Result<TrajectoryOutcome, InterfaceUnavailable>> {
    const { endpoints, clock, goals, channel } = this.#ports;
    const iface = endpoints.interfaces.follow_joint_trajectory;
    const startedMs = clock.nowMs();
    const answer = (outcome: TrajectoryOutcome['outcome'], message: string): Result<TrajectoryOutcome, never> =>
      ok({ outcome, message, duration_s: Math.round(clock.nowMs() - startedMs) / 1000 });
    if (options.signal?.aborted)
      return answer(
        'stopped',
        `${typeof options.signal.reason === 'string' ? options.signal.reason : 'stopped'}: nothing was sent`,
      );
    // The controller rejects an empty goal; on its topic an empty trajectory means stop and hold.
    if (msg.points.length === 0) {
      const published = await this.#ports.publishTrajectory(msg);
      return published.ok ? answer('stopped', 'an empty trajectory: the controller stops and holds') : published;
    }
    // The controller replaces what it executes: a topic trajectory followed before is gone.
    channel.forgetPath();
    const path = channel.isHoldPoint(msg) ? undefined : channel.pathOf(msg);
    const timed = channel.underOverride(msg, path, iface.name);
    if (!timed.ok) return timed;
    msg = timed.value;
    const last = msg.points.at(-1);
    const durationS = last ? secondsOf(last.time_from_start) : 0;
    const timeoutS = options.timeoutS ?? durationS + endpoints.timeouts.motion_s;
    const previousEnd = channel.endsAtMs;
    const endsAtMs = clock.nowMs() + durationS * 1000;
    channel.endsAtMs = endsAtMs;
    // Only while no newer trajectory has been sent since: its end is then the one that counts.
    const settleEnd = (value: number) => {
      if (channel.endsAtMs === endsAtMs) channel.endsAtMs = value;
    };
    const stopped = new AbortController();
    const signal = options.signal ? AbortSignal.any([options.signal, stopped.signal]) : stopped.signal;
    const run: GoalRun | undefined = path
      ? { path, signal, stop: stopped, next: undefined, wake: undefined }
      : undefined;
    this.#run = run;
    let ended: Result<TrajectoryGoalEnd, InterfaceUnavailable>;
    try {
      let current = goals.runTrajectoryGoal(iface, followJointTrajectoryGoalToRos(msg), { signal, timeoutS });
      for (;;) {
        ended = await current;
        const next = run?.next;
        if (run && next) {
          // Replaced by its own re-timed rest (a pause, a resume, the override): wait on that goal instead.
          run.next = undefined;
          current = next;
          continue;
        }
        if (run?.path.paused && ended.ok && ended.value.kind === 'result' && !signal.aborted) {
          // The pause's goal brought the arm to rest on the path: wait for the resume's goal, or a stop.
          const resumed = await new Promise<boolean>((resolve) => {
            const onAbort = () => resolve(false);
            if (signal.aborted) return resolve(false);
            signal.addEventListener('abort', onAbort, { once: true });
            run.wake = () => {
              signal.removeEventListener('abort', onAbort);
              resolve(true);
            };
          });
          run.wake = undefined;
          const resumedGoal = run.next;
          if (resumed && resumedGoal) {
            run.next = undefined;
            current = resumedGoal;
            continue;
          }
          ended = ok({ kind: 'aborted', reason: reasonOf(signal), by: 'stop' });
        }
        break;
      }
    } finally {
      if (this.#run === run) this.#run = undefined;
    }
    ended = await this.#ports.jointStates.after(ended);
    if (!ended.ok) {
      settleEnd(previousEnd);
      return ended;
    }
    const end = ended.value;
    if (end.kind === 'rejected') {
      // A rejected goal leaves what the controller was executing as it was.
      settleEnd(previousEnd);
      return answer(
        'refused',
        `the controller rejected the trajectory goal on ${iface.name} (joints, times or limits)`,
      );
    }
    settleEnd(0);
    if (end.kind === 'aborted')
      return answer(end.by === 'timeout' ? 'timeout' : 'stopped', `${end.reason}; the controller stops and holds`);
    const result = followJointTrajectoryResultFromRos(end.result);
    const { outcome, message } = trajectoryGoalOutcome({
      succeeded: end.status === GOAL_STATUS.succeeded,
      canceled: end.status === GOAL_STATUS.canceled,
      errorCode: result.ok ? result.value.error_code : FJT_SUCCESSFUL,
      errorString: result.ok ? result.value.error_string : '',
    });
    return answer(outcome, message);
  }

  /** The trajectory goal a request waits on, unless a stop or its caller ended it. */
  active(): GoalRun | undefined {
    const run = this.#run;
    return run && !run.signal.aborted ? run : undefined;
  }

  /** Sends the rest of the goal's path re-timed to `rate` as a new goal; its request waits on that one. */
  retime(run: GoalRun, rate: number): void {
    const { endpoints, clock, goals, channel } = this.#ports;
    const msg = channel.messageOf(run.path.retime(clock.nowMs(), rate));
    const durationS = secondsOf(msg.points.at(-1)?.time_from_start ?? { sec: 0, nanosec: 0 });
    channel.endsAtMs = clock.nowMs() + durationS * 1000;
    run.next = goals.runTrajectoryGoal(
      endpoints.interfaces.follow_joint_trajectory,
      followJointTrajectoryGoalToRos(msg),
      {
        signal: run.signal,
        timeoutS: durationS + endpoints.timeouts.motion_s,
      },
    );
    run.wake?.();
  }

  /** A stop: the goal's request ends (a paused one waiting for its resume too); no re-timed rest is sent after. */
  stop(reason: string): void {
    const run = this.#run;
    this.#run = undefined;
    run?.stop.abort(reason);
  }
}
