/**
 * CHOMP (Ratliff, Zucker et al.): covariant gradient descent of a discretized joint-space path
 * on smoothness (sum of squared finite-difference velocities) plus an obstacle cost supplied by
 * the caller, starting from the straight joint-space line. Pure: the obstacle cost and the clock
 * come in as functions.
 */

export interface ChompProblem {
  readonly startRad: readonly number[];
  readonly goalRad: readonly number[];
  readonly minRad: readonly number[];
  readonly maxRad: readonly number[];
  /** Obstacle cost at q; adds its gradient into `gradOut`. */
  obstacleCost(qRad: readonly number[], gradOut: Float64Array): number;
}

export interface ChompOptions {
  /** Interior waypoints; default 24. */
  readonly waypoints?: number;
  readonly maxIterations?: number;
  readonly deadlineMs: number;
  readonly nowMs: () => number;
  /** Weight of smoothness against obstacles; default 0.05. */
  readonly smoothnessWeight?: number;
  /** Step size (1/eta); default 0.5. */
  readonly stepSize?: number;
}

export interface ChompResult {
  /** start, the optimized interior points, goal. */
  readonly path: number[][];
  readonly obstacleCost: number;
  readonly iterations: number;
}

/** Solves A x = d for A = tridiag(-1, 2, -1) of size m (Thomas algorithm), in place on d. */
function solveSmoothness(d: Float64Array, scratch: Float64Array): void {
  const m = d.length;
  scratch[0] = -1 / 2;
  d[0] = (d[0] ?? 0) / 2;
  for (let i = 1; i < m; i++) {
    const denom = 2 + (scratch[i - 1] ?? 0);
    scratch[i] = -1 / denom;
    d[i] = ((d[i] ?? 0) + (d[i - 1] ?? 0)) / denom;
  }
  for (let i = m - 2; i >= 0; i--) d[i] = (d[i] ?? 0) - (scratch[i] ?? 0) * (d[i + 1] ?? 0);
}

/**
 * Optimizes the path; the result's obstacle cost is 0 when no pair came within the cost's range.
 * A generator that yields after every iteration (see {@link planRrtConnect}).
 */
export function* optimizeChomp(problem: ChompProblem, options: ChompOptions): Generator<void, ChompResult> {
  const n = problem.startRad.length;
  const m = options.waypoints ?? 24;
  const maxIterations = options.maxIterations ?? 200;
  const lambda = options.smoothnessWeight ?? 0.05;
  const step = options.stepSize ?? 0.5;
  const xi = Array.from({ length: m }, (_, i) =>
    problem.startRad.map((s, j) => s + (((problem.goalRad[j] ?? 0) - s) * (i + 1)) / (m + 1)),
  );
  const grad = Array.from({ length: m }, () => new Float64Array(n));
  const column = new Float64Array(m);
  const scratch = new Float64Array(m);
  let cost = 0;
  let best = Number.POSITIVE_INFINITY;
  let sinceImprovement = 0;
  let iterations = 0;
  for (; iterations < maxIterations && options.nowMs() < options.deadlineMs; iterations++) {
    cost = 0;
    for (let i = 0; i < m; i++) {
      const g = grad[i] as Float64Array;
      g.fill(0);
      cost += problem.obstacleCost(xi[i] as number[], g);
    }
    // Done when nothing is in range, or when the obstacle cost has not improved by 0.1 % for 10
    // iterations (links that sit close to each other by design keep a small constant cost).
    if (cost === 0 && iterations > 0) break;
    if (cost < best * (1 - 1e-3)) {
      best = cost;
      sinceImprovement = 0;
    } else if (++sinceImprovement >= 10) {
      break;
    }
    for (let j = 0; j < n; j++) {
      // smoothness gradient (A xi + b)_i with b carrying the fixed ends, plus the obstacle gradient
      for (let i = 0; i < m; i++) {
        const prev = i === 0 ? (problem.startRad[j] ?? 0) : (xi[i - 1]?.[j] ?? 0);
        const next = i === m - 1 ? (problem.goalRad[j] ?? 0) : (xi[i + 1]?.[j] ?? 0);
        const smooth = 2 * (xi[i]?.[j] ?? 0) - prev - next;
        column[i] = lambda * smooth + (grad[i]?.[j] ?? 0);
      }
      solveSmoothness(column, scratch);
      for (let i = 0; i < m; i++) {
        const row = xi[i] as number[];
        const v = (row[j] ?? 0) - step * (column[i] ?? 0);
        row[j] = Math.min(problem.maxRad[j] ?? 0, Math.max(problem.minRad[j] ?? 0, v));
      }
    }
    yield;
  }
  return { path: [[...problem.startRad], ...xi, [...problem.goalRad]], obstacleCost: cost, iterations };
}
