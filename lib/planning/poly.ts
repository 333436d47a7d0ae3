/**
 * Real polynomials of degree at most 5 on an interval [0, T]: derivatives, the real roots inside
 * the interval and the extremes there. Coefficients ascending (c0 + c1 s + ...). Closed forms up
 * to degree 2; above, the roots of the derivative split the interval into monotone pieces, each
 * holding at most one root, found by bisection to machine precision. Pure; hot path: no closures
 * and no allocation per call (scratch buffers per degree, the module is not re-entrant).
 */

/** Highest degree handled. */
export const MAX_DEGREE = 5;

/** Value of the polynomial `c` of degree `degree` at `s` (Horner). */
export function evalPoly(c: ArrayLike<number>, degree: number, s: number): number {
  let value = c[degree] ?? 0;
  for (let k = degree - 1; k >= 0; k--) value = value * s + (c[k] ?? 0);
  return value;
}

/** Writes the derivative of `c` (degree `degree`) into `out`; returns its degree (at least 0). */
export function derivative(c: ArrayLike<number>, degree: number, out: Float64Array): number {
  out.fill(0);
  for (let k = 1; k <= degree; k++) out[k - 1] = k * (c[k] ?? 0);
  return Math.max(0, degree - 1);
}

// Scratch per recursion level (the degree of the polynomial whose roots are sought).
const derivativeScratch = Array.from({ length: MAX_DEGREE + 1 }, () => new Float64Array(MAX_DEGREE + 1));
const rootScratch = Array.from({ length: MAX_DEGREE + 1 }, () => new Float64Array(MAX_DEGREE + 2));

/**
 * Writes the real roots of `c` strictly inside (0, T) into `out`, ascending; returns how many
 * (a polynomial that is zero everywhere has none).
 */
export function rootsInside(c: ArrayLike<number>, degree: number, T: number, out: Float64Array): number {
  let d = degree;
  while (d > 0 && (c[d] ?? 0) === 0) d--;
  if (d === 0) return 0;
  if (d === 1) return keepInside(-(c[0] ?? 0) / (c[1] ?? 1), Number.NaN, T, out);
  if (d === 2) {
    const c0 = c[0] ?? 0;
    const c1 = c[1] ?? 0;
    const c2 = c[2] ?? 1;
    const disc = c1 * c1 - 4 * c2 * c0;
    if (disc < 0) return 0;
    // The stable pair: no cancellation between -c1 and the square root.
    const q = -0.5 * (c1 + (c1 >= 0 ? 1 : -1) * Math.sqrt(disc));
    return q === 0 ? keepInside(0, Number.NaN, T, out) : keepInside(q / c2, c0 / q, T, out);
  }
  const dc = derivativeScratch[d] as Float64Array;
  const breaks = rootScratch[d] as Float64Array;
  const dd = derivative(c, d, dc);
  const inner = rootsInside(dc, dd, T, breaks.subarray(1));
  breaks[0] = 0;
  breaks[inner + 1] = T;
  let count = 0;
  for (let k = 1; k <= inner + 1; k++) {
    let lo = breaks[k - 1] ?? 0;
    let hi = breaks[k] ?? T;
    let fLo = evalPoly(c, d, lo);
    const fHi = evalPoly(c, d, hi);
    if (fLo === 0 || fHi === 0 || fLo > 0 === fHi > 0) continue;
    for (let it = 0; it < 200; it++) {
      const mid = 0.5 * (lo + hi);
      if (mid <= lo || mid >= hi) break;
      const f = evalPoly(c, d, mid);
      if (f > 0 === fLo > 0) {
        lo = mid;
        fLo = f;
      } else {
        hi = mid;
      }
    }
    const s = 0.5 * (lo + hi);
    if (s > 0 && s < T) out[count++] = s;
  }
  return count;
}

/** Writes those of `a` and `b` (NaN: none) inside (0, T) into `out`, ascending; returns how many. */
function keepInside(a: number, b: number, T: number, out: Float64Array): number {
  const aIn = a > 0 && a < T;
  const bIn = b > 0 && b < T;
  if (aIn && bIn) {
    out[0] = Math.min(a, b);
    out[1] = Math.max(a, b);
    return 2;
  }
  if (aIn || bIn) {
    out[0] = aIn ? a : b;
    return 1;
  }
  return 0;
}

/** Smallest and largest value of a polynomial on [0, T] and where they are. */
export interface PolyRange {
  min: number;
  minAtS: number;
  max: number;
  maxAtS: number;
}

const rangeDerivative = new Float64Array(MAX_DEGREE + 1);
const rangeRoots = new Float64Array(MAX_DEGREE + 1);

/** The extremes of `c` (degree `degree`) on [0, T], into `out`: at the ends or where the derivative vanishes. */
export function rangeOn(c: ArrayLike<number>, degree: number, T: number, out: PolyRange): PolyRange {
  startRange(out, evalPoly(c, degree, 0));
  widenRange(out, evalPoly(c, degree, T), T);
  if (degree < 2) return out;
  const dd = derivative(c, degree, rangeDerivative);
  const n = rootsInside(rangeDerivative, dd, T, rangeRoots);
  for (let k = 0; k < n; k++) {
    const s = rangeRoots[k] ?? 0;
    widenRange(out, evalPoly(c, degree, s), s);
  }
  return out;
}

/** Sets `out` to the one value `value`, at s = 0. */
export function startRange(out: PolyRange, value: number): void {
  out.min = value;
  out.minAtS = 0;
  out.max = value;
  out.maxAtS = 0;
}

/** Widens `out` to take in `value` at `s`. */
export function widenRange(out: PolyRange, value: number, s: number): void {
  if (value < out.min) {
    out.min = value;
    out.minAtS = s;
  }
  if (value > out.max) {
    out.max = value;
    out.maxAtS = s;
  }
}
