import type { JointLimits } from '../robot/limits.ts';
import { durationFromS, type JointTrajectoryPointMsg } from './messages.ts';

/** The shortest time a hold point is given (s): never 0 s, which a position-controlled drive (FRI) takes as a step. */
export const HOLD_MIN_TIME_S = 0.1;

/** Options of {@link holdPoint}. */
export interface HoldScales {
  /** Fraction (0..1] of each joint's acceleration limit the stop may use; default 1. */
  readonly accelScale?: number;
  /** Floor of the hold point's time (s); default {@link HOLD_MIN_TIME_S}. */
  readonly minTimeS?: number;
}

/**
 * The hold point that stops the arm from its current state within the acceleration limits: one
 * trajectory point with zero velocities whose time_from_start is what the slowest joint needs to
 * come to rest at its (scaled) acceleration limit, never less than `minTimeS`:
 *
 *   T = max(minTimeS, max_j |v_j| / (accelScale * maxAcc_j))
 *
 * Its positions are where each joint comes to rest decelerating uniformly over T (q_j + v_j T / 2),
 * clamped to the position limits (where a joint cannot stop before its limit at that deceleration,
 * it is told to stop at the limit), so, unclamped, the controller's cubic from (q, v) to (q_hold, 0) in T is
 * exactly that uniform deceleration (|v_j| / T <= the limit) and never turns back. An arm at rest
 * gets its current position at `minTimeS`. Velocities missing from `velocitiesRadS` (a stack that
 * publishes none) count as 0. Pure: no clock, no I/O.
 */
export function holdPoint(
  positionsRad: readonly number[],
  velocitiesRadS: readonly number[],
  limits: JointLimits,
  scales: HoldScales = {},
): JointTrajectoryPointMsg {
  const accelScale = scales.accelScale !== undefined && scales.accelScale > 0 ? Math.min(1, scales.accelScale) : 1;
  const floorS = scales.minTimeS !== undefined && scales.minTimeS > 0 ? scales.minTimeS : HOLD_MIN_TIME_S;
  const velocity = (j: number) => {
    const v = velocitiesRadS[j] ?? 0;
    return Number.isFinite(v) ? v : 0;
  };
  let timeS = floorS;
  for (let j = 0; j < positionsRad.length; j++) {
    const a = (limits.maxAccRadS2[j] ?? Number.POSITIVE_INFINITY) * accelScale;
    timeS = Math.max(timeS, Math.abs(velocity(j)) / a);
  }
  // Whole nanoseconds (as the message carries it), rounded up so the braking never exceeds the limit.
  timeS = Math.ceil(timeS * 1e9 - 1e-6) / 1e9;
  const positions = positionsRad.map((q, j) => {
    const rest = q + (velocity(j) * timeS) / 2;
    return Math.min(limits.maxRad[j] ?? rest, Math.max(limits.minRad[j] ?? rest, rest));
  });
  return {
    positions,
    velocities: positions.map(() => 0),
    accelerations: [],
    effort: [],
    time_from_start: durationFromS(timeS),
  };
}

/** Joint speed (rad/s) below which a joint state counts as at rest (a real drive reports a little noise). */
export const REST_VELOCITY_RAD_S = 1e-3;
/** Largest distance (rad) of a moving arm's hold point from the current position (a state lags by a period). */
const HOLD_DISTANCE_RAD = 0.1;
/** Largest distance (rad) of a hold point from the position of an arm at rest (as a start point's tolerance). */
const REST_DISTANCE_RAD = 1e-3;

/**
 * Whether a published trajectory is a hold point and, if so, the seconds until the arm is at rest. A hold point is
 * one point with no or zero velocities: at the current position (within 1e-3 rad) of an arm at rest (every |v|
 * below {@link REST_VELOCITY_RAD_S}): 0 s, the arm is free at once whatever the point's time floor; or within
 * 0.1 rad of a moving arm: the point's time. Undefined for any other trajectory (a small motion of an arm at rest
 * is one) or without a current position. Pure.
 */
export function holdRestS(
  points: readonly JointTrajectoryPointMsg[],
  positionsRad: readonly number[] | undefined,
  velocitiesRadS: readonly number[],
): number | undefined {
  const point = points[0];
  if (points.length !== 1 || !point || !positionsRad || point.positions.length !== positionsRad.length)
    return undefined;
  if (point.velocities.some((v) => v !== 0)) return undefined;
  const atRest = velocitiesRadS.every((v) => Math.abs(v) <= REST_VELOCITY_RAD_S);
  const within = atRest ? REST_DISTANCE_RAD : HOLD_DISTANCE_RAD;
  if (point.positions.some((q, j) => !(Math.abs(q - (positionsRad[j] ?? Number.NaN)) <= within))) return undefined;
  if (atRest) return 0;
  return point.time_from_start.sec + point.time_from_start.nanosec / 1e9;
}
