/**
 * Time-optimal path parameterization by reachability analysis (TOPP-RA, Pham and Pham 2018) on a
 * grid of path samples s_0 < ... < s_N. The unknowns are x_i = sdot^2 at the nodes and a constant
 * path acceleration u_i = sddot on each interval, so x_{i+1} = x_i + 2 (s_{i+1} - s_i) u_i.
 * Constraints, all linear in (x, u):
 * - velocity: x_i <= xMax_i;
 * - symmetric rows |a u + b x| <= c at each node (joint accelerations: a = dq/ds, b = d2q/ds2),
 *   imposed on interval i at both of its ends (at node i + 1 with x_{i+1} written through x_i
 *   and u_i), which keeps them between the nodes far better than at one end only;
 * - uMin <= u <= uMax (tangential Cartesian acceleration).
 * A backward pass computes the largest controllable x at each node (from which the end can be
 * reached at rest); a forward pass from rest takes the largest admissible u that stays
 * controllable. Pure; a generator that yields every {@link YIELD_EVERY} nodes (see runSliced).
 */

/** The discretized problem. Arrays of nodes have length N + 1; row arrays are node-major, `rows` per node. */
export interface ToppProblem {
  readonly s: Float64Array;
  readonly xMax: Float64Array;
  readonly rows: number;
  readonly a: Float64Array;
  readonly b: Float64Array;
  readonly c: Float64Array;
  readonly uMin: number;
  readonly uMax: number;
}

/** The time-optimal parameterization: x = sdot^2 and time at each node, u on each interval. */
export interface ToppSolution {
  readonly x: Float64Array;
  readonly u: Float64Array;
  readonly t: Float64Array;
  readonly durationS: number;
}

const YIELD_EVERY = 64;
const BISECTIONS = 60;

/**
 * The admissible range of u on interval i for a given x_i, with x_{i+1} kept in [0, xNextMax];
 * written into range[0..1] (empty when range[0] > range[1]).
 */
function uRange(p: ToppProblem, i: number, x: number, xNextMax: number, range: Float64Array): void {
  const h = (p.s[i + 1] as number) - (p.s[i] as number);
  let lo = Math.max(p.uMin, -x / (2 * h));
  let hi = Math.min(p.uMax, (xNextMax - x) / (2 * h));
  for (let end = 0; end < 2; end++) {
    const base = (i + end) * p.rows;
    for (let r = 0; r < p.rows; r++) {
      const a0 = p.a[base + r] as number;
      const b = p.b[base + r] as number;
      const c = p.c[base + r] as number;
      // at node i + 1: a u + b (x + 2 h u)
      const a = end === 0 ? a0 : a0 + 2 * h * b;
      const bx = b * x;
      if (Math.abs(a) < 1e-12) {
        if (Math.abs(bx) > c) {
          lo = Number.POSITIVE_INFINITY;
          hi = Number.NEGATIVE_INFINITY;
        }
        continue;
      }
      const u1 = (-c - bx) / a;
      const u2 = (c - bx) / a;
      if (a > 0) {
        if (u1 > lo) lo = u1;
        if (u2 < hi) hi = u2;
      } else {
        if (u2 > lo) lo = u2;
        if (u1 < hi) hi = u1;
      }
    }
  }
  range[0] = lo;
  range[1] = hi;
}

/**
 * Solves the problem: the fastest parameterization from rest to rest. The admissible x at each
 * node form an interval containing 0 (u = 0 is admissible at rest), so the backward pass finds its
 * top by bisection and always keeps a feasible value.
 */
export function* solveTopp(p: ToppProblem): Generator<void, ToppSolution> {
  const n = p.s.length - 1;
  const beta = new Float64Array(n + 1);
  const range = new Float64Array(2);
  const feasible = (i: number, x: number) => {
    uRange(p, i, x, beta[i + 1] as number, range);
    return (range[0] as number) <= (range[1] as number);
  };
  beta[n] = 0;
  for (let i = n - 1; i >= 0; i--) {
    const top = p.xMax[i] as number;
    if (feasible(i, top)) beta[i] = top;
    else {
      let good = 0;
      let bad = top;
      for (let k = 0; k < BISECTIONS && bad - good > 1e-12 * top; k++) {
        const mid = 0.5 * (good + bad);
        if (feasible(i, mid)) good = mid;
        else bad = mid;
      }
      beta[i] = good;
    }
    if (i % YIELD_EVERY === 0) yield;
  }
  const x = new Float64Array(n + 1);
  const u = new Float64Array(n);
  const t = new Float64Array(n + 1);
  for (let i = 0; i < n; i++) {
    const h = (p.s[i + 1] as number) - (p.s[i] as number);
    const xi = x[i] as number;
    uRange(p, i, xi, beta[i + 1] as number, range);
    // range[1] >= range[0] up to rounding, since x_i is controllable; never below rest at the next node
    const ui = Math.max(range[1] as number, -xi / (2 * h));
    const next = Math.min(beta[i + 1] as number, Math.max(0, xi + 2 * h * ui));
    u[i] = (next - xi) / (2 * h);
    x[i + 1] = next;
    const speeds = Math.sqrt(xi) + Math.sqrt(next);
    t[i + 1] = (t[i] as number) + (speeds > 0 ? (2 * h) / speeds : Number.POSITIVE_INFINITY);
    if (i % YIELD_EVERY === 0) yield;
  }
  return { x, u, t, durationS: t[n] as number };
}
