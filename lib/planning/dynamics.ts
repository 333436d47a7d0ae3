/**
 * What a joint trajectory controller (ros2_controllers' JTC, and the simulated one alike) makes of
 * a trajectory, and whether that stays within the joint limits. Pure: plain data in, plain data
 * out, no clock, no context, no sampling loops: each segment's polynomial is examined analytically
 * (its extremes are at the segment ends or where its derivative vanishes), O(points).
 *
 * The controller interpolates from its current state to the first point (unless that point is at
 * t = 0) and then point to point: linear when either end has positions only, cubic Hermite with
 * velocities at both ends, quintic with accelerations too. After the last point it holds still.
 */
import { segmentCoefficients, type TrajectoryPoint } from './trajectory.ts';
import type { JointLimits } from '../robot/limits.ts';
import { derivative, evalPoly, type PolyRange, rangeOn, startRange, widenRange } from './poly.ts';

/** The arm's state when the trajectory arrives, J1..J7 (rad, rad/s, rad/s^2). */
export interface ArmState {
  readonly positions: readonly number[];
  readonly velocities: readonly number[];
  readonly accelerations?: readonly number[];
}

/** What a limit violation is about. A velocity step is an unbounded acceleration (linear segments). */
export type Quantity = 'position' | 'velocity' | 'acceleration' | 'velocity step' | 'jump';

/** The first place where executing the trajectory would exceed a joint limit. */
export interface LimitViolation {
  /** Index of the requested point that ends the segment (or where the step or jump happens). */
  readonly point: number;
  /** Joint index, J1 = 0. */
  readonly joint: number;
  readonly quantity: Quantity;
  /** The figure: rad (position, jump offset), |rad/s| (velocity, velocity step), |rad/s^2| (acceleration). */
  readonly value: number;
  /** The limit passed: position bound (rad), velocity (rad/s), acceleration (rad/s^2), jump tolerance (rad). */
  readonly limit: number;
  /** The segment's start and end times (s from the trajectory start). */
  readonly fromS: number;
  readonly toS: number;
  /** When the figure is reached (s). */
  readonly atS: number;
}

/** The knots the controller interpolates, and the index among them of the first requested point. */
export interface ExecutedKnots {
  readonly knots: readonly TrajectoryPoint[];
  /** 1 when the controller's current state was prepended (first point later than t = 0), else 0. */
  readonly offset: 0 | 1;
}

/** Largest distance (rad) between a first point at t = 0 and the current position that is not a jump. */
export const START_TOLERANCE_RAD = 1e-3;

/**
 * A lone point at t = 0 this close (rad) to the current position is a hold request (what POST /stop publishes from
 * the latest joint state, which lags a moving arm by up to one period); farther, it is a jump. The simulated
 * controller holds to the same figure.
 */
export const HOLD_TOLERANCE_RAD = 0.1;

/** The first joint of a lone point at t = 0 farther than {@link HOLD_TOLERANCE_RAD} from `current`: a jump. */
export function holdPointJump(point: readonly number[], current: readonly number[]): LimitViolation | undefined {
  for (let j = 0; j < point.length; j++) {
    const off = Math.abs((point[j] ?? 0) - (current[j] ?? 0));
    if (!(off <= HOLD_TOLERANCE_RAD)) return violation(0, j, 'jump', off, HOLD_TOLERANCE_RAD, 0, 0, 0);
  }
  return undefined;
}
/** Relative slack on velocity and acceleration limits (rounding of figures computed at the limit). */
const RELATIVE_TOLERANCE = 1e-6;
/** Velocity differences below this (rad/s) at a knot are not a step. */
const STEP_TOLERANCE_RAD_S = 1e-9;

const exceeds = (value: number, limit: number) => value > limit * (1 + RELATIVE_TOLERANCE) + 1e-12;

/**
 * The requested points with a velocity for every point that has none, so that the controller
 * interpolates a cubic Hermite spline instead of linear pieces (a velocity step at every point):
 * the time-weighted three-point estimate of the neighbouring segment slopes, 0 where the slope
 * changes sign or is flat on one side (so the spline does not overshoot a turning point), 0 at
 * the last point, and the current velocity at a first point at t = 0. The first segment starts
 * from the current position (the controller's own start). Points with velocities are kept.
 */
export function fillVelocities(state: ArmState, points: readonly TrajectoryPoint[]): TrajectoryPoint[] {
  const n = points.length;
  const joints = state.positions.length;
  const out: TrajectoryPoint[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const p = points[i] as TrajectoryPoint;
    if (p.velocities) {
      out[i] = p;
      continue;
    }
    const v: number[] = [];
    if (i === 0 && p.timeFromStartS === 0 && n > 1) {
      for (let j = 0; j < joints; j++) v.push(state.velocities[j] ?? 0);
    } else if (i < n - 1) {
      const prevPositions = i === 0 ? state.positions : (points[i - 1] as TrajectoryPoint).positions;
      const prevT = i === 0 ? 0 : (points[i - 1] as TrajectoryPoint).timeFromStartS;
      const next = points[i + 1] as TrajectoryPoint;
      const h0 = p.timeFromStartS - prevT;
      const h1 = next.timeFromStartS - p.timeFromStartS;
      for (let j = 0; j < joints; j++) {
        const q = p.positions[j] ?? 0;
        const d0 = (q - (prevPositions[j] ?? 0)) / h0;
        const d1 = ((next.positions[j] ?? 0) - q) / h1;
        v.push(d0 * d1 > 0 ? (h1 * d0 + h0 * d1) / (h0 + h1) : 0);
      }
    } else {
      for (let j = 0; j < joints; j++) v.push(0);
    }
    // One object shape for every point (the checks below stay monomorphic and fast).
    out[i] = { positions: p.positions, velocities: v, timeFromStartS: p.timeFromStartS };
  }
  return out;
}

/**
 * The knots as the controller takes them: its current state at t = 0 first when the first point
 * is later (with the current velocities when the first point has velocities, and accelerations
 * likewise), as ros2_controllers' JTC interpolates from the state it had when the message came.
 */
export function executedKnots(state: ArmState, points: readonly TrajectoryPoint[]): ExecutedKnots {
  const first = points[0];
  if (!first || first.timeFromStartS <= 0) return { knots: points, offset: 0 };
  let start: TrajectoryPoint = { positions: state.positions, timeFromStartS: 0 };
  if (first.velocities && first.accelerations && state.accelerations) {
    start = {
      positions: state.positions,
      velocities: state.velocities,
      accelerations: state.accelerations,
      timeFromStartS: 0,
    };
  } else if (first.velocities) {
    start = { positions: state.positions, velocities: state.velocities, timeFromStartS: 0 };
  }
  return { knots: [start, ...points], offset: 1 };
}

/** Options of {@link firstViolation}. */
export interface ViolationOptions {
  /** The quantities to check (default all). */
  readonly quantities?: ReadonlySet<Quantity>;
  /**
   * Only the segments into knots `from` .. `to - 1` (default all; a range that starts later skips
   * the start jump and the final step, and takes the velocity before it from the previous segment).
   */
  readonly segments?: { readonly from: number; readonly to: number };
}

/** The earlier of two violations; at equal times the larger excess over its limit. */
function earlier(best: LimitViolation | undefined, candidate: LimitViolation): LimitViolation {
  if (!best || candidate.atS < best.atS) return candidate;
  if (candidate.atS === best.atS && candidate.value / candidate.limit > best.value / best.limit) return candidate;
  return best;
}

/** A violation of `quantity` by joint `joint` on the segment [fromS, toS] ending at `point`, reached at `atS`. */
function violation(
  point: number,
  joint: number,
  quantity: Quantity,
  value: number,
  limit: number,
  fromS: number,
  toS: number,
  atS: number,
): LimitViolation {
  return { point, joint, quantity, value, limit, fromS, toS, atS };
}

/** Extremes of one joint on one segment (s from the segment start); acceleration 0 on linear segments. */
interface SegmentExtremes {
  readonly position: PolyRange;
  velPeak: number;
  velPeakAtS: number;
  accPeak: number;
  accPeakAtS: number;
  startVelocity: number;
  endVelocity: number;
}

const ext: SegmentExtremes = {
  position: { min: 0, minAtS: 0, max: 0, maxAtS: 0 },
  velPeak: 0,
  velPeakAtS: 0,
  accPeak: 0,
  accPeakAtS: 0,
  startVelocity: 0,
  endVelocity: 0,
};

/**
 * The extremes of the cubic Hermite segment from (p0, v0) to (p1, v1) over T, in closed form (the
 * hot path: no allocation): acceleration is linear in time, so its extremes are at the ends;
 * velocity is quadratic, with at most one interior extremum; position extremes are at the ends or
 * where the velocity vanishes.
 */
function cubicExtremes(p0: number, v0: number, p1: number, v1: number, T: number, out: SegmentExtremes): void {
  const c2 = (3 * (p1 - p0) - (2 * v0 + v1) * T) / (T * T);
  const c3 = (2 * (p0 - p1) + (v0 + v1) * T) / (T * T * T);
  out.startVelocity = v0;
  out.endVelocity = v1;
  const position = out.position;
  startRange(position, p0);
  widenRange(position, p1, T);
  // v(s) = v0 + 2 c2 s + 3 c3 s^2 = 0: the stable pair of roots.
  const qa = 3 * c3;
  const qb = 2 * c2;
  if (qa === 0) {
    const s = qb !== 0 ? -v0 / qb : Number.NaN;
    if (s > 0 && s < T) widenRange(position, p0 + s * (v0 + s * (c2 + s * c3)), s);
  } else {
    const disc = qb * qb - 4 * qa * v0;
    if (disc >= 0) {
      const q = -0.5 * (qb + (qb >= 0 ? 1 : -1) * Math.sqrt(disc));
      const r1 = q / qa;
      const r2 = q !== 0 ? v0 / q : Number.NaN;
      if (r1 > 0 && r1 < T) widenRange(position, p0 + r1 * (v0 + r1 * (c2 + r1 * c3)), r1);
      if (r2 > 0 && r2 < T) widenRange(position, p0 + r2 * (v0 + r2 * (c2 + r2 * c3)), r2);
    }
  }
  out.velPeak = Math.abs(v0);
  out.velPeakAtS = 0;
  if (Math.abs(v1) > out.velPeak) {
    out.velPeak = Math.abs(v1);
    out.velPeakAtS = T;
  }
  if (c3 !== 0) {
    const s = -c2 / (3 * c3);
    const v = v0 + s * (2 * c2 + 3 * c3 * s);
    if (s > 0 && s < T && Math.abs(v) > out.velPeak) {
      out.velPeak = Math.abs(v);
      out.velPeakAtS = s;
    }
  }
  const a0 = Math.abs(2 * c2);
  const a1 = Math.abs(2 * c2 + 6 * c3 * T);
  out.accPeak = Math.max(a0, a1);
  out.accPeakAtS = a1 > a0 ? T : 0;
}

const c = new Float64Array(6);
const dc = new Float64Array(6);
const ddc = new Float64Array(6);
const range: PolyRange = { min: 0, minAtS: 0, max: 0, maxAtS: 0 };

/** The extremes of joint `j` on the segment from `a` to `b` (T > 0), into `out`. */
function segmentExtremes(a: TrajectoryPoint, b: TrajectoryPoint, j: number, T: number, out: SegmentExtremes): void {
  if (
    a.velocities !== undefined &&
    b.velocities !== undefined &&
    (a.accelerations === undefined || b.accelerations === undefined)
  ) {
    cubicExtremes(a.positions[j] ?? 0, a.velocities[j] ?? 0, b.positions[j] ?? 0, b.velocities[j] ?? 0, T, out);
  } else {
    polyExtremes(a, b, j, T, out);
  }
}

/** The extremes of any segment (linear, cubic or quintic) through the polynomial helpers. */
function polyExtremes(a: TrajectoryPoint, b: TrajectoryPoint, j: number, T: number, out: SegmentExtremes): void {
  const degree = segmentCoefficients(a, b, j, c);
  const vd = derivative(c, degree, dc);
  out.startVelocity = dc[0] ?? 0;
  out.endVelocity = evalPoly(dc, vd, T);
  rangeOn(c, degree, T, out.position);
  rangeOn(dc, vd, T, range);
  out.velPeak = Math.max(range.max, -range.min);
  out.velPeakAtS = range.max >= -range.min ? range.maxAtS : range.minAtS;
  out.accPeak = 0;
  out.accPeakAtS = 0;
  if (degree > 1) {
    const ad = derivative(dc, vd, ddc);
    rangeOn(ddc, ad, T, range);
    out.accPeak = Math.max(range.max, -range.min);
    out.accPeakAtS = range.max >= -range.min ? range.maxAtS : range.minAtS;
  }
}

/**
 * The first violation (earliest in time; at equal times the larger excess) of position, velocity
 * or acceleration limits when the controller executes `executed`, or undefined. Times must
 * increase strictly (the caller checks; segments that do not are skipped).
 */
export function firstViolation(
  executed: ExecutedKnots,
  state: ArmState,
  limits: JointLimits,
  options: ViolationOptions = {},
): LimitViolation | undefined {
  const wanted = options.quantities;
  const checkPosition = !wanted || wanted.has('position');
  const checkVelocity = !wanted || wanted.has('velocity');
  const checkAcceleration = !wanted || wanted.has('acceleration');
  const checkSteps = !wanted || wanted.has('velocity step');
  const { knots, offset } = executed;
  const joints = limits.jointNames.length;
  const first = knots[0];
  if (!first) return undefined;
  let best: LimitViolation | undefined;
  const from = Math.max(1, options.segments?.from ?? 1);
  const to = Math.min(knots.length, options.segments?.to ?? knots.length);
  const whole = from === 1 && to === knots.length;
  if (offset === 0 && from === 1 && (!wanted || wanted.has('jump'))) {
    for (let j = 0; j < joints; j++) {
      const off = Math.abs((first.positions[j] ?? 0) - (state.positions[j] ?? 0));
      if (off > START_TOLERANCE_RAD) best = earlier(best, violation(0, j, 'jump', off, START_TOLERANCE_RAD, 0, 0, 0));
    }
    if (best) return best;
  }
  // Velocity at the end of the previous segment, per joint (the arm's own velocity before the first).
  const endVelocity = Float64Array.from({ length: joints }, (_, j) => state.velocities[j] ?? 0);
  if (from > 1) {
    const a = knots[from - 2] as TrajectoryPoint;
    const b = knots[from - 1] as TrajectoryPoint;
    const T = b.timeFromStartS - a.timeFromStartS;
    for (let j = 0; j < joints && T > 0; j++) {
      segmentExtremes(a, b, j, T, ext);
      endVelocity[j] = ext.endVelocity;
    }
  }
  for (let k = from; k < to; k++) {
    const a = knots[k - 1] as TrajectoryPoint;
    const b = knots[k] as TrajectoryPoint;
    const t0 = a.timeFromStartS;
    const t1 = b.timeFromStartS;
    const T = t1 - t0;
    if (!(T > 0)) continue;
    const point = k - offset;
    // A step at knot k - 1 belongs to that point (the start state's steps to point 0).
    const stepPoint = Math.max(0, k - 1 - offset);
    for (let j = 0; j < joints; j++) {
      segmentExtremes(a, b, j, T, ext);
      const vMax = limits.maxVelRadS[j] ?? 0;
      const aMax = limits.maxAccRadS2[j] ?? 0;
      const step = Math.abs(ext.startVelocity - (endVelocity[j] ?? 0));
      if (checkSteps && step > STEP_TOLERANCE_RAD_S) {
        best = earlier(best, violation(stepPoint, j, 'velocity step', step, aMax, t0, t0, t0));
      }
      endVelocity[j] = ext.endVelocity;
      if (checkPosition) {
        const min = limits.minRad[j] ?? 0;
        const max = limits.maxRad[j] ?? 0;
        const { position } = ext;
        if (position.max > max + 1e-12)
          best = earlier(best, violation(point, j, 'position', position.max, max, t0, t1, t0 + position.maxAtS));
        if (position.min < min - 1e-12)
          best = earlier(best, violation(point, j, 'position', position.min, min, t0, t1, t0 + position.minAtS));
      }
      if (checkVelocity && exceeds(ext.velPeak, vMax))
        best = earlier(best, violation(point, j, 'velocity', ext.velPeak, vMax, t0, t1, t0 + ext.velPeakAtS));
      if (checkAcceleration && exceeds(ext.accPeak, aMax))
        best = earlier(best, violation(point, j, 'acceleration', ext.accPeak, aMax, t0, t1, t0 + ext.accPeakAtS));
    }
    if (best) return best;
  }
  // After the last point the controller holds: every velocity drops to 0 at once.
  if (!checkSteps || !whole) return undefined;
  const last = knots.at(-1) as TrajectoryPoint;
  const t = last.timeFromStartS;
  for (let j = 0; j < joints; j++) {
    const step = Math.abs(endVelocity[j] ?? 0);
    const limit = limits.maxAccRadS2[j] ?? 0;
    if (step > STEP_TOLERANCE_RAD_S)
      best = earlier(best, violation(Math.max(0, knots.length - 1 - offset), j, 'velocity step', step, limit, t, t, t));
  }
  return best;
}

/** Rounds a figure for a message: three significant digits (10.2, 170, 2.55). */
export function figure(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  return String(Number(value.toPrecision(3)));
}

const seconds = (t: number) => String(Number(t.toPrecision(6)));

/**
 * One sentence for a violation, e.g. "point 0: joint1 would need 10.2 rad/s^2 (limit 8.5521)
 * between t = 0 and 1 s: add time or points". `label` names a point (a CSV says "row 3").
 */
export function describeViolation(
  v: LimitViolation,
  limits: JointLimits,
  label: (point: number) => string = (i) => `point ${i}`,
): string {
  const joint = limits.jointNames[v.joint] ?? `joint${v.joint + 1}`;
  const between = `between t = ${seconds(v.fromS)} and ${seconds(v.toS)} s`;
  switch (v.quantity) {
    case 'acceleration':
      return `${label(v.point)}: ${joint} would need ${figure(v.value)} rad/s^2 (limit ${v.limit}) ${between}: add time or points`;
    case 'velocity':
      return `${label(v.point)}: ${joint} would need ${figure(v.value)} rad/s (limit ${v.limit}) ${between}: add time or points`;
    case 'position': {
      const bounds = `[${limits.minRad[v.joint]}, ${limits.maxRad[v.joint]}]`;
      return `${label(v.point)}: ${joint} would reach ${figure(v.value)} rad ${between}, outside its limits ${bounds}: move the points away from the limit or add points`;
    }
    case 'velocity step':
      return `${label(v.point)}: ${joint} would change velocity by ${figure(v.value)} rad/s at once at t = ${seconds(v.atS)} s (unbounded acceleration, limit ${v.limit} rad/s^2)`;
    case 'jump':
      return `${label(v.point)}: ${joint} is at t = 0 but ${figure(v.value)} rad from the current position: the arm would jump; give the first point a time after 0`;
  }
}

/** The outcome of {@link planExecution}. */
export interface ExecutionPlan {
  /** The points to publish: as requested, with velocities filled in when `fill` was set. */
  readonly points: TrajectoryPoint[];
  /** The first limit violation of their execution, if any. */
  readonly violation: LimitViolation | undefined;
}

/**
 * Fills velocities (when `fill`) and checks the execution from `state` against the limits.
 * Times must increase strictly (not checked here).
 */
export function planExecution(
  state: ArmState,
  points: readonly TrajectoryPoint[],
  limits: JointLimits,
  fill: boolean,
): ExecutionPlan {
  const published = fill ? fillVelocities(state, points) : [...points];
  return { points: published, violation: firstViolation(executedKnots(state, published), state, limits) };
}

const HEAD_QUANTITIES: ReadonlySet<Quantity> = new Set<Quantity>(['position', 'velocity', 'acceleration', 'jump']);

/**
 * For a plan checked from an older state: re-derives the first point's filled velocity from the
 * arm's `state` now and re-checks the segments that depend on it (into and out of the first
 * point); the rest of the plan does not depend on the state. `head` is the plan's first one or two
 * points; returns the first point to publish and any violation.
 */
export function refreshStart(
  state: ArmState,
  head: readonly TrajectoryPoint[],
  limits: JointLimits,
): { first: TrajectoryPoint; violation: LimitViolation | undefined } {
  const [p0, p1] = head;
  if (!p0) throw new Error('refreshStart needs the first point');
  const bare: TrajectoryPoint = { positions: p0.positions, timeFromStartS: p0.timeFromStartS };
  const refilled = fillVelocities(state, p1 ? [bare, p1] : [bare]);
  const violation = firstViolation(
    executedKnots(state, refilled),
    state,
    limits,
    p1 ? { quantities: HEAD_QUANTITIES } : {},
  );
  return { first: refilled[0] as TrajectoryPoint, violation };
}
