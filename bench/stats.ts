/** Order statistics for the bench: medians and percentiles of samples. */

/** The `p` quantile (0..1) of ascending `sorted`, interpolated linearly between neighbours; NaN when empty. */
export function quantileSorted(sorted: ArrayLike<number>, p: number): number {
  const n = sorted.length;
  if (n === 0) return Number.NaN;
  const at = Math.min(n - 1, Math.max(0, p * (n - 1)));
  const lo = Math.floor(at);
  const hi = Math.min(n - 1, lo + 1);
  const a = sorted[lo] ?? Number.NaN;
  const b = sorted[hi] ?? Number.NaN;
  return a + (b - a) * (at - lo);
}

/** The `p` quantile (0..1) of `values` (any order; not modified). */
export function quantile(values: ArrayLike<number>, p: number): number {
  return quantileSorted(Float64Array.from(values).sort(), p);
}

/** The median of `values` (any order; not modified). */
export function median(values: ArrayLike<number>): number {
  return quantile(values, 0.5);
}

/** Median, p95 and p99 of `values` in one sort. */
export function summary(values: ArrayLike<number>): {
  readonly p50: number;
  readonly p95: number;
  readonly p99: number;
  readonly max: number;
} {
  const sorted = Float64Array.from(values).sort();
  return {
    p50: quantileSorted(sorted, 0.5),
    p95: quantileSorted(sorted, 0.95),
    p99: quantileSorted(sorted, 0.99),
    max: sorted[sorted.length - 1] ?? Number.NaN,
  };
}

/** A seeded PRNG (xorshift32) in [0, 1), so every run uses the same inputs. */
export function seededRandom(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 4294967296;
  };
}
