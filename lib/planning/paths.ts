/**
 * The geometric paths of the Cartesian planners: LIN's line and CIRC's arc, each with its
 * orientation slerped between the ends. Pure.
 */
import { type Quaternion, quatAngle, slerp } from '../kinematics/rotation.ts';
import { err, ok, type Result } from '../result.ts';

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
