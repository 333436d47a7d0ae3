/**
 * Rotations as plain data: 3x3 matrices are row-major Float64Array(9); quaternions are
 * {x, y, z, w} with w >= 0 after normalization; KUKA ABC angles are R = Rz(A) * Ry(B) * Rx(C)
 * (A about Z, then B about the new Y, then C about the new X), in radians.
 */

export interface Quaternion {
  x: number;
  y: number;
  z: number;
  w: number;
}
export interface Abc {
  a: number;
  b: number;
  c: number;
}

/** Writes the rotation matrix of KUKA ABC angles into `out` and returns it. */
export function matFromAbc(out: Float64Array, a: number, b: number, c: number): Float64Array {
  const ca = Math.cos(a),
    sa = Math.sin(a);
  const cb = Math.cos(b),
    sb = Math.sin(b);
  const cc = Math.cos(c),
    sc = Math.sin(c);
  out[0] = ca * cb;
  out[1] = ca * sb * sc - sa * cc;
  out[2] = ca * sb * cc + sa * sc;
  out[3] = sa * cb;
  out[4] = sa * sb * sc + ca * cc;
  out[5] = sa * sb * cc - ca * sc;
  out[6] = -sb;
  out[7] = cb * sc;
  out[8] = cb * cc;
  return out;
}

/**
 * Writes the rotation by `angle` about the unit axis (kx, ky, kz) into `out` and returns it (Rodrigues:
 * Rot(k, angle) = c I + s [k]x + (1 - c) k k^T).
 */
export function matFromAxisAngle(out: Float64Array, kx: number, ky: number, kz: number, angle: number): Float64Array {
  const c = Math.cos(angle),
    s = Math.sin(angle),
    v = 1 - c;
  out[0] = c + kx * kx * v;
  out[1] = kx * ky * v - kz * s;
  out[2] = kx * kz * v + ky * s;
  out[3] = ky * kx * v + kz * s;
  out[4] = c + ky * ky * v;
  out[5] = ky * kz * v - kx * s;
  out[6] = kz * kx * v - ky * s;
  out[7] = kz * ky * v + kx * s;
  out[8] = c + kz * kz * v;
  return out;
}

/**
 * KUKA ABC angles of a rotation matrix, A and C in (-pi, pi], B in [-pi/2, pi/2].
 * At gimbal lock (B = +-pi/2) C is set to 0 and A carries the whole rotation about Z.
 */
export function abcFromMat(m: ArrayLike<number>): Abc {
  const r00 = m[0] ?? 1,
    r01 = m[1] ?? 0,
    r10 = m[3] ?? 0,
    r11 = m[4] ?? 1;
  const r20 = m[6] ?? 0,
    r21 = m[7] ?? 0,
    r22 = m[8] ?? 1;
  const cb = Math.hypot(r00, r10);
  const b = Math.atan2(-r20, cb);
  if (cb > 1e-9) return { a: Math.atan2(r10, r00), b, c: Math.atan2(r21, r22) };
  // B = +-pi/2: only A -/+ C is defined; put it all into A.
  return { a: Math.atan2(-r01, r11), b, c: 0 };
}

/** Unit quaternion of a rotation matrix (Shepperd's method), with w >= 0. */
export function quatFromMat(m: ArrayLike<number>): Quaternion {
  const r00 = m[0] ?? 1,
    r01 = m[1] ?? 0,
    r02 = m[2] ?? 0;
  const r10 = m[3] ?? 0,
    r11 = m[4] ?? 1,
    r12 = m[5] ?? 0;
  const r20 = m[6] ?? 0,
    r21 = m[7] ?? 0,
    r22 = m[8] ?? 1;
  const trace = r00 + r11 + r22;
  let x: number, y: number, z: number, w: number;
  if (trace > 0) {
    const s = 2 * Math.sqrt(trace + 1);
    w = 0.25 * s;
    x = (r21 - r12) / s;
    y = (r02 - r20) / s;
    z = (r10 - r01) / s;
  } else if (r00 > r11 && r00 > r22) {
    const s = 2 * Math.sqrt(1 + r00 - r11 - r22);
    w = (r21 - r12) / s;
    x = 0.25 * s;
    y = (r01 + r10) / s;
    z = (r02 + r20) / s;
  } else if (r11 > r22) {
    const s = 2 * Math.sqrt(1 + r11 - r00 - r22);
    w = (r02 - r20) / s;
    x = (r01 + r10) / s;
    y = 0.25 * s;
    z = (r12 + r21) / s;
  } else {
    const s = 2 * Math.sqrt(1 + r22 - r00 - r11);
    w = (r10 - r01) / s;
    x = (r02 + r20) / s;
    y = (r12 + r21) / s;
    z = 0.25 * s;
  }
  return normalizeQuat({ x, y, z, w });
}

/** Writes the rotation matrix of a (not necessarily unit) quaternion into `out`. */
export function matFromQuat(out: Float64Array, q: Quaternion): Float64Array {
  const { x, y, z, w } = normalizeQuat(q);
  out[0] = 1 - 2 * (y * y + z * z);
  out[1] = 2 * (x * y - z * w);
  out[2] = 2 * (x * z + y * w);
  out[3] = 2 * (x * y + z * w);
  out[4] = 1 - 2 * (x * x + z * z);
  out[5] = 2 * (y * z - x * w);
  out[6] = 2 * (x * z - y * w);
  out[7] = 2 * (y * z + x * w);
  out[8] = 1 - 2 * (x * x + y * y);
  return out;
}

/** The quaternion scaled to unit length, sign chosen so that w >= 0. */
export function normalizeQuat(q: Quaternion): Quaternion {
  const n = Math.hypot(q.x, q.y, q.z, q.w);
  const s = (q.w < 0 ? -1 : 1) / (n > 0 ? n : 1);
  return n > 0 ? { x: q.x * s, y: q.y * s, z: q.z * s, w: q.w * s } : { x: 0, y: 0, z: 0, w: 1 };
}

/** Quaternion of KUKA ABC angles. */
export function quatFromAbc(abc: Abc): Quaternion {
  return quatFromMat(matFromAbc(new Float64Array(9), abc.a, abc.b, abc.c));
}

/** KUKA ABC angles of a quaternion. */
export function abcFromQuat(q: Quaternion): Abc {
  return abcFromMat(matFromQuat(new Float64Array(9), q));
}

/** Spherical linear interpolation between unit quaternions (shortest arc), t in [0, 1]. */
export function slerp(a: Quaternion, b: Quaternion, t: number): Quaternion {
  let { x, y, z, w } = b;
  let dot = a.x * x + a.y * y + a.z * z + a.w * w;
  if (dot < 0) {
    x = -x;
    y = -y;
    z = -z;
    w = -w;
    dot = -dot;
  }
  if (dot > 0.9995) {
    return normalizeQuat({
      x: a.x + t * (x - a.x),
      y: a.y + t * (y - a.y),
      z: a.z + t * (z - a.z),
      w: a.w + t * (w - a.w),
    });
  }
  const theta = Math.acos(Math.min(1, dot));
  const sa = Math.sin((1 - t) * theta) / Math.sin(theta);
  const sb = Math.sin(t * theta) / Math.sin(theta);
  return normalizeQuat({ x: sa * a.x + sb * x, y: sa * a.y + sb * y, z: sa * a.z + sb * z, w: sa * a.w + sb * w });
}

/** Angle (rad, 0..pi) of the rotation between two unit quaternions. */
export function quatAngle(a: Quaternion, b: Quaternion): number {
  const dot = Math.abs(a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w);
  return 2 * Math.acos(Math.min(1, dot));
}
