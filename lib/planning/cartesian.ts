/**
 * LIN and CIRC: the TCP follows its path exactly (IK along it, see joint-path.ts) and the timing
 * is the fastest that the joints' velocity and acceleration limits and the Cartesian limits allow
 * (TOPP-RA on the path samples, see topp.ts), so the motion slows where the joints require
 * (near singularities, in tight turns of the wrist) instead of failing.
 */
import type { Chain } from '../kinematics/chain.ts';
import { forwardKinematics } from '../kinematics/fk.ts';
import { createIkWorkspace } from '../kinematics/ik.ts';
import { type Quaternion, quatFromMat } from '../kinematics/rotation.ts';
import type { JointLimits } from '../robot/limits.ts';
import { err, ok, type Result } from '../result.ts';
import { interpolationSlopes, pathDerivatives, sampleJointPath } from './joint-path.ts';
import { effectiveAccelScale, type MotionScales, scaledJointLimits } from './limits.ts';
import type { CartesianPath } from './paths.ts';
import { trapezoid } from './profile.ts';
import { PLAN_DT_S } from './ptp.ts';
import { solveTopp, type ToppProblem } from './topp.ts';
import { cubicSegmentPeaks, type JointTrajectory, type TrajectoryPoint } from './trajectory.ts';

export { arcPath, type CartesianPath, type CircAux, linePath } from './paths.ts';

/** Why a Cartesian motion cannot be executed, and where along the path (0..1). */
export interface CartesianFailure {
  readonly reason: 'unreachable' | 'joint_limit' | 'singularity' | 'too_long';
  readonly message: string;
  readonly atS: number;
  /** The planned duration (s), or a lower bound of it, for 'too_long'. */
  readonly durationS?: number;
}

export interface CartesianOptions {
  readonly nowMs: () => number;
  /** Longest motion planned (s): a longer one fails before its trajectory is sampled. Default: no bound. */
  readonly maxDurationS?: number;
  /** Largest TCP step between path samples (m); default 1 mm. */
  readonly maxStepM?: number;
  /** Largest TCP rotation between path samples (rad); default 0.01. */
  readonly maxStepRad?: number;
}

/**
 * Share of the scaled joint limits the parameterization plans with: the rest absorbs the
 * constraints holding only at the samples and the controller's cubic interpolation. Whatever
 * still exceeds a limit is removed by one uniform time stretch (see {@link planCartesianSteps}).
 */
const JOINT_MARGIN = 0.97;

/** {@link planCartesianSteps} run to completion: the same arguments, the same answer, without yielding. */
export function planCartesian(
  ...args: Parameters<typeof planCartesianSteps>
): Result<JointTrajectory, CartesianFailure> {
  const steps = planCartesianSteps(...args);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * Plans a motion along `path` from `startRad` (whose TCP pose is the path's start), from rest to
 * rest: the joint path by IK along it, then the time-optimal timing under the joint velocity and
 * acceleration limits scaled by speed and accel_scale and Pilz's Cartesian limits (translation
 * and rotation velocity, tangential acceleration and deceleration; rotation acceleration in the
 * same ratio as Pilz derives it), then samples every {@link PLAN_DT_S} and at every path sample
 * with positions and velocities. Every segment is checked as the controller interpolates it
 * (cubic Hermite); a segment beyond a limit stretches the whole timing by the excess. A motion
 * longer than `maxDurationS` fails before it is sampled. A generator that yields between steps
 * (see runSliced).
 */
export function* planCartesianSteps(
  chain: Chain,
  limits: JointLimits,
  path: CartesianPath,
  startRad: readonly number[],
  scales: MotionScales,
  options: CartesianOptions,
): Generator<void, Result<JointTrajectory, CartesianFailure>> {
  const n = chain.jointNames.length;
  const c = limits.cartesian;
  const acc = effectiveAccelScale(scales);
  const perS = (lin: number, rot: number) =>
    Math.min(
      path.lengthM > 1e-9 ? lin / path.lengthM : Number.POSITIVE_INFINITY,
      path.angleRad > 1e-9 ? rot / path.angleRad : Number.POSITIVE_INFINITY,
    );
  const vS = perS(c.maxTransVelMS * scales.speed, c.maxRotVelRadS * scales.speed);
  const aS = perS(c.maxTransAccMS2 * acc, (c.maxTransAccMS2 / c.maxTransVelMS) * c.maxRotVelRadS * acc);
  const dS = perS(c.maxTransDecMS2 * acc, (c.maxTransDecMS2 / c.maxTransVelMS) * c.maxRotVelRadS * acc);
  if (!Number.isFinite(vS)) {
    const rest = new Array(n).fill(0);
    return ok({
      jointNames: limits.jointNames,
      points: [{ positions: [...startRad], velocities: rest, timeFromStartS: 0 }],
    });
  }
  // The Cartesian limits alone (Pilz's trapezoid) bound the duration from below: refuse early.
  const lowerBound = trapezoid(1, vS, aS, dS).duration;
  const tooLong = (durationS: number) =>
    err<CartesianFailure>({
      reason: 'too_long',
      atS: 0,
      durationS,
      message: `the motion would take ${durationS.toPrecision(3)} s, longer than the motion timeout (${options.maxDurationS} s); raise the speed`,
    });
  if (options.maxDurationS !== undefined && lowerBound > options.maxDurationS) return tooLong(lowerBound);

  const sampled = yield* sampleJointPath(chain, limits, path, startRad, options);
  if (!sampled.ok) return sampled;
  const jp = sampled.value;
  const { dq, ddq } = pathDerivatives(jp);
  const { vMax, aMax } = scaledJointLimits(limits, scales);
  const nodes = jp.s.length;
  const xMax = new Float64Array(nodes);
  const rowC = new Float64Array(nodes * n);
  for (let i = 0; i < nodes; i++) {
    let x = vS * vS;
    for (let j = 0; j < n; j++) {
      const d = Math.abs(dq[i * n + j] as number);
      const v = (vMax[j] ?? 0) * JOINT_MARGIN;
      if (d * Math.sqrt(x) > v) x = (v / d) ** 2;
      rowC[i * n + j] = (aMax[j] ?? 0) * JOINT_MARGIN;
    }
    xMax[i] = x;
  }
  const problem: ToppProblem = { s: jp.s, xMax, rows: n, a: dq, b: ddq, c: rowC, uMin: -dS, uMax: aS };
  const timing = yield* solveTopp(problem);
  if (options.maxDurationS !== undefined && timing.durationS > options.maxDurationS) return tooLong(timing.durationS);

  // Samples: every path sample (u changes there) and every PLAN_DT_S in between, where the
  // position follows a cubic Hermite in s through the neighbouring samples and their dq/ds.
  const slopes = interpolationSlopes(jp.q, jp.s, dq, limits);
  const points: TrajectoryPoint[] = [];
  const cell = (arr: Float64Array, i: number, j: number) => arr[i * n + j] as number;
  for (let i = 0; i < nodes - 1; i++) {
    const t0 = timing.t[i] as number;
    const dt = (timing.t[i + 1] as number) - t0;
    const h = (jp.s[i + 1] as number) - (jp.s[i] as number);
    const sd0 = Math.sqrt(timing.x[i] as number);
    const u = timing.u[i] as number;
    const k = Math.max(1, Math.ceil(dt / PLAN_DT_S - 1e-6));
    for (let m = 0; m < k; m++) {
      const tau = (dt * m) / k;
      const r = (sd0 * tau + 0.5 * u * tau * tau) / h;
      const sd = sd0 + u * tau;
      const h00 = 2 * r ** 3 - 3 * r * r + 1,
        h10 = r ** 3 - 2 * r * r + r,
        h01 = -2 * r ** 3 + 3 * r * r,
        h11 = r ** 3 - r * r;
      const g00 = (6 * r * r - 6 * r) / h,
        g10 = 3 * r * r - 4 * r + 1,
        g01 = (-6 * r * r + 6 * r) / h,
        g11 = 3 * r * r - 2 * r;
      const positions: number[] = [];
      const velocities: number[] = [];
      for (let j = 0; j < n; j++) {
        const q0 = cell(jp.q, i, j),
          q1 = cell(jp.q, i + 1, j),
          d0 = cell(slopes, i, j),
          d1 = cell(slopes, i + 1, j);
        positions.push(m === 0 ? q0 : h00 * q0 + h10 * h * d0 + h01 * q1 + h11 * h * d1);
        velocities.push((g00 * q0 + g10 * d0 + g01 * q1 + g11 * d1) * sd);
      }
      points.push({ positions, velocities, timeFromStartS: t0 + tau });
    }
    if (i % 64 === 0) yield;
  }
  points.push({
    positions: Array.from(jp.q.subarray((nodes - 1) * n)),
    velocities: new Array(n).fill(0),
    timeFromStartS: timing.durationS,
  });
  const stretch = worstRatio(points, vMax, aMax);
  return ok({ jointNames: limits.jointNames, points: stretch > 1 ? stretched(points, stretch) : points });
}

/** The largest of velocity / limit and sqrt(acceleration / limit) over the segments as the controller interpolates them. */
function worstRatio(points: readonly TrajectoryPoint[], vMax: readonly number[], aMax: readonly number[]): number {
  let worst = 0;
  for (let i = 1; i < points.length; i++) {
    for (let j = 0; j < vMax.length; j++) {
      const peaks = cubicSegmentPeaks(points[i - 1] as TrajectoryPoint, points[i] as TrajectoryPoint, j);
      worst = Math.max(worst, peaks.velocity / (vMax[j] ?? 1), Math.sqrt(peaks.acceleration / (aMax[j] ?? 1)));
    }
  }
  return worst;
}

/** The same path `factor` times slower: times times factor, velocities divided by it (accelerations by its square). */
function stretched(points: readonly TrajectoryPoint[], factor: number): TrajectoryPoint[] {
  const f = factor * (1 + 1e-9);
  return points.map((p) => ({
    positions: p.positions,
    velocities: (p.velocities ?? []).map((v) => v / f),
    timeFromStartS: p.timeFromStartS * f,
  }));
}

/** The TCP pose of `qRad` on the chain as position and quaternion. */
export function tcpPose(
  chain: Chain,
  qRad: ArrayLike<number>,
): { position: [number, number, number]; orientation: Quaternion } {
  const ws = createIkWorkspace(chain).fk;
  forwardKinematics(chain, qRad, ws);
  return { position: [ws.tipPos[0] ?? 0, ws.tipPos[1] ?? 0, ws.tipPos[2] ?? 0], orientation: quatFromMat(ws.tipRot) };
}
