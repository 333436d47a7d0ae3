/**
 * A 1-D trapezoidal (or triangular) velocity profile from rest to rest over `distance`, with
 * peak velocity at most `vMax`, acceleration `aMax` and deceleration `dMax`: the time-optimal
 * profile under those bounds. Times in seconds.
 */
export interface Trapezoid {
  readonly distance: number;
  readonly vPeak: number;
  readonly accel: number;
  readonly decel: number;
  /** Durations of the acceleration, cruise and deceleration phases. */
  readonly tAcc: number;
  readonly tCruise: number;
  readonly tDec: number;
  readonly duration: number;
}

/** The time-optimal rest-to-rest profile for `distance` >= 0. */
export function trapezoid(distance: number, vMax: number, aMax: number, dMax: number = aMax): Trapezoid {
  if (distance <= 0)
    return { distance: 0, vPeak: 0, accel: aMax, decel: dMax, tAcc: 0, tCruise: 0, tDec: 0, duration: 0 };
  // Distance needed to reach vMax and stop again.
  const dFull = (vMax * vMax) / (2 * aMax) + (vMax * vMax) / (2 * dMax);
  const full = dFull <= distance;
  const vPeak = full ? vMax : Math.sqrt((2 * distance * aMax * dMax) / (aMax + dMax));
  // Phase times straight from the bounds, so that tiny accelerations (vPeak underflowing to 0) give
  // long phases (or Infinity), never 0 s.
  const tAcc = full ? vMax / aMax : Math.sqrt((2 * distance * dMax) / (aMax * (aMax + dMax)));
  const tDec = full ? vMax / dMax : Math.sqrt((2 * distance * aMax) / (dMax * (aMax + dMax)));
  const tCruise = dFull <= distance ? (distance - dFull) / vMax : 0;
  return { distance, vPeak, accel: aMax, decel: dMax, tAcc, tCruise, tDec, duration: tAcc + tCruise + tDec };
}

/** Position, velocity and acceleration of the profile at time `t` (clamped to [0, duration]). */
export function sampleTrapezoid(p: Trapezoid, t: number): { s: number; v: number; a: number } {
  if (p.duration === 0) return { s: p.distance, v: 0, a: 0 };
  const time = Math.min(Math.max(t, 0), p.duration);
  if (time < p.tAcc) return { s: 0.5 * p.accel * time * time, v: p.accel * time, a: p.accel };
  const sAcc = 0.5 * p.vPeak * p.tAcc;
  if (time < p.tAcc + p.tCruise) return { s: sAcc + p.vPeak * (time - p.tAcc), v: p.vPeak, a: 0 };
  const td = time - p.tAcc - p.tCruise;
  if (time >= p.duration) return { s: p.distance, v: 0, a: 0 };
  return {
    s: sAcc + p.vPeak * p.tCruise + p.vPeak * td - 0.5 * p.decel * td * td,
    v: p.vPeak - p.decel * td,
    a: -p.decel,
  };
}

/**
 * Sample times for a profile: every `dt` plus the phase boundaries, so that each interval lies in
 * one phase (quintic interpolation between samples then reproduces the profile exactly).
 */
export function profileSampleTimes(p: Trapezoid, dt: number): number[] {
  const boundaries = [0, p.tAcc, p.tAcc + p.tCruise, p.duration];
  const times = [...boundaries];
  // Regular samples closer than dt/4 to a boundary are dropped: tiny intervals add nothing and
  // make finite differences noisy.
  for (let t = dt; t < p.duration; t += dt) if (boundaries.every((b) => Math.abs(t - b) > dt / 4)) times.push(t);
  return times.sort((a, b) => a - b).filter((t, i, all) => i === 0 || t - (all[i - 1] ?? 0) > 1e-9);
}
