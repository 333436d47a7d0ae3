/**
 * An independent forward kinematics of the iiwa 7 from standard Denavit-Hartenberg parameters
 * (d = 0.34, 0, 0.4, 0, 0.4, 0, 0.126 m; alpha = -pi/2, pi/2, pi/2, -pi/2, -pi/2, pi/2, 0;
 * a = 0), written with plain 4x4 matrices. Tests compare the simulator's FK with it.
 */
const D = [0.34, 0, 0.4, 0, 0.4, 0, 0.126];
const ALPHA = [-Math.PI / 2, Math.PI / 2, Math.PI / 2, -Math.PI / 2, -Math.PI / 2, Math.PI / 2, 0];

type Mat4 = number[][];

function dh(theta: number, d: number, alpha: number): Mat4 {
  const ct = Math.cos(theta),
    st = Math.sin(theta),
    ca = Math.cos(alpha),
    sa = Math.sin(alpha);
  return [
    [ct, -st * ca, st * sa, 0],
    [st, ct * ca, -ct * sa, 0],
    [0, sa, ca, d],
    [0, 0, 0, 1],
  ];
}

function mul(a: Mat4, b: Mat4): Mat4 {
  return a.map((row) => [0, 1, 2, 3].map((j) => row.reduce((sum, v, k) => sum + v * (b[k]?.[j] ?? 0), 0)));
}

/** Flange pose by DH: position (m) and row-major rotation. */
export function dhFlangePose(q: readonly number[]): { position: number[]; rotation: number[] } {
  let t: Mat4 = [
    [1, 0, 0, 0],
    [0, 1, 0, 0],
    [0, 0, 1, 0],
    [0, 0, 0, 1],
  ];
  for (let i = 0; i < 7; i++) t = mul(t, dh(q[i] ?? 0, D[i] ?? 0, ALPHA[i] ?? 0));
  return {
    position: [t[0]?.[3] ?? 0, t[1]?.[3] ?? 0, t[2]?.[3] ?? 0],
    rotation: [0, 1, 2].flatMap((r) => [0, 1, 2].map((c) => t[r]?.[c] ?? 0)),
  };
}
