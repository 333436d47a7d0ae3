/**
 * Time-scaling of a trajectory in execution, for pause, resume and the speed override: the path
 * q(tau) stays as planned, only the rate r = dtau/dt at which its time tau advances changes (0
 * holds the arm on the path, 1 executes as planned, p/100 for an override of p %). The joint
 * velocity is then q'(tau) r and the acceleration q''(tau) r^2 + q'(tau) dr/dt, so with r <= 1
 * no joint exceeds its velocity limit when the plan does not, and each change of the rate is
 * bounded so that no joint exceeds its acceleration limit. Pure: no clock, no I/O; the simulated
 * controller advances its rate with {@link nextPathRate} every period, and {@link retimeTrajectory}
 * gives the same motion as trajectory points, for a controller armgate publishes to.
 */
import type { JointLimits } from '../robot/limits.ts';
import { createSample, type JointTrajectory, type TrajectoryPoint, sampleTrajectory } from './trajectory.ts';

/** Share of each acceleration limit a rate change may use together with the path's own (margin for the sampling). */
export const RATE_ACCEL_SHARE = 0.95;

/**
 * The path rate after one period of `dtS`, moving `rate` toward `target` as fast as the
 * acceleration limits allow at the path point where the derivatives are `dq` (q'(tau)) and `ddq`
 * (q''(tau)): for each joint, |ddq r^2 + dq rdot| <= max(RATE_ACCEL_SHARE * maxAcc, |ddq r^2|), never
 * more than the limit when the plan is within it. The interval of allowed rdot always holds 0, so
 * a rate the path cannot leave at this instant (the plan itself brakes at the limit) is kept until it can.
 * Targets are clamped to [0, 1]; the rate reaches its target exactly, never overshoots.
 */
export function nextPathRate(
  rate: number,
  target: number,
  dq: ArrayLike<number>,
  ddq: ArrayLike<number>,
  maxAccRadS2: readonly number[],
  dtS: number,
): number {
  const goal = Math.min(1, Math.max(0, target));
  if (rate === goal || !(dtS > 0)) return rate;
  let lo = Number.NEGATIVE_INFINITY;
  let hi = Number.POSITIVE_INFINITY;
  for (let j = 0; j < dq.length; j++) {
    const path = (ddq[j] ?? 0) * rate * rate;
    // The share of the limit, or what the plan itself uses here when that is more (then only changes toward less).
    const a = Math.max(RATE_ACCEL_SHARE * (maxAccRadS2[j] ?? 0), Math.abs(path));
    const d = dq[j] ?? 0;
    if (Math.abs(d) < 1e-12) continue;
    // -a <= path + d rdot <= a
    const x = (-a - path) / d;
    const y = (a - path) / d;
    lo = Math.max(lo, Math.min(x, y));
    hi = Math.min(hi, Math.max(x, y));
  }
  const wanted = (goal - rate) / dtS;
  const rdot = Math.min(hi, Math.max(lo, wanted));
  const next = rate + rdot * dtS;
  // Never past the target (rounding), never below 0 or above 1.
  if (goal > rate) return Math.min(goal, Math.max(rate, next));
  return Math.max(goal, Math.min(rate, next));
}

/** The state of a time-scaled execution: where on the path (tau, s of plan time) and at what rate. */
export interface PathProgress {
  /** Plan time reached (s). */
  tauS: number;
  /** Current rate dtau/dt, 0..1. */
  rate: number;
}

/**
 * Advances `progress` by one period of `dtS` toward the rate `target` and writes the commanded
 * state (positions on the path at the new tau, velocities q' r, accelerations q'' r^2 + q' rdot)
 * into `out`. `scratch` holds the path derivatives at the old tau. Returns false once tau has
 * reached the end of the trajectory (then `out` is its last point at rest).
 */
export function advancePath(
  trajectory: JointTrajectory,
  durationS: number,
  progress: PathProgress,
  target: number,
  maxAccRadS2: readonly number[],
  dtS: number,
  scratch: { readonly q: Float64Array; readonly qd: Float64Array; readonly qdd: Float64Array },
  out: { readonly q: Float64Array; readonly qd: Float64Array; readonly qdd: Float64Array },
): boolean {
  const r0 = progress.rate;
  const goal = Math.min(1, Math.max(0, target));
  // At a steady rate (the common case: as planned, or a constant override) the path derivatives are not needed.
  if (r0 !== goal) sampleTrajectory(trajectory, progress.tauS, scratch);
  const r1 = r0 === goal ? r0 : nextPathRate(r0, goal, scratch.qd, scratch.qdd, maxAccRadS2, dtS);
  const rdot = (r1 - r0) / dtS;
  const tau = Math.min(durationS, progress.tauS + ((r0 + r1) / 2) * dtS);
  progress.tauS = tau;
  progress.rate = r1;
  sampleTrajectory(trajectory, tau, out);
  if (tau >= durationS) {
    out.qd.fill(0);
    out.qdd.fill(0);
    return false;
  }
  for (let j = 0; j < out.qd.length; j++) {
    const d = out.qd[j] ?? 0;
    out.qdd[j] = (out.qdd[j] ?? 0) * r1 * r1 + d * rdot;
    out.qd[j] = d * r1;
  }
  return true;
}

/** Options of {@link retimeTrajectory}. */
export interface RetimeOptions {
  /** Plan time where the execution is (s). */
  readonly fromTauS: number;
  /** The rate there (0 at rest on the path, 1 as planned). */
  readonly fromRate: number;
  /** The rate to reach: 0 pauses (the result ends at rest on the path), else it runs to the end at that rate. */
  readonly target: number;
  /** Period of the rate steps (s); points are emitted every `everyS`. */
  readonly dtS: number;
  readonly everyS: number;
}

/**
 * The rest of `trajectory` from `fromTauS` executed with its rate moving from `fromRate` to
 * `target` by {@link nextPathRate}, as trajectory points (positions, velocities, accelerations,
 * times from now): what the simulated controller does, for a controller that only follows
 * points. With target 0 it ends where the arm comes to rest on the path. Pure.
 */
export function retimeTrajectory(
  trajectory: JointTrajectory,
  limits: JointLimits,
  options: RetimeOptions,
): JointTrajectory & { readonly tauS: readonly number[] } {
  const n = limits.jointNames.length;
  const durationS = trajectory.points.at(-1)?.timeFromStartS ?? 0;
  const progress: PathProgress = {
    tauS: Math.max(0, options.fromTauS),
    rate: Math.min(1, Math.max(0, options.fromRate)),
  };
  const scratch = createSample(n);
  const out = createSample(n);
  const points: TrajectoryPoint[] = [];
  /** The plan time reached at each point. */
  const tauS: number[] = [];
  const push = (t: number) => {
    tauS.push(progress.tauS);
    points.push({
      positions: Array.from(out.q),
      velocities: Array.from(out.qd),
      accelerations: Array.from(out.qdd),
      timeFromStartS: t,
    });
  };
  const dt = options.dtS;
  const every = Math.max(dt, options.everyS);
  let t = 0;
  let sinceEmit = 0;
  // A bound on the steps: at the smallest useful rate the rest of the path, plus the ramps.
  const maxSteps = 2_000_000;
  for (let step = 0; step < maxSteps; step++) {
    const more = advancePath(trajectory, durationS, progress, options.target, limits.maxAccRadS2, dt, scratch, out);
    t += dt;
    sinceEmit += dt;
    const resting = options.target <= 0 && progress.rate === 0;
    if (!more || resting) {
      if (resting) {
        out.qd.fill(0);
        out.qdd.fill(0);
      }
      push(t);
      break;
    }
    if (sinceEmit >= every - 1e-12) {
      push(t);
      sinceEmit = 0;
    }
    if (options.target > 0 && progress.rate === 0) break;
  }
  return { jointNames: trajectory.jointNames, points, tauS };
}
