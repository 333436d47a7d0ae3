/**
 * A numeric inverse kinematics for the test stack: damped least squares on the 6-D pose error with
 * the analytic Jacobian, joint values clamped to their limits, restarted from random seeds until a
 * solution is found or the time budget runs out (the first attempt, from the seed, always runs).
 * Pure math.
 */
import { at, jacobianFrames, type Pose, type RobotModel, rotationError, type Vec3 } from './model.ts';

/** KDL's default accuracy. */
const POSITION_EPS = 1e-5;
const ANGLE_EPS = 1e-5;
const ITERATIONS = 300;
const DAMPING = 0.05;

/** Solves A x = b for a small dense system (Gaussian elimination, partial pivoting; rows of [A | b]). */
function solve(a: readonly number[][], b: readonly number[]): number[] | undefined {
  const n = b.length;
  const m = a.map((row, i) => [...row, at(b, i)]);
  for (let c = 0; c < n; c++) {
    let pivot = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(at(at(m, r), c)) > Math.abs(at(at(m, pivot), c))) pivot = r;
    const top = at(m, pivot);
    if (Math.abs(at(top, c)) < 1e-14) return undefined;
    m[pivot] = at(m, c);
    m[c] = top;
    for (let r = c + 1; r < n; r++) {
      const row = at(m, r);
      const f = at(row, c) / at(top, c);
      for (let k = c; k <= n; k++) row[k] = at(row, k) - f * at(top, k);
    }
  }
  const x = new Array<number>(n).fill(0);
  for (let r = n - 1; r >= 0; r--) {
    const row = at(m, r);
    let s = at(row, n);
    for (let k = r + 1; k < n; k++) s -= at(row, k) * at(x, k);
    x[r] = s / at(row, r);
  }
  return x;
}

const cross = (a: Vec3, b: Vec3): Vec3 => [
  a[1] * b[2] - a[2] * b[1],
  a[2] * b[0] - a[0] * b[2],
  a[0] * b[1] - a[1] * b[0],
];

/** One attempt from a seed: the joint values reaching the pose within the limits, or undefined. */
function attempt(model: RobotModel, link: string, target: Pose, seed: readonly number[]): number[] | undefined {
  const q = model.limits.map((l, i) => Math.min(l.max, Math.max(l.min, seed[i] ?? 0)));
  for (let it = 0; it < ITERATIONS; it++) {
    const frames = jacobianFrames(model, q, link);
    if (!frames) return undefined;
    const { pose, axes } = frames;
    const ep: Vec3 = [target.p[0] - pose.p[0], target.p[1] - pose.p[1], target.p[2] - pose.p[2]];
    const ew = rotationError(pose.q, target.q);
    const errP = Math.hypot(...ep);
    const errW = Math.hypot(...ew);
    if (errP < POSITION_EPS && errW < ANGLE_EPS) return q;
    // Limit the step so that the linearisation holds.
    const scale = Math.min(1, 0.2 / Math.max(errP, 1e-9), 0.5 / Math.max(errW, 1e-9));
    const e = [...ep, ...ew].map((v) => v * scale);
    // J (6 x n): columns [a x (p - o); a].
    const columns = axes.map(({ axis, origin }) => {
      const lin = cross(axis, [pose.p[0] - origin[0], pose.p[1] - origin[1], pose.p[2] - origin[2]]);
      return [...lin, ...axis];
    });
    const jjt = Array.from({ length: 6 }, (_, r) =>
      Array.from(
        { length: 6 },
        (_, c) => columns.reduce((s, col) => s + at(col, r) * at(col, c), 0) + (r === c ? DAMPING ** 2 : 0),
      ),
    );
    const y = solve(jjt, e);
    if (!y) return undefined;
    axes.forEach(({ index }, k) => {
      const col = at(columns, k);
      const dq = col.reduce((s, v, r) => s + v * at(y, r), 0);
      const l = at(model.limits, index);
      q[index] = Math.min(l.max, Math.max(l.min, at(q, index) + dq));
    });
  }
  return undefined;
}

/**
 * Joint values (model order) that put `link` at `target` (root frame), starting from `seed`, then
 * from random seeds until `deadline` (a performance.now() time); `accept` can refuse a solution
 * (e.g. in collision), as MoveIt's validity callback does. Undefined: no solution in time.
 */
export function solveIk(
  model: RobotModel,
  link: string,
  target: Pose,
  seed: readonly number[],
  deadline: number,
  accept: (q: readonly number[]) => boolean = () => true,
  random: () => number = Math.random,
): number[] | undefined {
  let start: readonly number[] = seed;
  for (let tries = 0; ; tries++) {
    const q = attempt(model, link, target, start);
    if (q && accept(q)) return q;
    if (performance.now() >= deadline || tries > 10_000) return undefined;
    start = model.limits.map((l) => l.min + (l.max - l.min) * random());
  }
}
