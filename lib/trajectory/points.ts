/** Trajectory points as the API takes them, and the checks on them that need no arm state. Pure. */
import type { ApiError, ValidationIssue } from '../core/errors.ts';
import type { TrajectoryPoint } from '../planning/trajectory.ts';
import { describeLimitViolation, type JointLimits, jointRange, withinJointRange } from '../robot/limits.ts';

/** A trajectory point as the API takes it: 7 angles (rad) and seconds from the start; velocities when armgate filled them in. */
export interface ApiTrajectoryPoint {
  readonly positions: readonly number[];
  readonly time_from_start: number;
  readonly velocities?: readonly number[];
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
  for (let i = 0; i < points.length && issues.length < MAX_LIMIT_ISSUES; i++) {
    const positions = (points[i] as ApiTrajectoryPoint).positions;
    for (let j = 0; j < positions.length && issues.length < MAX_LIMIT_ISSUES; j++) {
      const value = positions[j] ?? 0;
      if (!withinJointRange(limits, j, value)) {
        const joint = limits.jointNames[j] ?? `joint${j + 1}`;
        issues.push({
          loc: locOf(i, j),
          msg: `${labelOf(i)}: ${describeLimitViolation({ joint, value, ...jointRange(limits, j) })}`,
          type: 'limit',
        });
      }
    }
  }
  const [first, ...rest] = issues;
  return first ? { kind: 'validation', issues: [first, ...rest] } : undefined;
}

/** Index of the first of `count` times (`timeAt(i)`) that does not increase over the previous one, or -1. */
export function firstNonIncreasing(count: number, timeAt: (i: number) => number): number {
  for (let i = 1; i < count; i++) if (!(timeAt(i) > timeAt(i - 1))) return i;
  return -1;
}

/** Index of the first point whose time does not increase over the previous one, or -1. */
export function firstNonIncreasingTime(points: readonly ApiTrajectoryPoint[]): number {
  return firstNonIncreasing(points.length, (i) => points[i]?.time_from_start ?? 0);
}

/** The points in the planning library's shape (seconds as timeFromStartS). */
export function toTrajectoryPoints(points: readonly ApiTrajectoryPoint[]): TrajectoryPoint[] {
  const out: TrajectoryPoint[] = new Array(points.length);
  for (let i = 0; i < points.length; i++) {
    const p = points[i] as ApiTrajectoryPoint;
    out[i] = p.velocities
      ? { positions: p.positions, velocities: p.velocities, timeFromStartS: p.time_from_start }
      : { positions: p.positions, timeFromStartS: p.time_from_start };
  }
  return out;
}
