import type { Chain } from './chain.ts';
import { matFromAxisAngle } from './rotation.ts';

/** Preallocated buffers for FK and Jacobians of one chain (no allocation per call). */
export interface FkWorkspace {
  /** Tip position (m) and row-major rotation in the base frame, after {@link forwardKinematics}. */
  readonly tipPos: Float64Array;
  readonly tipRot: Float64Array;
  /** World axis and origin of each joint (3 per joint). */
  readonly axisW: Float64Array;
  readonly originW: Float64Array;
  /** Geometric Jacobian, row-major 6 x n: rows vx, vy, vz, wx, wy, wz. */
  readonly jacobian: Float64Array;
  readonly rot: Float64Array;
  readonly tmp: Float64Array;
  readonly identityOrigin: Uint8Array;
}

/** Allocates a workspace for `chain`. */
export function createFkWorkspace(chain: Chain): FkWorkspace {
  const n = chain.jointNames.length;
  const identityOrigin = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const r = chain.originRot.subarray(9 * i, 9 * i + 9);
    identityOrigin[i] =
      r[0] === 1 &&
      r[4] === 1 &&
      r[8] === 1 &&
      r[1] === 0 &&
      r[2] === 0 &&
      r[3] === 0 &&
      r[5] === 0 &&
      r[6] === 0 &&
      r[7] === 0
        ? 1
        : 0;
  }
  return {
    tipPos: new Float64Array(3),
    tipRot: new Float64Array(9),
    axisW: new Float64Array(3 * n),
    originW: new Float64Array(3 * n),
    jacobian: new Float64Array(6 * n),
    rot: new Float64Array(9),
    tmp: new Float64Array(9),
    identityOrigin,
  };
}

/** r = r * m for row-major 3x3 `r` and `m` (m at offset `mo`), using `tmp`. */
function mulRight(r: Float64Array, m: ArrayLike<number>, mo: number, tmp: Float64Array): void {
  for (let i = 0; i < 3; i++) {
    const a0 = r[3 * i] as number,
      a1 = r[3 * i + 1] as number,
      a2 = r[3 * i + 2] as number;
    tmp[3 * i] = a0 * (m[mo] as number) + a1 * (m[mo + 3] as number) + a2 * (m[mo + 6] as number);
    tmp[3 * i + 1] = a0 * (m[mo + 1] as number) + a1 * (m[mo + 4] as number) + a2 * (m[mo + 7] as number);
    tmp[3 * i + 2] = a0 * (m[mo + 2] as number) + a1 * (m[mo + 5] as number) + a2 * (m[mo + 8] as number);
  }
  r.set(tmp);
}

/**
 * Forward kinematics of `chain` at `qRad`: fills the workspace's tip pose and each joint's world
 * axis and origin. With `withJacobian`, also the 6 x n geometric Jacobian of the tip.
 */
export function forwardKinematics(chain: Chain, qRad: ArrayLike<number>, ws: FkWorkspace, withJacobian = false): void {
  const n = chain.jointNames.length;
  const { tipPos: p, tipRot: r, tmp } = ws;
  p[0] = 0;
  p[1] = 0;
  p[2] = 0;
  r.fill(0);
  r[0] = 1;
  r[4] = 1;
  r[8] = 1;
  const rot = ws.rot;
  for (let i = 0; i < n; i++) {
    const o0 = chain.originPos[3 * i] as number,
      o1 = chain.originPos[3 * i + 1] as number,
      o2 = chain.originPos[3 * i + 2] as number;
    p[0] = (p[0] as number) + (r[0] as number) * o0 + (r[1] as number) * o1 + (r[2] as number) * o2;
    p[1] = (p[1] as number) + (r[3] as number) * o0 + (r[4] as number) * o1 + (r[5] as number) * o2;
    p[2] = (p[2] as number) + (r[6] as number) * o0 + (r[7] as number) * o1 + (r[8] as number) * o2;
    if (!ws.identityOrigin[i]) mulRight(r, chain.originRot, 9 * i, tmp);
    const kx = chain.axis[3 * i] as number,
      ky = chain.axis[3 * i + 1] as number,
      kz = chain.axis[3 * i + 2] as number;
    ws.axisW[3 * i] = (r[0] as number) * kx + (r[1] as number) * ky + (r[2] as number) * kz;
    ws.axisW[3 * i + 1] = (r[3] as number) * kx + (r[4] as number) * ky + (r[5] as number) * kz;
    ws.axisW[3 * i + 2] = (r[6] as number) * kx + (r[7] as number) * ky + (r[8] as number) * kz;
    ws.originW[3 * i] = p[0] as number;
    ws.originW[3 * i + 1] = p[1] as number;
    ws.originW[3 * i + 2] = p[2] as number;
    mulRight(r, matFromAxisAngle(rot, kx, ky, kz, qRad[i] ?? 0), 0, tmp);
  }
  const t0 = chain.tipPos[0] as number,
    t1 = chain.tipPos[1] as number,
    t2 = chain.tipPos[2] as number;
  p[0] = (p[0] as number) + (r[0] as number) * t0 + (r[1] as number) * t1 + (r[2] as number) * t2;
  p[1] = (p[1] as number) + (r[3] as number) * t0 + (r[4] as number) * t1 + (r[5] as number) * t2;
  p[2] = (p[2] as number) + (r[6] as number) * t0 + (r[7] as number) * t1 + (r[8] as number) * t2;
  mulRight(r, chain.tipRot, 0, tmp);
  if (!withJacobian) return;
  const J = ws.jacobian;
  for (let i = 0; i < n; i++) {
    const zx = ws.axisW[3 * i] as number,
      zy = ws.axisW[3 * i + 1] as number,
      zz = ws.axisW[3 * i + 2] as number;
    const dx = (p[0] as number) - (ws.originW[3 * i] as number);
    const dy = (p[1] as number) - (ws.originW[3 * i + 1] as number);
    const dz = (p[2] as number) - (ws.originW[3 * i + 2] as number);
    J[i] = zy * dz - zz * dy;
    J[n + i] = zz * dx - zx * dz;
    J[2 * n + i] = zx * dy - zy * dx;
    J[3 * n + i] = zx;
    J[4 * n + i] = zy;
    J[5 * n + i] = zz;
  }
}

/**
 * Pose error from current (p, R) to target (pT, RT) in the base frame: translation pT - p
 * into out[0..2], and the rotation vector of RT R^T into out[3..5]. Returns nothing; pure.
 */
export function poseError(
  out: Float64Array,
  p: ArrayLike<number>,
  r: ArrayLike<number>,
  pT: ArrayLike<number>,
  rT: ArrayLike<number>,
): void {
  out[0] = (pT[0] as number) - (p[0] as number);
  out[1] = (pT[1] as number) - (p[1] as number);
  out[2] = (pT[2] as number) - (p[2] as number);
  // E = RT R^T
  const e = (i: number, j: number) =>
    (rT[3 * i] as number) * (r[3 * j] as number) +
    (rT[3 * i + 1] as number) * (r[3 * j + 1] as number) +
    (rT[3 * i + 2] as number) * (r[3 * j + 2] as number);
  const e00 = e(0, 0),
    e11 = e(1, 1),
    e22 = e(2, 2);
  const vx = (e(2, 1) - e(1, 2)) / 2,
    vy = (e(0, 2) - e(2, 0)) / 2,
    vz = (e(1, 0) - e(0, 1)) / 2;
  const sin = Math.hypot(vx, vy, vz);
  const cos = (e00 + e11 + e22 - 1) / 2;
  const angle = Math.atan2(sin, cos);
  if (sin > 1e-7) {
    const k = angle / sin;
    out[3] = vx * k;
    out[4] = vy * k;
    out[5] = vz * k;
  } else if (cos > 0) {
    out[3] = vx;
    out[4] = vy;
    out[5] = vz;
  } else {
    // angle near pi: axis from the diagonal of E = 2 k k^T - I
    const ax = Math.sqrt(Math.max(0, (e00 + 1) / 2));
    const ay = Math.sqrt(Math.max(0, (e11 + 1) / 2)) * (e(0, 1) + e(1, 0) >= 0 ? 1 : -1);
    const az = Math.sqrt(Math.max(0, (e22 + 1) / 2)) * (e(0, 2) + e(2, 0) >= 0 ? 1 : -1);
    const norm = Math.hypot(ax, ay, az) || 1;
    out[3] = (ax / norm) * angle;
    out[4] = (ay / norm) * angle;
    out[5] = (az / norm) * angle;
  }
}
