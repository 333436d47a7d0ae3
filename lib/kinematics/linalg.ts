/**
 * Eigenvalues of a symmetric n x n matrix (row-major, copied into `work`) by cyclic Jacobi
 * rotations; returns the smallest. Small and exact enough for 6 x 6 manipulability checks.
 */
export function minEigenvalueSym(
  a: ArrayLike<number>,
  n: number,
  work: Float64Array = new Float64Array(n * n),
): number {
  for (let i = 0; i < n * n; i++) work[i] = a[i] ?? 0;
  const m = work;
  for (let sweep = 0; sweep < 50; sweep++) {
    let off = 0;
    for (let p = 0; p < n; p++) for (let q = p + 1; q < n; q++) off += (m[p * n + q] as number) ** 2;
    if (off < 1e-22) break;
    for (let p = 0; p < n; p++) {
      for (let q = p + 1; q < n; q++) {
        const apq = m[p * n + q] as number;
        if (Math.abs(apq) < 1e-300) continue;
        const app = m[p * n + p] as number;
        const aqq = m[q * n + q] as number;
        const theta = (aqq - app) / (2 * apq);
        const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1);
        const s = t * c;
        for (let k = 0; k < n; k++) {
          const akp = m[k * n + p] as number;
          const akq = m[k * n + q] as number;
          m[k * n + p] = c * akp - s * akq;
          m[k * n + q] = s * akp + c * akq;
        }
        for (let k = 0; k < n; k++) {
          const apk = m[p * n + k] as number;
          const aqk = m[q * n + k] as number;
          m[p * n + k] = c * apk - s * aqk;
          m[q * n + k] = s * apk + c * aqk;
        }
      }
    }
  }
  let min = Number.POSITIVE_INFINITY;
  for (let i = 0; i < n; i++) min = Math.min(min, m[i * n + i] as number);
  return min;
}

/** Smallest singular value of the 6 x n Jacobian `j` (row-major): sqrt of the smallest eigenvalue of J J^T. */
export function minSingularValue6(j: ArrayLike<number>, n: number, work: Float64Array = new Float64Array(72)): number {
  const jjt = work.subarray(36, 72);
  for (let r = 0; r < 6; r++) {
    for (let c = r; c < 6; c++) {
      let s = 0;
      for (let k = 0; k < n; k++) s += (j[r * n + k] ?? 0) * (j[c * n + k] ?? 0);
      jjt[6 * r + c] = s;
      jjt[6 * c + r] = s;
    }
  }
  return Math.sqrt(Math.max(0, minEigenvalueSym(jjt, 6, work.subarray(0, 36))));
}

/**
 * Damped least squares: `out` = J^T (J J^T + lambda2 I)^-1 `b` for the 6 x n Jacobian `j` (row-major) and a twist `b`
 * (6); the minimum-norm joint velocity that gives the twist when lambda2 is 0. `work` holds 42 numbers. Returns false
 * when J J^T + lambda2 I is not positive definite (a singular Jacobian without damping).
 */
export function dampedPinvApply(
  j: ArrayLike<number>,
  n: number,
  b: ArrayLike<number>,
  lambda2: number,
  out: Float64Array,
  work: Float64Array = new Float64Array(42),
): boolean {
  const a = work.subarray(0, 36);
  const y = work.subarray(36, 42);
  for (let r = 0; r < 6; r++) {
    for (let c = r; c < 6; c++) {
      let s = r === c ? lambda2 : 0;
      for (let k = 0; k < n; k++) s += (j[r * n + k] ?? 0) * (j[c * n + k] ?? 0);
      a[6 * r + c] = s;
      a[6 * c + r] = s;
    }
  }
  if (!solveSpd6(a, b, y, pivotAboveNoise)) return false;
  for (let k = 0; k < n; k++) {
    let s = 0;
    for (let r = 0; r < 6; r++) s += (j[r * n + k] ?? 0) * (y[r] as number);
    out[k] = s;
  }
  return true;
}

/** The pivot test of the damped least squares: clear of rounding noise (and not NaN). */
const pivotAboveNoise = (d: number): boolean => d > 1e-18;

/**
 * Solves A y = b for a symmetric 6x6 A (row-major, overwritten): Cholesky in place (lower triangle), then forward and
 * back substitution. False when a pivot fails `pivotOk` (A not positive definite, to the caller's tolerance).
 */
export function solveSpd6(
  a: Float64Array,
  b: ArrayLike<number>,
  y: Float64Array,
  pivotOk: (pivot: number) => boolean,
): boolean {
  for (let c = 0; c < 6; c++) {
    let d = a[7 * c] as number;
    for (let k = 0; k < c; k++) d -= (a[6 * c + k] as number) ** 2;
    if (!pivotOk(d)) return false;
    d = Math.sqrt(d);
    a[7 * c] = d;
    for (let r = c + 1; r < 6; r++) {
      let s = a[6 * r + c] as number;
      for (let k = 0; k < c; k++) s -= (a[6 * r + k] as number) * (a[6 * c + k] as number);
      a[6 * r + c] = s / d;
    }
  }
  for (let r = 0; r < 6; r++) {
    let s = b[r] ?? 0;
    for (let k = 0; k < r; k++) s -= (a[6 * r + k] as number) * (y[k] as number);
    y[r] = s / (a[7 * r] as number);
  }
  for (let r = 5; r >= 0; r--) {
    let s = y[r] as number;
    for (let k = r + 1; k < 6; k++) s -= (a[6 * k + r] as number) * (y[k] as number);
    y[r] = s / (a[7 * r] as number);
  }
  return true;
}
