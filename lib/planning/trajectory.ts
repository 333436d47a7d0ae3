/**
 * Joint trajectories as plain data (seconds, radians) and their sampling with ros2_controllers'
 * interpolation rules: positions only -> linear, with velocities -> cubic Hermite, with
 * velocities and accelerations -> quintic Hermite. Pure: no clock.
 */

export interface TrajectoryPoint {
  readonly positions: readonly number[];
  readonly velocities?: readonly number[];
  readonly accelerations?: readonly number[];
  readonly timeFromStartS: number;
}

export interface JointTrajectory {
  readonly jointNames: readonly string[];
  readonly points: readonly TrajectoryPoint[];
}

/** A sampled state: positions, velocities and accelerations, J1..J7. */
export interface JointSample {
  readonly q: Float64Array;
  readonly qd: Float64Array;
  readonly qdd: Float64Array;
}

/** Allocates a sample for `n` joints. */
export function createSample(n: number): JointSample {
  return { q: new Float64Array(n), qd: new Float64Array(n), qdd: new Float64Array(n) };
}

/** Duration of a trajectory: the last point's time. */
export function trajectoryDuration(trajectory: JointTrajectory): number {
  return trajectory.points.at(-1)?.timeFromStartS ?? 0;
}

function segmentIndex(points: readonly TrajectoryPoint[], t: number): number {
  let lo = 0;
  let hi = points.length - 1;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if ((points[mid]?.timeFromStartS ?? 0) <= t) lo = mid;
    else hi = mid;
  }
  return lo;
}

/**
 * The last segment {@link sampleTrajectory} sampled: its two points, each joint's polynomial (6 coefficients a joint)
 * and degree. A trajectory is sampled in order, many samples a segment (a controller's ticks, a check's steps): the
 * next sample mostly falls in the same segment, or the next one, and its polynomials are already there.
 */
const last = {
  points: undefined as readonly TrajectoryPoint[] | undefined,
  index: -1,
  /** How many joints' polynomials it holds. */
  n: 0,
  a: undefined as TrajectoryPoint | undefined,
  b: undefined as TrajectoryPoint | undefined,
  coefficients: new Float64Array(6 * 7),
  degrees: new Uint8Array(7),
};

/** One joint's polynomial, {@link segmentPolynomials}' scratch. */
const scratch = new Float64Array(6);

/** The index of the segment holding `t` (points[i].timeFromStartS <= t < points[i + 1]'s): the last one's or its next. */
function segmentAt(points: readonly TrajectoryPoint[], t: number): number {
  if (last.points === points) {
    for (let i = last.index; i <= last.index + 1 && i + 1 < points.length; i++)
      if ((points[i]?.timeFromStartS ?? 0) <= t && t < (points[i + 1]?.timeFromStartS ?? 0)) return i;
  }
  return segmentIndex(points, t);
}

/** The polynomials of every joint on segment `i` of `points` (the last segment's when it is the same). */
function segmentPolynomials(points: readonly TrajectoryPoint[], i: number, n: number): typeof last {
  const a = points[i] as TrajectoryPoint;
  const b = points[i + 1] as TrajectoryPoint;
  if (last.points === points && last.index === i && last.a === a && last.b === b && last.n >= n) return last;
  if (last.degrees.length < n) {
    last.coefficients = new Float64Array(6 * n);
    last.degrees = new Uint8Array(n);
  }
  for (let j = 0; j < n; j++) {
    last.degrees[j] = segmentCoefficients(a, b, j, scratch);
    last.coefficients.set(scratch, 6 * j);
  }
  last.points = points;
  last.index = i;
  last.n = n;
  last.a = a;
  last.b = b;
  return last;
}

/**
 * Samples `trajectory` at time `t` (s from its start) into `out`. Before the first point it
 * holds the first point; after the last it holds the last with zero velocity.
 */
export function sampleTrajectory(trajectory: JointTrajectory, t: number, out: JointSample): void {
  const points = trajectory.points;
  const n = out.q.length;
  const first = points[0];
  const final = points.at(-1);
  if (!first || !final) return;
  if (t <= first.timeFromStartS || points.length === 1) {
    hold(t <= first.timeFromStartS ? first : final, out, n, t <= first.timeFromStartS && points.length > 1);
    return;
  }
  if (t >= final.timeFromStartS) {
    hold(final, out, n, false);
    return;
  }
  const i = segmentAt(points, t);
  const a = points[i] as TrajectoryPoint;
  const b = points[i + 1] as TrajectoryPoint;
  const T = b.timeFromStartS - a.timeFromStartS;
  const s = t - a.timeFromStartS;
  const { coefficients: c, degrees } = segmentPolynomials(points, i, n);
  for (let j = 0; j < n; j++) {
    const degree = degrees[j];
    if (degree === 1) {
      const p0 = a.positions[j] ?? 0;
      const p1 = b.positions[j] ?? 0;
      out.q[j] = T > 0 ? p0 + ((p1 - p0) * s) / T : p1;
      out.qd[j] = T > 0 ? (p1 - p0) / T : 0;
      out.qdd[j] = 0;
      continue;
    }
    const k = 6 * j;
    const c0 = c[k] as number,
      c1 = c[k + 1] as number,
      c2 = c[k + 2] as number,
      c3 = c[k + 3] as number,
      c4 = c[k + 4] as number,
      c5 = c[k + 5] as number;
    if (degree === 3) {
      // cubic Hermite
      out.q[j] = c0 + c1 * s + c2 * s * s + c3 * s * s * s;
      out.qd[j] = c1 + 2 * c2 * s + 3 * c3 * s * s;
      out.qdd[j] = 2 * c2 + 6 * c3 * s;
      continue;
    }
    // quintic Hermite: p(s) = c0 + c1 s + ... + c5 s^5 matching p, v, a at both ends
    out.q[j] = c0 + s * (c1 + s * (c2 + s * (c3 + s * (c4 + s * c5))));
    out.qd[j] = c1 + s * (2 * c2 + s * (3 * c3 + s * (4 * c4 + s * 5 * c5)));
    out.qdd[j] = 2 * c2 + s * (6 * c3 + s * (12 * c4 + s * 20 * c5));
  }
}

function hold(point: TrajectoryPoint, out: JointSample, n: number, keepDerivatives: boolean): void {
  for (let j = 0; j < n; j++) {
    out.q[j] = point.positions[j] ?? 0;
    out.qd[j] = keepDerivatives ? (point.velocities?.[j] ?? 0) : 0;
    out.qdd[j] = keepDerivatives ? (point.accelerations?.[j] ?? 0) : 0;
  }
}

/**
 * Largest |velocity| and |acceleration| of joint `j` on the cubic Hermite segment from `a` to
 * `b` (positions and velocities at both ends), as the controller interpolates it: acceleration is
 * linear in time, so its extremes are at the ends; velocity is quadratic, with at most one
 * interior extremum.
 */
export function cubicSegmentPeaks(
  a: TrajectoryPoint,
  b: TrajectoryPoint,
  j: number,
): { velocity: number; acceleration: number } {
  const T = b.timeFromStartS - a.timeFromStartS;
  const p0 = a.positions[j] ?? 0,
    p1 = b.positions[j] ?? 0;
  const v0 = a.velocities?.[j] ?? 0,
    v1 = b.velocities?.[j] ?? 0;
  if (T <= 0) return { velocity: Math.max(Math.abs(v0), Math.abs(v1)), acceleration: 0 };
  const c2 = (3 * (p1 - p0) - (2 * v0 + v1) * T) / (T * T);
  const c3 = (2 * (p0 - p1) + (v0 + v1) * T) / (T * T * T);
  let velocity = Math.max(Math.abs(v0), Math.abs(v1));
  if (c3 !== 0) {
    const s = -c2 / (3 * c3);
    if (s > 0 && s < T) velocity = Math.max(velocity, Math.abs(v0 + 2 * c2 * s + 3 * c3 * s * s));
  }
  return { velocity, acceleration: Math.max(Math.abs(2 * c2), Math.abs(2 * c2 + 6 * c3 * T)) };
}

/**
 * The polynomial of joint `j` on the segment from `a` to `b`, as {@link sampleTrajectory}
 * interpolates it: coefficients of p(s) = c0 + c1 s + ... in `out` (s in seconds from `a`), and
 * its degree: 1 (positions only at either end: linear), 3 (velocities at both: cubic Hermite) or
 * 5 (velocities and accelerations at both: quintic Hermite). `out` needs 6 entries.
 */
export function segmentCoefficients(a: TrajectoryPoint, b: TrajectoryPoint, j: number, out: Float64Array): 1 | 3 | 5 {
  out.fill(0);
  const T = b.timeFromStartS - a.timeFromStartS;
  const p0 = a.positions[j] ?? 0;
  const p1 = b.positions[j] ?? 0;
  out[0] = p0;
  if (!a.velocities || !b.velocities || T <= 0) {
    out[1] = T > 0 ? (p1 - p0) / T : 0;
    return 1;
  }
  const v0 = a.velocities[j] ?? 0;
  const v1 = b.velocities[j] ?? 0;
  out[1] = v0;
  if (!a.accelerations || !b.accelerations) {
    out[2] = (3 * (p1 - p0) - (2 * v0 + v1) * T) / (T * T);
    out[3] = (2 * (p0 - p1) + (v0 + v1) * T) / (T * T * T);
    return 3;
  }
  const a0 = a.accelerations[j] ?? 0;
  const a1 = b.accelerations[j] ?? 0;
  const T2 = T * T,
    T3 = T2 * T,
    T4 = T3 * T,
    T5 = T4 * T;
  out[2] = a0 / 2;
  out[3] = (20 * (p1 - p0) - (8 * v1 + 12 * v0) * T - (3 * a0 - a1) * T2) / (2 * T3);
  out[4] = (30 * (p0 - p1) + (14 * v1 + 16 * v0) * T + (3 * a0 - 2 * a1) * T2) / (2 * T4);
  out[5] = (12 * (p1 - p0) - 6 * (v1 + v0) * T - (a0 - a1) * T2) / (2 * T5);
  return 5;
}
