import { type ApiError, unavailable } from '../core/errors.ts';
import { WATCH_NEEDS, watchCall } from './motion.ts';
import type { OpContext } from '../core/operation.ts';
import { err, ok, type Result } from '../result.ts';
import type { JointTrajectoryMsg, JointTrajectoryPointMsg, TrajectoryOutcomeKind } from '../ros/messages.ts';

import { type MotionState, motionStateOfOutcome } from '../events/bus.ts';
import { firstNonIncreasing } from '../trajectory/points.ts';

export type { ApiTrajectoryPoint } from '../trajectory/points.ts';

/** What a publication answers: publication only, not execution. */
export interface TrajectorySent {
  readonly status: 'sent';
  readonly points: number;
  readonly times_increasing: boolean;
  readonly warning?: string;
  readonly file?: string;
  /** The robot stack's name of `file`. */
  readonly filename?: string;
  /** Seconds from the start to the last point, as published; time_scale is always 1 (times are never stretched). */
  readonly duration: number;
  readonly time_scale: 1;
  readonly ignored_columns?: readonly string[];
  /** With wait: what the controller did (finished, refused, stopped, preempted, timeout), why, and when. */
  readonly outcome?: TrajectoryOutcomeKind;
  readonly message?: string;
  readonly duration_s?: number;
}

/** Points ready for the controller topic: the message points and their times (s). */
export interface PublishablePoints {
  readonly messages: JointTrajectoryPointMsg[];
  readonly times: ArrayLike<number>;
}

/** The services a trajectory's publication reaches: declare them in the operation's `needs`. */
export const PUBLISH_NEEDS = [...WATCH_NEEDS, 'arbiter', 'trajectoryLog', 'events'] as const;
type PublishNeed = (typeof PUBLISH_NEEDS)[number];

/**
 * Publishes the points as a JointTrajectory on the controller topic and answers
 * `{"status": "sent", "points": N, ...}`: publication only, not execution. While a motion goal or a
 * sequence holds the arm this is a 409; a trajectory still executing is preempted, as the
 * joint trajectory controller does.
 */
export async function publishPoints(
  points: PublishablePoints,
  source: string,
  extra: { readonly file?: string; readonly ignored_columns?: readonly string[] },
  ctx: OpContext<PublishNeed>,
  wait: boolean,
): Promise<Result<TrajectorySent, ApiError>> {
  const { arbiter, trajectoryLog, events } = ctx.services;
  const lease = arbiter.acquire('trajectory', 'a trajectory is being sent', ['trajectory'], ctx.arrivedAtStop);
  if (!lease.ok) return err(lease.error);
  try {
    const context = ctx.ros;
    const topic = context.endpoints.interfaces.trajectory.name;
    const msg: JointTrajectoryMsg = {
      header: { stamp: { sec: 0, nanosec: 0 }, frame_id: '' },
      joint_names: [...context.endpoints.joint_names],
      points: points.messages,
    };
    const count = points.messages.length;
    const lastTime = points.times[count - 1] ?? 0;
    trajectoryLog.push(`publishing ${count} points (${lastTime} s) from ${source} on ${topic}`);
    const { times } = points;
    const nonIncreasing = firstNonIncreasing(times.length, (i) => times[i] ?? 0);
    const sent = {
      status: 'sent',
      points: count,
      ...extra,
      ...(extra.file !== undefined ? { filename: extra.file } : {}),
      duration: lastTime,
      time_scale: 1,
      times_increasing: nonIncreasing < 0,
      ...(nonIncreasing >= 0
        ? {
            warning: `time_from_start does not increase at point ${nonIncreasing}; the joint trajectory controller refuses such a trajectory (see {op:get_trajectory_logs})`,
          }
        : {}),
    } as const;
    const motionId = events?.nextMotionId() ?? 0;
    const motion = (state: MotionState, message: string) =>
      events?.publish('motion', { id: motionId, kind: 'trajectory', state, message });
    if (wait) {
      // The lease is held until the controller's outcome: a stop revokes it, which stops the trajectory.
      lease.value.describe(`a trajectory of ${count} points is executing`);
      const done = watchCall(ctx, () => `executing ${count} points`, lastTime);
      motion('started', `executing ${count} points (${lastTime} s) from ${source}`);
      try {
        const outcome = await context.executeTrajectory(msg, { signal: lease.value.signal });
        if (!outcome.ok) {
          trajectoryLog.push(`execution failed: ${outcome.error.message}`);
          motion('failed', outcome.error.message);
          return err(unavailable(outcome.error));
        }
        trajectoryLog.push(`outcome: ${outcome.value.outcome} (${outcome.value.message})`);
        motion(motionStateOfOutcome(outcome.value.outcome), outcome.value.message);
        return ok({ ...sent, ...outcome.value });
      } finally {
        done();
      }
    }
    const published = await context.publishTrajectory(msg);
    if (!published.ok) {
      trajectoryLog.push(`publication failed: ${published.error.message}`);
      return err(unavailable(published.error));
    }
    // Without wait the controller's outcome is not followed: its account is in the trajectory log.
    motion(
      'started',
      `published ${count} points (${lastTime} s) from ${source}; the controller's outcome is in the trajectory log`,
    );
    return ok(sent);
  } finally {
    lease.value.release();
  }
}
