import type { JointLimits } from '../robot/limits.ts';
import { type MotionScales, scaledJointLimits } from './limits.ts';
import { profileSampleTimes, sampleTrapezoid, type Trapezoid, trapezoid } from './profile.ts';
import type { JointTrajectory, TrajectoryPoint } from './trajectory.ts';

/** Sampling period of planned trajectories (s). */
export const PLAN_DT_S = 0.004;
/** Most samples of one PTP trajectory: a longer motion is sampled more coarsely (cubic interpolation stays exact). */
export const MAX_PTP_SAMPLES = 20_000;

/** The synchronized trapezoid of a PTP motion on the path parameter s in [0, 1], or undefined when nothing moves. */
function ptpProfile(
  startRad: readonly number[],
  goalRad: readonly number[],
  limits: JointLimits,
  scales: MotionScales,
): Trapezoid | undefined {
  const { vMax, aMax } = scaledJointLimits(limits, scales);
  let vS = Number.POSITIVE_INFINITY;
  let aS = Number.POSITIVE_INFINITY;
  goalRad.forEach((g, i) => {
    const m = Math.abs(g - (startRad[i] ?? 0));
    if (m < 1e-12) return;
    vS = Math.min(vS, (vMax[i] ?? 0) / m);
    aS = Math.min(aS, (aMax[i] ?? 0) / m);
  });
  return Number.isFinite(vS) ? trapezoid(1, vS, aS) : undefined;
}

/** Duration (s) of the PTP motion {@link planPtp} would plan, computed without sampling it. */
export function ptpDurationS(
  startRad: readonly number[],
  goalRad: readonly number[],
  limits: JointLimits,
  scales: MotionScales,
): number {
  return ptpProfile(startRad, goalRad, limits, scales)?.duration ?? 0;
}

/**
 * Pilz-style PTP: a straight line in joint space on which all joints start and stop together,
 * with a trapezoidal profile. The path parameter's bounds are the tightest of the joints'
 * (v_i / |dq_i|, a_i / |dq_i|), which makes it the time-optimal synchronized profile under the
 * scaled limits. Samples every {@link PLAN_DT_S} (coarser past {@link MAX_PTP_SAMPLES}) plus the phase boundaries, with positions and
 * velocities: cubic interpolation between them reproduces each phase exactly, whereas
 * accelerations (discontinuous at the boundaries) would make a quintic overshoot.
 */
export function planPtp(
  startRad: readonly number[],
  goalRad: readonly number[],
  limits: JointLimits,
  scales: MotionScales,
): JointTrajectory {
  const delta = goalRad.map((g, i) => g - (startRad[i] ?? 0));
  const names = limits.jointNames;
  const profile = ptpProfile(startRad, goalRad, limits, scales);
  if (!profile)
    return {
      jointNames: names,
      points: [{ positions: [...goalRad], velocities: delta.map(() => 0), timeFromStartS: 0 }],
    };
  const dt = Math.max(PLAN_DT_S, profile.duration / MAX_PTP_SAMPLES);
  const points: TrajectoryPoint[] = profileSampleTimes(profile, dt).map((t) => {
    const { s, v } = sampleTrapezoid(profile, t);
    return {
      positions: delta.map((d, i) => (startRad[i] ?? 0) + d * s),
      velocities: delta.map((d) => d * v),
      timeFromStartS: t,
    };
  });
  const last = points.at(-1);
  if (last) points[points.length - 1] = { ...last, positions: [...goalRad] };
  return { jointNames: names, points };
}
