/** The jog engine's pure helpers (lib/motion/jog.ts): the braking bound, a target's identity, the reference's advance. */
import { matFromAxisAngle } from '../kinematics/rotation.ts';
import type { JointSample } from '../planning/trajectory.ts';
import type { JointLimits } from '../robot/limits.ts';
import type { JogLimit, JogTarget } from './jog-types.ts';
import { JOINT_MARGIN_RAD } from './jog-tuning.ts';

/**
 * Largest velocity toward a limit `distance` away after one period of `dtS` that still allows a stop before it at
 * `acc` (trapezoid integration of the period and of the braking after it).
 */
export function brakingBound(distance: number, v: number, acc: number, dtS: number): number {
  const radicand = acc * acc * dtS * dtS + 8 * acc * (distance - (v * dtS) / 2);
  return Math.max(0, (-acc * dtS + Math.sqrt(Math.max(0, radicand))) / 2);
}

/** The same jog target (a repeated command only extends the one in force). */
export function sameTarget(a: JogTarget, b: JogTarget): boolean {
  if (a.kind === 'joints' && b.kind === 'joints') return a.fractions.every((f, i) => f === b.fractions[i]);
  if (a.kind === 'cartesian' && b.kind === 'cartesian')
    return (
      a.frame === b.frame &&
      a.linear.every((f, i) => f === b.linear[i]) &&
      a.angular.every((f, i) => f === b.angular[i])
    );
  return false;
}

/**
 * `outPos/outRot` = the reference pose `pos/rot` moved along the full `twist` (linear, then angular, in the base frame)
 * for `sTimesDt` (speed x seconds); `rotStep` is a 9-element scratch.
 */
export function advanceAlongTwist(
  twist: ArrayLike<number>,
  rotStep: Float64Array,
  pos: Float64Array,
  rot: Float64Array,
  sTimesDt: number,
  outPos: Float64Array,
  outRot: Float64Array,
): void {
  for (let a = 0; a < 3; a++) outPos[a] = (pos[a] ?? 0) + (twist[a] ?? 0) * sTimesDt;
  const wx = (twist[3] ?? 0) * sTimesDt;
  const wy = (twist[4] ?? 0) * sTimesDt;
  const wz = (twist[5] ?? 0) * sTimesDt;
  const angle = Math.hypot(wx, wy, wz);
  if (angle === 0) {
    outRot.set(rot);
    return;
  }
  const kx = wx / angle;
  const ky = wy / angle;
  const kz = wz / angle;
  const m = matFromAxisAngle(rotStep, kx, ky, kz, angle);
  for (let i = 0; i < 3; i++)
    for (let j = 0; j < 3; j++)
      outRot[3 * i + j] =
        (m[3 * i] ?? 0) * (rot[j] ?? 0) +
        (m[3 * i + 1] ?? 0) * (rot[3 + j] ?? 0) +
        (m[3 * i + 2] ?? 0) * (rot[6 + j] ?? 0);
}

/**
 * Sets `qdNext` toward `u` with every joint's change within its (`share`-scaled) acceleration limit, the change scaled
 * uniformly (the direction of the change kept), and `qNext` by the trapezoid of the period (within the position limits).
 */
export function rampToward(
  limits: JointLimits,
  state: JointSample,
  u: ArrayLike<number>,
  share: number,
  dtS: number,
  qdNext: Float64Array,
  qNext: Float64Array,
): void {
  const n = limits.jointNames.length;
  let k = 1;
  for (let j = 0; j < n; j++) {
    const dv = Math.abs((u[j] ?? 0) - (state.qd[j] ?? 0));
    const most = (limits.maxAccRadS2[j] ?? 0) * share * dtS;
    if (dv > most) k = Math.min(k, most / dv);
  }
  for (let j = 0; j < n; j++) {
    const v = state.qd[j] ?? 0;
    let next = v + k * ((u[j] ?? 0) - v);
    if (Math.abs(next) < 1e-12) next = 0;
    qdNext[j] = next;
    const q = (state.q[j] ?? 0) + ((v + next) / 2) * dtS;
    qNext[j] = Math.min(limits.maxRad[j] ?? q, Math.max(limits.minRad[j] ?? q, q));
  }
}

/**
 * The joint limit a Cartesian jog's stop point `qStop` comes within {@link JOINT_MARGIN_RAD} of, for a joint that moves
 * toward it (commanded velocity `qdNext` after the period, `qd` before).
 */
export function stopPointAtJointLimit(
  limits: JointLimits,
  qStop: Float64Array,
  qdNext: Float64Array,
  qd: ArrayLike<number>,
): JogLimit | undefined {
  const { minRad, maxRad } = limits;
  for (let j = 0; j < limits.jointNames.length; j++) {
    const q = qStop[j] ?? 0;
    const moving = (qdNext[j] ?? 0) - (qd[j] ?? 0) !== 0 || (qdNext[j] ?? 0) !== 0;
    if (!moving) continue;
    const v = qdNext[j] ?? 0;
    if ((v > 0 && q > (maxRad[j] ?? 0) - JOINT_MARGIN_RAD) || (v < 0 && q < (minRad[j] ?? 0) + JOINT_MARGIN_RAD))
      return {
        kind: 'joint_limit',
        detail: `${limits.jointNames[j]} would reach its ${v > 0 ? 'upper' : 'lower'} position limit`,
      };
  }
  return undefined;
}

/** Scales `v[at..at+2]` down to the norm `asked` (never below `floor`) when it is longer. */
export function capNorm(v: Float64Array, at: number, asked: number, floor: number): void {
  const cap = Math.max(asked, floor);
  const norm = Math.hypot(v[at] ?? 0, v[at + 1] ?? 0, v[at + 2] ?? 0);
  if (norm > cap) for (let i = at; i < at + 3; i++) v[i] = ((v[i] ?? 0) * cap) / norm;
}
