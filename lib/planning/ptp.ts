import type { JointLimits } from '../robot/limits.ts';
import { type MotionScales, scaledJointLimits } from './limits.ts';
import { profileSampleTimes, sampleTrapezoid, trapezoid } from './profile.ts';
import type { JointTrajectory, TrajectoryPoint } from './trajectory.ts';

/** Sampling period of planned trajectories (s). */
export const PLAN_DT_S = 0.004;

/**
 * Pilz-style PTP: a straight line in joint space on which all joints start and stop together,
 * with a trapezoidal profile. The path parameter's bounds are the tightest of the joints'
 * (v_i / |dq_i|, a_i / |dq_i|), which makes it the time-optimal synchronized profile under the
 * scaled limits. Samples every {@link PLAN_DT_S} plus the phase boundaries, with positions and
 * velocities: cubic interpolation between them reproduces each phase exactly, whereas
 * accelerations (discontinuous at the boundaries) would make a quintic overshoot.
 */
export function planPtp(startRad: readonly number[], goalRad: readonly number[], limits: JointLimits, scales: MotionScales): JointTrajectory {
  const { vMax, aMax } = scaledJointLimits(limits, scales);
  const delta = goalRad.map((g, i) => g - (startRad[i] ?? 0));
  let vS = Number.POSITIVE_INFINITY;
  let aS = Number.POSITIVE_INFINITY;
  delta.forEach((d, i) => {
    const m = Math.abs(d);
    if (m < 1e-12) return;
    vS = Math.min(vS, (vMax[i] ?? 0) / m);
    aS = Math.min(aS, (aMax[i] ?? 0) / m);
  });
  const names = limits.jointNames;
  if (!Number.isFinite(vS)) return { jointNames: names, points: [{ positions: [...goalRad], velocities: delta.map(() => 0), timeFromStartS: 0 }] };
  const profile = trapezoid(1, vS, aS);
  const points: TrajectoryPoint[] = profileSampleTimes(profile, PLAN_DT_S).map((t) => {
    const { s, v } = sampleTrapezoid(profile, t);
    return { positions: delta.map((d, i) => (startRad[i] ?? 0) + d * s), velocities: delta.map((d) => d * v), timeFromStartS: t };
  });
  const last = points.at(-1);
  if (last) points[points.length - 1] = { ...last, positions: [...goalRad] };
  return { jointNames: names, points };
}
