/**
 * The joint path of a TCP path: IK at path samples, each seeded from the last (no restarts, so
 * the arm never switches to another configuration), the step halved wherever the joints would
 * jump or the straight joint-space chord between two samples would leave the TCP path; and the
 * first and second derivatives dq/ds, d2q/ds2 at the samples by finite differences. Pure.
 */
import type { Chain } from '../kinematics/chain.ts';
import { type FkWorkspace, forwardKinematics } from '../kinematics/fk.ts';
import { createIkWorkspace, type IkOptions, solveIk } from '../kinematics/ik.ts';
import { matFromQuat, quatAngle, quatFromMat } from '../kinematics/rotation.ts';
import type { JointLimits } from '../robot/limits.ts';
import { err, ok, type Result } from '../result.ts';
import type { CartesianPath } from './paths.ts';

/** Joint positions at path samples: `q` holds N + 1 rows of `joints` values, node-major. */
export interface JointPath {
  readonly joints: number;
  readonly s: Float64Array;
  readonly q: Float64Array;
}

/** Why the path has no continuous joint path, and where (s in [0, 1]). */
export interface JointPathFailure {
  readonly reason: 'unreachable' | 'joint_limit' | 'singularity';
  readonly message: string;
  readonly atS: number;
}

/** Resolution of the joint path. */
export interface JointPathOptions {
  readonly nowMs: () => number;
  /** Largest TCP step between samples (m); default 1 mm. */
  readonly maxStepM?: number;
  /** Largest TCP rotation between samples (rad); default 0.01. */
  readonly maxStepRad?: number;
}

/** Largest change of any joint between neighbouring samples (rad): a larger one is halved. */
const MAX_JOINT_STEP_RAD = 0.05;
/** How far the middle of an interval, interpolated in joint space, may leave the TCP path (m, rad). */
const CHORD_TOL_M = 2e-5;
const CHORD_TOL_RAD = 2e-4;
/** The same for the cubic Hermite interpolation of the finished path (m, rad). */
const HERMITE_TOL_M = 1e-5;
const HERMITE_TOL_RAD = 5e-5;
/** Most initial samples; halving adds more only where needed. */
const MAX_INITIAL_INTERVALS = 4000;
/** Halvings of one step before the place counts as impassable. */
const MAX_HALVINGS = 24;

const fmt = (p: readonly number[]) => `(${p.map((v) => v.toFixed(3)).join(', ')})`;
const percent = (s: number) => `${(s * 100).toFixed(0)} % along it`;

/**
 * How far inside each joint limit the path's samples are solved (rad): the cubic interpolation between two samples
 * next to a limit overshoots them by nanoradians (a property test found 1.5e-9 rad beyond joint 6's limit).
 */
export const LIMIT_MARGIN_RAD = 1e-6;

/**
 * Samples the joint path of `path` from `startRad` (whose TCP pose must be the path's start).
 * Fails where IK has no solution within the joint limits near the last configuration (naming a
 * joint at its limit when one is), or where the joints would have to jump (a singularity the
 * path crosses). A generator that yields after every sample.
 */
export function* sampleJointPath(
  chain: Chain,
  limits: JointLimits,
  path: CartesianPath,
  startRad: readonly number[],
  options: JointPathOptions,
): Generator<void, Result<JointPath, JointPathFailure>> {
  const n = chain.jointNames.length;
  const intervals = Math.min(
    MAX_INITIAL_INTERVALS,
    Math.max(
      8,
      Math.ceil(path.lengthM / (options.maxStepM ?? 1e-3)),
      Math.ceil(path.angleRad / (options.maxStepRad ?? 0.01)),
    ),
  );
  const hMax = 1 / intervals;
  const hMin = hMax * 2 ** -MAX_HALVINGS;
  // Samples stay a hair inside the joint limits: the interpolation between two samples at a limit must not cross it.
  const minRad = limits.minRad.map((v) => v + LIMIT_MARGIN_RAD);
  const maxRad = limits.maxRad.map((v) => v - LIMIT_MARGIN_RAD);
  const ws = createIkWorkspace(chain);
  const rot = new Float64Array(9);
  const mid = new Float64Array(n);
  const seed = new Float64Array(n);
  let sList = [0];
  let qList: Float64Array[] = [Float64Array.from(startRad)];
  let h = hMax;
  let s = 0;
  while (s < 1) {
    const sNext = 1 - s <= h * 1.5 ? 1 : s + h;
    const qCur = qList[qList.length - 1] as Float64Array;
    const qPrev = qList[qList.length - 2];
    const sPrev = sList[sList.length - 2] ?? 0;
    // seed: the previous step extrapolated (fewer iterations, and the same branch)
    for (let j = 0; j < n; j++) {
      const slope = qPrev ? ((qCur[j] as number) - (qPrev[j] as number)) / (s - sPrev) : 0;
      seed[j] = (qCur[j] as number) + slope * (sNext - s);
    }
    const target = path.position(sNext);
    matFromQuat(rot, path.orientation(sNext));
    const ik = solveIk(chain, minRad, maxRad, target, rot, seed, ikOptions(options), ws);
    let jump = 0;
    let jumpJoint = 0;
    let chordOk = false;
    if (ik.status === 'converged') {
      for (let j = 0; j < n; j++) {
        const d = Math.abs((ik.qRad[j] as number) - (qCur[j] as number));
        if (d > jump) {
          jump = d;
          jumpJoint = j;
        }
        mid[j] = 0.5 * ((ik.qRad[j] as number) + (qCur[j] as number));
      }
      chordOk = onPath(chain, path, 0.5 * (s + sNext), mid, ws.fk, CHORD_TOL_M, CHORD_TOL_RAD);
    }
    if (ik.status === 'converged' && jump <= MAX_JOINT_STEP_RAD && chordOk) {
      sList.push(sNext);
      qList.push(Float64Array.from(ik.qRad));
      s = sNext;
      h = Math.min(hMax, 2 * h);
      yield;
      continue;
    }
    if (h > hMin) {
      h /= 2;
      continue;
    }
    if (ik.status !== 'converged') return err(unreachable(chain, limits, qCur, target, rot, sNext, options));
    const name = limits.jointNames[jumpJoint];
    return err({
      reason: 'singularity',
      atS: sNext,
      message: `the path crosses a singularity near ${fmt(target)} m, ${percent(sNext)}: ${name} would have to jump ${jump.toFixed(3)} rad`,
    });
  }
  // Refinement: where the interpolation the planner samples between (cubic Hermite in s, see
  // interpolationSlopes) strays from the path at an interval's middle, IK adds the middle.
  let packed = pack(sList, qList, n);
  for (let round = 0; round < MAX_REFINE_ROUNDS; round++) {
    const slopes = interpolationSlopes(packed.q, packed.s, pathDerivatives(packed).dq, limits);
    const sOut = [0];
    const qOut = [qList[0] as Float64Array];
    for (let i = 0; i + 1 < sList.length; i++) {
      const s0 = sList[i] as number;
      const h = (sList[i + 1] as number) - s0;
      for (let j = 0; j < n; j++) {
        const k0 = i * n + j;
        const k1 = k0 + n;
        seed[j] =
          0.5 * ((packed.q[k0] as number) + (packed.q[k1] as number)) +
          0.125 * h * ((slopes[k0] as number) - (slopes[k1] as number));
      }
      if (!onPath(chain, path, s0 + h / 2, seed, ws.fk, HERMITE_TOL_M, HERMITE_TOL_RAD)) {
        const sm = s0 + h / 2;
        matFromQuat(rot, path.orientation(sm));
        const ik = solveIk(chain, minRad, maxRad, path.position(sm), rot, seed, ikOptions(options), ws);
        if (ik.status === 'converged') {
          sOut.push(sm);
          qOut.push(Float64Array.from(ik.qRad));
        }
      }
      sOut.push(sList[i + 1] as number);
      qOut.push(qList[i + 1] as Float64Array);
      if (i % 64 === 0) yield;
    }
    if (sOut.length === sList.length) break;
    sList = sOut;
    qList = qOut;
    packed = pack(sList, qList, n);
  }
  return ok(packed);
}

/** Refinement rounds at most (each halves the intervals that need it). */
const MAX_REFINE_ROUNDS = 6;

/** The samples as one {@link JointPath}. */
function pack(sList: readonly number[], qList: readonly Float64Array[], n: number): JointPath {
  const q = new Float64Array(qList.length * n);
  for (let i = 0; i < qList.length; i++) q.set(qList[i] as Float64Array, i * n);
  return { joints: n, s: Float64Array.from(sList), q };
}

/** Whether FK of `qRad` lies on the path at `s` within `tolM` and `tolRad`. */
function onPath(
  chain: Chain,
  path: CartesianPath,
  s: number,
  qRad: ArrayLike<number>,
  fk: FkWorkspace,
  tolM: number,
  tolRad: number,
): boolean {
  forwardKinematics(chain, qRad, fk);
  const p = path.position(s);
  const dev = Math.hypot(
    (fk.tipPos[0] as number) - p[0],
    (fk.tipPos[1] as number) - p[1],
    (fk.tipPos[2] as number) - p[2],
  );
  return dev <= tolM && quatAngle(quatFromMat(fk.tipRot), path.orientation(s)) <= tolRad;
}

/** IK along the path: tight tolerances, from the seed only (no restarts), a few iterations. */
function ikOptions(options: JointPathOptions): IkOptions {
  return {
    posTolM: 1e-9,
    rotTolRad: 1e-9,
    deadlineMs: options.nowMs() + 5,
    nowMs: options.nowMs,
    random: Math.random,
    maxRestarts: 0,
    maxIterations: 30,
  };
}

/**
 * The failure where IK finds no solution near `qRad` within the limits: when IK with the position
 * limits widened by pi converges there, the joint furthest beyond its limit is named; otherwise
 * the point is out of reach.
 */
function unreachable(
  chain: Chain,
  limits: JointLimits,
  qRad: Float64Array,
  target: readonly number[],
  rot: Float64Array,
  s: number,
  options: JointPathOptions,
): JointPathFailure {
  const lo = limits.minRad.map((v) => v - Math.PI);
  const hi = limits.maxRad.map((v) => v + Math.PI);
  const ik = solveIk(chain, lo, hi, target, rot, qRad, ikOptions(options));
  if (ik.status === 'converged') {
    let worst = 0;
    let joint = -1;
    for (let j = 0; j < qRad.length; j++) {
      const v = ik.qRad[j] as number;
      // Beyond the limits the samples are solved within (the margin inside them); the message names the limit itself.
      const beyond = Math.max(
        (limits.minRad[j] ?? 0) + LIMIT_MARGIN_RAD - v,
        v - (limits.maxRad[j] ?? 0) + LIMIT_MARGIN_RAD,
      );
      if (beyond > worst) {
        worst = beyond;
        joint = j;
      }
    }
    if (joint >= 0) {
      const v = ik.qRad[joint] as number;
      const lower = limits.minRad[joint] ?? 0;
      const upper = limits.maxRad[joint] ?? 0;
      const bound = v - lower < upper - v ? lower : upper;
      return {
        reason: 'joint_limit',
        atS: s,
        message: `${limits.jointNames[joint]} would pass its limit (${bound} rad) at ${fmt(target)} m, ${percent(s)}`,
      };
    }
  }
  return {
    reason: 'unreachable',
    atS: s,
    message: `the path leaves the reachable workspace (within the joint limits) at ${fmt(target)} m, ${percent(s)}`,
  };
}

/**
 * dq/ds and d2q/ds2 at every sample (node-major, like `path.q`): three-point finite differences
 * on the non-uniform grid, exact for parabolas; at the ends, the parabola through the first or
 * last three samples.
 */
export function pathDerivatives(path: JointPath): { dq: Float64Array; ddq: Float64Array } {
  const n = path.joints;
  const count = path.s.length;
  const dq = new Float64Array(count * n);
  const ddq = new Float64Array(count * n);
  if (count < 2) return { dq, ddq };
  if (count === 2) {
    const h = (path.s[1] as number) - (path.s[0] as number);
    for (let j = 0; j < n; j++) {
      const d = ((path.q[n + j] as number) - (path.q[j] as number)) / h;
      dq[j] = d;
      dq[n + j] = d;
    }
    return { dq, ddq };
  }
  for (let i = 1; i < count - 1; i++) {
    const h0 = (path.s[i] as number) - (path.s[i - 1] as number);
    const h1 = (path.s[i + 1] as number) - (path.s[i] as number);
    const den = h0 * h1 * (h0 + h1);
    for (let j = 0; j < n; j++) {
      const back = (path.q[i * n + j] as number) - (path.q[(i - 1) * n + j] as number);
      const fwd = (path.q[(i + 1) * n + j] as number) - (path.q[i * n + j] as number);
      dq[i * n + j] = (h0 * h0 * fwd + h1 * h1 * back) / den;
      ddq[i * n + j] = (2 * (h0 * fwd - h1 * back)) / den;
    }
  }
  const h0 = (path.s[1] as number) - (path.s[0] as number);
  const hN = (path.s[count - 1] as number) - (path.s[count - 2] as number);
  const last = (count - 1) * n;
  for (let j = 0; j < n; j++) {
    ddq[j] = ddq[n + j] as number;
    dq[j] = (dq[n + j] as number) - (ddq[n + j] as number) * h0;
    ddq[last + j] = ddq[last - n + j] as number;
    dq[last + j] = (dq[last - n + j] as number) + (ddq[last - n + j] as number) * hN;
  }
  return { dq, ddq };
}

/**
 * dq/ds for interpolating between the path samples: the finite differences, except near the
 * position limits. A joint resting on its limit (IK holds it there while the others follow the
 * path) has slope 0, and on every interval with an end within {@link NEAR_LIMIT_RAD} of a limit
 * the slopes are limited as Fritsch and Carlson do (the chord's sign, at most three times the
 * chord), which keeps the interpolation between the samples' values, so within the limits.
 */
export function interpolationSlopes(
  q: Float64Array,
  s: Float64Array,
  dq: Float64Array,
  limits: JointLimits,
): Float64Array {
  const n = limits.jointNames.length;
  const out = Float64Array.from(dq);
  const gap = (k: number, j: number) => {
    const v = q[k * n + j] as number;
    return Math.min(v - (limits.minRad[j] ?? 0), (limits.maxRad[j] ?? 0) - v);
  };
  for (let i = 0; i + 1 < s.length; i++) {
    const h = (s[i + 1] as number) - (s[i] as number);
    for (let j = 0; j < n; j++) {
      const g0 = gap(i, j);
      const g1 = gap(i + 1, j);
      if (g0 > NEAR_LIMIT_RAD && g1 > NEAR_LIMIT_RAD) continue;
      if (g0 <= 1e-9) out[i * n + j] = 0;
      if (g1 <= 1e-9) out[(i + 1) * n + j] = 0;
      const chord = ((q[(i + 1) * n + j] as number) - (q[i * n + j] as number)) / h;
      for (const k of [i, i + 1]) {
        const d = out[k * n + j] as number;
        out[k * n + j] = d * chord <= 0 ? 0 : Math.sign(d) * Math.min(Math.abs(d), 3 * Math.abs(chord));
      }
    }
  }
  return out;
}

/** Distance from a position limit (rad) within which the interpolation is made monotone. */
const NEAR_LIMIT_RAD = 1e-3;
