import type { JointLimits } from '../robot/limits.ts';
import { type MotionScales, scaledJointLimits } from './limits.ts';
import { createSample, type JointTrajectory, type TrajectoryPoint, sampleTrajectory } from './trajectory.ts';

const SAMPLES_PER_SEGMENT = 32;

/**
 * Time-parameterizes a joint-space path (waypoints) within the scaled velocity and acceleration
 * limits: initial segment times from the velocity limits, vertex velocities by central
 * differences made monotone (Fritsch-Carlson: zero where a joint turns, at most three times the
 * smaller neighbouring slope), so no joint overshoots its waypoints and a path inside the
 * position limits stays inside them (zero at both ends), cubic Hermite interpolation between waypoints, then one
 * uniform time scaling by the worst ratio (velocity ratio, or the square root of the
 * acceleration ratio), which brings every sample within the limits.
 */
export function timeParameterize(
  waypoints: readonly (readonly number[])[],
  limits: JointLimits,
  scales: MotionScales,
): JointTrajectory {
  const { vMax, aMax } = scaledJointLimits(limits, scales);
  const n = limits.jointNames.length;
  const times = [0];
  for (let k = 1; k < waypoints.length; k++) {
    const a = waypoints[k - 1] ?? [],
      b = waypoints[k] ?? [];
    let t = 1e-3;
    for (let j = 0; j < n; j++) {
      const d = Math.abs((b[j] ?? 0) - (a[j] ?? 0));
      t = Math.max(t, d / (vMax[j] ?? 1), Math.sqrt((4 * d) / (aMax[j] ?? 1)));
    }
    times.push((times[k - 1] ?? 0) + t);
  }
  const velocity = (k: number, j: number) => {
    if (k === 0 || k === waypoints.length - 1) return 0;
    const q0 = waypoints[k - 1]?.[j] ?? 0,
      q1 = waypoints[k]?.[j] ?? 0,
      q2 = waypoints[k + 1]?.[j] ?? 0;
    const t0 = times[k - 1] ?? 0,
      t1 = times[k] ?? 0,
      t2 = times[k + 1] ?? 0;
    const left = (q1 - q0) / (t1 - t0);
    const right = (q2 - q1) / (t2 - t1);
    if (left * right <= 0) return 0;
    const central = (q2 - q0) / (t2 - t0);
    return Math.sign(central) * Math.min(Math.abs(central), 3 * Math.min(Math.abs(left), Math.abs(right)));
  };
  const build = (scale: number): JointTrajectory => ({
    jointNames: limits.jointNames,
    points: waypoints.map(
      (w, k): TrajectoryPoint => ({
        positions: [...w],
        velocities: Array.from({ length: n }, (_, j) => velocity(k, j) / scale),
        timeFromStartS: (times[k] ?? 0) * scale,
      }),
    ),
  });
  const draft = build(1);
  const sample = createSample(n);
  let ratio = 0;
  const end = times[times.length - 1] ?? 0;
  const count = Math.max(1, (waypoints.length - 1) * SAMPLES_PER_SEGMENT);
  for (let s = 0; s <= count; s++) {
    sampleTrajectory(draft, (end * s) / count, sample);
    for (let j = 0; j < n; j++) {
      ratio = Math.max(
        ratio,
        Math.abs(sample.qd[j] ?? 0) / (vMax[j] ?? 1),
        Math.sqrt(Math.abs(sample.qdd[j] ?? 0) / (aMax[j] ?? 1)),
      );
    }
  }
  // Cubic segments: acceleration is linear, so its extremes are at the segment ends, which are sampled.
  for (let k = 0; k < waypoints.length; k++) {
    for (const t of [(times[k] ?? 0) - 1e-9, (times[k] ?? 0) + 1e-9]) {
      if (t < 0 || t > end) continue;
      sampleTrajectory(draft, t, sample);
      for (let j = 0; j < n; j++)
        ratio = Math.max(
          ratio,
          Math.abs(sample.qd[j] ?? 0) / (vMax[j] ?? 1),
          Math.sqrt(Math.abs(sample.qdd[j] ?? 0) / (aMax[j] ?? 1)),
        );
    }
  }
  return build(Math.max(ratio * 1.01, 1e-6));
}
