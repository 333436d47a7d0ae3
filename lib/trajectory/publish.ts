import { services } from '../app/services.ts';
import { type ApiError, errorResponse, json, unavailable, type ValidationIssue } from '../http/errors.ts';
import type { JointLimits } from '../robot/limits.ts';
import { ros } from '../ros/context.ts';
import { durationFromS, type JointTrajectoryMsg } from '../ros/messages.ts';

/** A trajectory point as the API takes it: 7 angles (rad) and seconds from the start. */
export interface ApiTrajectoryPoint {
  readonly positions: readonly number[];
  readonly time_from_start: number;
}

const MAX_LIMIT_ISSUES = 20;

/**
 * The limit violations of `points` (at most 20), each located by `locOf(point, joint)` and
 * naming the point, joint, value and bounds; undefined when all are inside.
 */
export function limitViolations(
  points: readonly ApiTrajectoryPoint[],
  limits: JointLimits,
  locOf: (point: number, joint: number) => (string | number)[],
  labelOf: (point: number) => string = (i) => `point ${i}`,
): ApiError | undefined {
  const issues: ValidationIssue[] = [];
  points.forEach((point, i) => {
    point.positions.forEach((value, j) => {
      const min = limits.minRad[j] ?? 0;
      const max = limits.maxRad[j] ?? 0;
      if (issues.length < MAX_LIMIT_ISSUES && (value < min || value > max)) {
        issues.push({ loc: locOf(i, j), msg: `${labelOf(i)}: ${limits.jointNames[j]} = ${value} rad is outside its limits [${min}, ${max}]`, type: 'limit' });
      }
    });
  });
  const [first, ...rest] = issues;
  return first ? { kind: 'validation', issues: [first, ...rest] } : undefined;
}

/** Index of the first point whose time does not increase over the previous one, or -1. */
export function firstNonIncreasingTime(points: readonly ApiTrajectoryPoint[]): number {
  for (let i = 1; i < points.length; i++) if (!((points[i]?.time_from_start ?? 0) > (points[i - 1]?.time_from_start ?? 0))) return i;
  return -1;
}

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
      points: points.map((p) => ({ positions: [...p.positions], velocities: [], accelerations: [], effort: [], time_from_start: durationFromS(p.time_from_start) })),
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
