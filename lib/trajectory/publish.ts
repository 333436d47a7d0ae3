import { services } from '../app/services.ts';
import { errorResponse, json, unavailable } from '../http/errors.ts';
import { ros } from '../ros/context.ts';
import { durationFromS, type JointTrajectoryMsg } from '../ros/messages.ts';
import { type ApiTrajectoryPoint, firstNonIncreasingTime } from './points.ts';

export { type ApiTrajectoryPoint, firstNonIncreasingTime, limitViolations } from './points.ts';

/**
 * Publishes the points as a JointTrajectory on the controller topic and answers
 * `{"status": "sent", "points": N, ...}`: publication only, not execution. While a motion goal or a
 * sequence holds the arm this is a 409; a trajectory still executing is preempted, as the
 * joint trajectory controller does.
 */
export async function publishPoints(points: readonly ApiTrajectoryPoint[], source: string, extra: Record<string, string> = {}): Promise<Response> {
  const { arbiter, trajectoryLog } = services();
  const lease = arbiter.acquire('trajectory', 'a trajectory is being sent', ['trajectory']);
  if (!lease.ok) return errorResponse({ kind: 'busy', detail: lease.error });
  try {
    const context = ros();
    const topic = context.endpoints.interfaces.trajectory.name;
    const msg: JointTrajectoryMsg = {
      header: { stamp: { sec: 0, nanosec: 0 }, frame_id: '' },
      joint_names: [...context.endpoints.joint_names],
      points: points.map((p) => ({
        positions: [...p.positions],
        velocities: p.velocities ? [...p.velocities] : [],
        accelerations: [],
        effort: [],
        time_from_start: durationFromS(p.time_from_start),
      })),
    };
    const lastTime = points.at(-1)?.time_from_start ?? 0;
    trajectoryLog.push(`publishing ${points.length} points (${lastTime} s) from ${source} on ${topic}`);
    const published = await context.publishTrajectory(msg);
    if (!published.ok) {
      trajectoryLog.push(`publication failed: ${published.error.message}`);
      return errorResponse(unavailable(published.error));
    }
    const nonIncreasing = firstNonIncreasingTime(points);
    const warning =
      nonIncreasing >= 0
        ? { warning: `time_from_start does not increase at point ${nonIncreasing}; the joint trajectory controller refuses such a trajectory (see GET /trajectory/logs)` }
        : {};
    return json({ status: 'sent', points: points.length, ...extra, times_increasing: nonIncreasing < 0, ...warning });
  } finally {
    lease.value.release();
  }
}
