import type { Chain } from './chain.ts';
import { createFkWorkspace, type FkWorkspace, forwardKinematics, poseError } from './fk.ts';
import { solveSpd6 } from './linalg.ts';

/** How a solve ended. */
export type IkStatus = 'converged' | 'stalled' | 'diverged' | 'timeout';

/** Result of {@link solveIk}; `qRad` is the best configuration found. */
export interface IkResult {
  readonly status: IkStatus;
  readonly qRad: Float64Array;
  readonly iterations: number;
  readonly restarts: number;
  readonly posErrM: number;
  readonly rotErrRad: number;
}

export interface IkOptions {
  /** Position tolerance (m); default 1e-5. */
  readonly posTolM?: number;
  /** Orientation tolerance (rad); default 1e-5. */
  readonly rotTolRad?: number;
  /** Absolute deadline on `nowMs`'s clock; no restarts begin after it. */
  readonly deadlineMs: number;
  /** The caller's clock (kinematics has none of its own). */
  readonly nowMs: () => number;
  /** Uniform random numbers in [0, 1) for restarts (seeded in tests). */
  readonly random: () => number;
  /** Iterations per attempt before a restart; default 60. */
  readonly maxIterations?: number;
  /** Upper bound on restarts; default unlimited (the deadline bounds them). */
  readonly maxRestarts?: number;
}

/** Preallocated buffers of the solver. */
export interface IkWorkspace {
  readonly fk: FkWorkspace;
  readonly q: Float64Array;
  readonly qTry: Float64Array;
  readonly best: Float64Array;
  readonly err: Float64Array;
  readonly errTry: Float64Array;
  readonly a: Float64Array;
  readonly y: Float64Array;
  readonly dq: Float64Array;
  readonly locked: Uint8Array;
}

/** Allocates the solver's buffers for `chain`. */
export function createIkWorkspace(chain: Chain): IkWorkspace {
  const n = chain.jointNames.length;
  return {
    fk: createFkWorkspace(chain),
    q: new Float64Array(n),
    qTry: new Float64Array(n),
    best: new Float64Array(n),
    err: new Float64Array(6),
    errTry: new Float64Array(6),
    a: new Float64Array(36),
    y: new Float64Array(6),
    dq: new Float64Array(n),
    locked: new Uint8Array(n),
  };
}

/** The IK step's pivot test: only a pivot at or below 0 fails (as written, a NaN passes). */
const pivotAboveZero = (d: number): boolean => !(d <= 0);

function errorNorms(e: Float64Array): [number, number] {
  return [
    Math.hypot(e[0] as number, e[1] as number, e[2] as number),
    Math.hypot(e[3] as number, e[4] as number, e[5] as number),
  ];
}

/**
 * Inverse kinematics by damped least squares (Levenberg-Marquardt) within joint limits,
 * seeded at `seedRad` so that the first solution found is the one nearest the seed, with random
 * restarts inside the limits until `deadlineMs`. Target: tip position (m) and row-major rotation
 * in the chain's base frame. Pure: no clock or randomness of its own.
 */
export function solveIk(
  chain: Chain,
  minRad: ArrayLike<number>,
  maxRad: ArrayLike<number>,
  targetPos: ArrayLike<number>,
  targetRot: ArrayLike<number>,
  seedRad: ArrayLike<number>,
  options: IkOptions,
  ws: IkWorkspace = createIkWorkspace(chain),
): IkResult {
  const n = chain.jointNames.length;
  const posTol = options.posTolM ?? 1e-5;
  const rotTol = options.rotTolRad ?? 1e-5;
  const maxIterations = options.maxIterations ?? 60;
  const maxRestarts = options.maxRestarts ?? Number.POSITIVE_INFINITY;
  const { q, qTry, best, err, errTry, a, y, dq, fk, locked } = ws;
  const J = fk.jacobian;
  let bestCost = Number.POSITIVE_INFINITY;
  let bestPos = Number.POSITIVE_INFINITY;
  let bestRot = Number.POSITIVE_INFINITY;
  let iterations = 0;
  let restarts = 0;
  for (let i = 0; i < n; i++) q[i] = Math.min(maxRad[i] as number, Math.max(minRad[i] as number, seedRad[i] ?? 0));

  for (;;) {
    forwardKinematics(chain, q, fk, true);
    poseError(err, fk.tipPos, fk.tipRot, targetPos, targetRot);
    let [ep, er] = errorNorms(err);
    let cost = ep * ep + er * er;
    let lambda = 1e-3;
    let status: IkStatus = 'stalled';
    let windowCost = cost;
    for (let it = 0; it < maxIterations; it++) {
      // Restart early when ten iterations barely helped: stuck on a joint limit or in a local minimum.
      if (it > 0 && it % 10 === 0) {
        if (cost > 0.25 * windowCost) break;
        windowCost = cost;
      }
      if (ep < posTol && er < rotTol) {
        status = 'converged';
        break;
      }
      iterations++;
      // Damped least squares; a joint the step would push past its limit is taken out of the
      // Jacobian and the step solved again, so the others make up for it instead of the solver
      // stalling against the limit (and restarting far from the seed).
      locked.fill(0);
      let stepMax = 0;
      let solved = true;
      for (let pass = 0; pass < 2; pass++) {
        for (let r = 0; r < 6; r++) {
          for (let c = r; c < 6; c++) {
            let s = 0;
            for (let k = 0; k < n; k++) if (!locked[k]) s += (J[r * n + k] as number) * (J[c * n + k] as number);
            a[6 * r + c] = s;
            a[6 * c + r] = s;
          }
          a[7 * r] = (a[7 * r] as number) + lambda;
        }
        if (!solveSpd6(a, err, y, pivotAboveZero)) {
          solved = false;
          break;
        }
        stepMax = 0;
        for (let k = 0; k < n; k++) {
          let s = 0;
          if (!locked[k]) for (let r = 0; r < 6; r++) s += (J[r * n + k] as number) * (y[r] as number);
          dq[k] = s;
          stepMax = Math.max(stepMax, Math.abs(s));
        }
        if (pass > 0) break;
        const cap = stepMax > 0.5 ? 0.5 / stepMax : 1;
        let newlyLocked = false;
        for (let k = 0; k < n; k++) {
          const next = (q[k] as number) + (dq[k] as number) * cap;
          if (next < (minRad[k] as number) || next > (maxRad[k] as number)) {
            locked[k] = 1;
            newlyLocked = true;
          }
        }
        if (!newlyLocked) break;
      }
      if (!solved) {
        lambda *= 10;
        continue;
      }
      const scale = stepMax > 0.5 ? 0.5 / stepMax : 1;
      for (let k = 0; k < n; k++) {
        const v = (q[k] as number) + (dq[k] as number) * scale;
        qTry[k] = Math.min(maxRad[k] as number, Math.max(minRad[k] as number, v));
      }
      forwardKinematics(chain, qTry, fk, false);
      poseError(errTry, fk.tipPos, fk.tipRot, targetPos, targetRot);
      const [tp, tr] = errorNorms(errTry);
      const tryCost = tp * tp + tr * tr;
      if (tryCost < cost) {
        q.set(qTry);
        forwardKinematics(chain, q, fk, true);
        err.set(errTry);
        ep = tp;
        er = tr;
        cost = tryCost;
        lambda = Math.max(lambda / 10, 1e-9);
      } else {
        lambda *= 10;
        if (lambda > 1e4) break;
      }
    }
    if (cost < bestCost) {
      bestCost = cost;
      bestPos = ep;
      bestRot = er;
      best.set(q);
    }
    if (status === 'converged') {
      return { status, qRad: Float64Array.from(best), iterations, restarts, posErrM: bestPos, rotErrRad: bestRot };
    }
    if (options.nowMs() >= options.deadlineMs || restarts >= maxRestarts) {
      const ended: IkStatus =
        options.nowMs() >= options.deadlineMs ? 'timeout' : Number.isFinite(bestCost) ? 'stalled' : 'diverged';
      return {
        status: ended,
        qRad: Float64Array.from(best),
        iterations,
        restarts,
        posErrM: bestPos,
        rotErrRad: bestRot,
      };
    }
    restarts++;
    for (let k = 0; k < n; k++)
      q[k] = (minRad[k] as number) + options.random() * ((maxRad[k] as number) - (minRad[k] as number));
  }
}
