import type { Chain } from '../kinematics/chain.ts';
import { forwardKinematics } from '../kinematics/fk.ts';
import { createIkWorkspace, solveIk } from '../kinematics/ik.ts';
import { minSingularValue6 } from '../kinematics/linalg.ts';
import { matFromQuat, type Quaternion, quatAngle, quatFromMat, slerp } from '../kinematics/rotation.ts';
import type { JointLimits } from '../robot/limits.ts';
import { err, ok, type Result } from '../result.ts';
import { effectiveAccelScale, type MotionScales } from './limits.ts';
import { profileSampleTimes, sampleTrapezoid, trapezoid } from './profile.ts';
import { PLAN_DT_S } from './ptp.ts';
import { cubicSegmentPeaks, type JointTrajectory, type TrajectoryPoint } from './trajectory.ts';

/** A TCP path parameterized by s in [0, 1]: position (m) and orientation along it. */
export interface CartesianPath {
  /** Path length of the TCP (m). */
  readonly lengthM: number;
  /** Total rotation of the TCP (rad). */
  readonly angleRad: number;
  /** Position at s. */
  position(s: number): [number, number, number];
  /** Orientation at s (slerp between the ends). */
  orientation(s: number): Quaternion;
}

type Vec3 = [number, number, number];
const sub = (a: readonly number[], b: readonly number[]): Vec3 => [
  (a[0] ?? 0) - (b[0] ?? 0),
  (a[1] ?? 0) - (b[1] ?? 0),
  (a[2] ?? 0) - (b[2] ?? 0),
];
const dot = (a: Vec3, b: Vec3) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
const cross = (a: Vec3, b: Vec3): Vec3 => [
  a[1] * b[2] - a[2] * b[1],
  a[2] * b[0] - a[0] * b[2],
  a[0] * b[1] - a[1] * b[0],
];
const norm = (a: Vec3) => Math.hypot(a[0], a[1], a[2]);
const scale = (a: Vec3, k: number): Vec3 => [a[0] * k, a[1] * k, a[2] * k];

/** Straight line from p0 to p1 with slerped orientation. */
export function linePath(p0: readonly number[], q0: Quaternion, p1: readonly number[], q1: Quaternion): CartesianPath {
  const d = sub(p1, p0);
  return {
    lengthM: norm(d),
    angleRad: quatAngle(q0, q1),
    position: (s) => [(p0[0] ?? 0) + d[0] * s, (p0[1] ?? 0) + d[1] * s, (p0[2] ?? 0) + d[2] * s],
    orientation: (s) => slerp(q0, q1, s),
  };
}

/** The auxiliary point of a CIRC motion: the arc's centre, or a point the arc passes through. */
export type CircAux = { readonly center: readonly number[] } | { readonly interim: readonly number[] };

/**
 * Circular arc from p0 to p1. With a centre, both ends must lie at the same distance from it
 * (1 mm tolerance) and the arc is the shorter one; with an interim point, the arc is the circle
 * through the three points, in the order p0 -> interim -> p1.
 */
export function arcPath(
  p0: readonly number[],
  q0: Quaternion,
  p1: readonly number[],
  q1: Quaternion,
  aux: CircAux,
): Result<CartesianPath, string> {
  let center: Vec3;
  let sweep: number;
  let normal: Vec3;
  const a = sub(p0, [0, 0, 0]);
  const b = sub(p1, [0, 0, 0]);
  if ('center' in aux) {
    center = sub(aux.center, [0, 0, 0]);
    const ra = sub(a, center);
    const rb = sub(b, center);
    if (Math.abs(norm(ra) - norm(rb)) > 1e-3) {
      return err(
        `circ_center is ${norm(ra).toFixed(4)} m from the start but ${norm(rb).toFixed(4)} m from the goal; both must be equal`,
      );
    }
    if (norm(ra) < 1e-4) return err('circ_center coincides with the start point');
    normal = cross(ra, rb);
    if (norm(normal) < 1e-6 * norm(ra) * norm(rb))
      return err('start, circ_center and goal are collinear: the arc plane is undefined (use circ_interim)');
    sweep = Math.atan2(norm(normal), dot(ra, rb));
  } else {
    const m = sub(aux.interim, [0, 0, 0]);
    const ab = sub(m, a);
    const ac = sub(b, a);
    const n = cross(ab, ac);
    const n2 = dot(n, n);
    if (n2 < 1e-12 * dot(ab, ab) * dot(ac, ac))
      return err('start, circ_interim and goal are collinear: no circle passes through them');
    // circumcentre of triangle a, m, b
    const t1 = scale(cross(n, ab), dot(ac, ac));
    const t2 = scale(cross(ac, n), dot(ab, ab));
    center = [a[0] + (t1[0] + t2[0]) / (2 * n2), a[1] + (t1[1] + t2[1]) / (2 * n2), a[2] + (t1[2] + t2[2]) / (2 * n2)];
    normal = n;
    const ra = sub(a, center);
    const rb = sub(b, center);
    sweep = Math.atan2(dot(cross(ra, rb), scale(n, 1 / Math.sqrt(n2))), dot(ra, rb));
    if (sweep < 0) sweep += 2 * Math.PI;
  }
  const axis = scale(normal, 1 / norm(normal));
  const r0 = sub(a, center);
  const radius = norm(r0);
  const u = cross(axis, r0);
  return ok({
    lengthM: radius * sweep,
    angleRad: quatAngle(q0, q1),
    position: (s) => {
      const phi = sweep * s;
      const c = Math.cos(phi),
        sn = Math.sin(phi);
      return [center[0] + r0[0] * c + u[0] * sn, center[1] + r0[1] * c + u[1] * sn, center[2] + r0[2] * c + u[2] * sn];
    },
    orientation: (s) => slerp(q0, q1, s),
  });
}

/** Why a Cartesian motion cannot be executed, and where along the path (0..1 and the TCP point). */
export interface CartesianFailure {
  readonly reason: 'unreachable' | 'singularity' | 'joint_velocity' | 'joint_acceleration' | 'too_long';
  readonly message: string;
  readonly atS: number;
  /** The planned duration (s), for 'too_long'. */
  readonly durationS?: number;
}

export interface CartesianOptions {
  readonly nowMs: () => number;
  /** Smallest singular value of the Jacobian tolerated along the path; default 0.01. */
  readonly minSingularValue?: number;
  /** Longest motion planned (s): a longer one fails before anything is sampled. Default: no bound. */
  readonly maxDurationS?: number;
}

const fmt = (p: readonly number[]) => `(${p.map((v) => v.toFixed(3)).join(', ')})`;

/**
 * Time-parameterizes a TCP path with Pilz's Cartesian limits (translation and rotation velocity
 * and acceleration, scaled), solves IK along it with continuity (each point seeded from the last,
 * no restarts) and checks every sample: reachable, away from singularities, joint velocities and
 * accelerations within the (unscaled) joint limits. Returns the joint trajectory or the first
 * violation with where it happens.
 */
export function planCartesian(
  chain: Chain,
  limits: JointLimits,
  path: CartesianPath,
  startRad: readonly number[],
  scales: MotionScales,
  options: CartesianOptions,
): Result<JointTrajectory, CartesianFailure> {
  const steps = planCartesianSteps(chain, limits, path, startRad, scales, options);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** {@link planCartesian} as a generator that yields after every path sample (see runSliced). */
export function* planCartesianSteps(
  chain: Chain,
  limits: JointLimits,
  path: CartesianPath,
  startRad: readonly number[],
  scales: MotionScales,
  options: CartesianOptions,
): Generator<void, Result<JointTrajectory, CartesianFailure>> {
  const c = limits.cartesian;
  const acc = effectiveAccelScale(scales);
  const rotAcc = (c.maxTransAccMS2 / c.maxTransVelMS) * c.maxRotVelRadS;
  const rotDec = (c.maxTransDecMS2 / c.maxTransVelMS) * c.maxRotVelRadS;
  const bounds = (lin: number, rot: number) =>
    Math.min(
      path.lengthM > 1e-9 ? lin / path.lengthM : Number.POSITIVE_INFINITY,
      path.angleRad > 1e-9 ? rot / path.angleRad : Number.POSITIVE_INFINITY,
    );
  const vS = bounds(c.maxTransVelMS * scales.speed, c.maxRotVelRadS * scales.speed);
  const aS = bounds(c.maxTransAccMS2 * acc, rotAcc * acc);
  const dS = bounds(c.maxTransDecMS2 * acc, rotDec * acc);
  const n = chain.jointNames.length;
  if (!Number.isFinite(vS)) {
    return ok({
      jointNames: limits.jointNames,
      points: [{ positions: [...startRad], velocities: new Array(n).fill(0), timeFromStartS: 0 }],
    });
  }
  const profile = trapezoid(1, vS, aS, dS);
  if (options.maxDurationS !== undefined && profile.duration > options.maxDurationS) {
    const message = `the motion would take ${profile.duration.toPrecision(3)} s, longer than the motion timeout (${options.maxDurationS} s); raise the speed`;
    return err({ reason: 'too_long', atS: 0, message, durationS: profile.duration });
  }
  const times = profileSampleTimes(profile, PLAN_DT_S);
  const ws = createIkWorkspace(chain);
  const svdWork = new Float64Array(72);
  const rot = new Float64Array(9);
  const minSv = options.minSingularValue ?? 0.01;
  let seed: Float64Array = Float64Array.from(startRad);
  const positions: Float64Array[] = [];
  const sValues: number[] = [];
  for (const t of times) {
    const s = sampleTrapezoid(profile, t).s;
    const target = path.position(s);
    matFromQuat(rot, path.orientation(s));
    const ik = solveIk(
      chain,
      limits.minRad,
      limits.maxRad,
      target,
      rot,
      seed,
      {
        posTolM: 1e-7,
        rotTolRad: 1e-7,
        deadlineMs: options.nowMs() + 5,
        nowMs: options.nowMs,
        random: Math.random,
        maxRestarts: 0,
        maxIterations: 30,
      },
      ws,
    );
    if (ik.status !== 'converged') {
      return err({
        reason: 'unreachable',
        atS: s,
        message: `the path leaves the reachable workspace (within the joint limits) at ${fmt(target)} m, ${(s * 100).toFixed(0)} % along it`,
      });
    }
    forwardKinematics(chain, ik.qRad, ws.fk, true);
    const sv = minSingularValue6(ws.fk.jacobian, n, svdWork);
    if (sv < minSv) {
      return err({
        reason: 'singularity',
        atS: s,
        message: `the path crosses a singularity near ${fmt(target)} m, ${(s * 100).toFixed(0)} % along it (smallest singular value ${sv.toExponential(2)})`,
      });
    }
    positions.push(ik.qRad);
    sValues.push(s);
    seed = ik.qRad;
    yield;
  }
  // Velocities by central differences on the (non-uniform) sample times; then each segment is
  // checked as the controller will interpolate it (cubic Hermite), so no sample between the IK
  // points can exceed a limit.
  const vel = (i: number, j: number) => {
    if (i <= 0 || i >= times.length - 1) return 0;
    const h0 = (times[i] ?? 0) - (times[i - 1] ?? 0),
      h1 = (times[i + 1] ?? 0) - (times[i] ?? 0);
    const q0 = positions[i - 1]?.[j] ?? 0,
      q1 = positions[i]?.[j] ?? 0,
      q2 = positions[i + 1]?.[j] ?? 0;
    return (h0 * h0 * (q2 - q1) + h1 * h1 * (q1 - q0)) / (h0 * h1 * (h0 + h1));
  };
  const points: TrajectoryPoint[] = times.map((t, i) => ({
    positions: Array.from(positions[i] ?? []),
    velocities: Array.from({ length: n }, (_, j) => vel(i, j)),
    timeFromStartS: t,
  }));
  for (let i = 1; i < points.length; i++) {
    for (let j = 0; j < n; j++) {
      const peaks = cubicSegmentPeaks(points[i - 1] as TrajectoryPoint, points[i] as TrajectoryPoint, j);
      const where = fmt(path.position(sValues[i] ?? 0));
      if (peaks.velocity > (limits.maxVelRadS[j] ?? 0)) {
        return err({
          reason: 'joint_velocity',
          atS: sValues[i] ?? 0,
          message: `${limits.jointNames[j]} would need ${peaks.velocity.toFixed(2)} rad/s (limit ${limits.maxVelRadS[j]}) near ${where} m; lower the speed or use ptp`,
        });
      }
      if (peaks.acceleration > (limits.maxAccRadS2[j] ?? 0)) {
        return err({
          reason: 'joint_acceleration',
          atS: sValues[i] ?? 0,
          message: `${limits.jointNames[j]} would need ${peaks.acceleration.toFixed(1)} rad/s^2 (limit ${limits.maxAccRadS2[j]}) near ${where} m; lower the speed or use ptp`,
        });
      }
    }
  }
  return ok({ jointNames: limits.jointNames, points });
}

/** The TCP pose of `qRad` on the chain as position and quaternion. */
export function tcpPose(chain: Chain, qRad: ArrayLike<number>): { position: Vec3; orientation: Quaternion } {
  const ws = createIkWorkspace(chain).fk;
  forwardKinematics(chain, qRad, ws);
  return { position: [ws.tipPos[0] ?? 0, ws.tipPos[1] ?? 0, ws.tipPos[2] ?? 0], orientation: quatFromMat(ws.tipRot) };
}
