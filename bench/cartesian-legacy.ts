/**
 * The refusing Cartesian planner of the previous round (lib/planning/cartesian.ts before
 * time-optimal timing), unchanged but for its name, as the bench's baseline for LIN and CIRC
 * durations. Not used by the service.
 */
import type { Chain } from '../lib/kinematics/chain.ts';
import { forwardKinematics } from '../lib/kinematics/fk.ts';
import { createIkWorkspace, solveIk } from '../lib/kinematics/ik.ts';
import { minSingularValue6 } from '../lib/kinematics/linalg.ts';
import { matFromQuat } from '../lib/kinematics/rotation.ts';
import { effectiveAccelScale, type MotionScales } from '../lib/planning/limits.ts';
import type { CartesianPath } from '../lib/planning/paths.ts';
import { profileSampleTimes, sampleTrapezoid, trapezoid } from '../lib/planning/profile.ts';
import { PLAN_DT_S } from '../lib/planning/ptp.ts';
import { cubicSegmentPeaks, type JointTrajectory, type TrajectoryPoint } from '../lib/planning/trajectory.ts';
import type { JointLimits } from '../lib/robot/limits.ts';
import { err, ok, type Result } from '../lib/result.ts';

/** Why a Cartesian motion cannot be executed, and where along the path (0..1 and the TCP point). */
interface CartesianFailure {
  readonly reason: 'unreachable' | 'singularity' | 'joint_velocity' | 'joint_acceleration' | 'too_long';
  readonly message: string;
  readonly atS: number;
  /** The planned duration (s), for 'too_long'. */
  readonly durationS?: number;
}

interface CartesianOptions {
  readonly nowMs: () => number;
  /** Smallest singular value of the Jacobian tolerated along the path; default 0.01. */
  readonly minSingularValue?: number;
  /** Longest motion planned (s): a longer one fails before anything is sampled. Default: no bound. */
  readonly maxDurationS?: number;
}

const fmt = (p: readonly number[]) => `(${p.map((v) => v.toFixed(3)).join(', ')})`;

/**
 * The Cartesian planner armgate had before time-optimal timing, kept for the bench only: Pilz's
 * trapezoid on the Cartesian limits (scaled), IK at every 4 ms sample, and a refusal when any
 * joint would exceed its velocity or acceleration limit or the path nears a singularity.
 */
export function* planCartesianLegacy(
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
