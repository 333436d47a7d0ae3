/**
 * A trajectory armgate published on the controller's topic, followed in plan time so that the ros2
 * backend can pause, resume and scale it itself (Jazzy's joint trajectory controller has no speed
 * scaling): each change publishes the rest of the same path re-timed from where the execution is
 * (lib/planning/time-scaling.ts), and the controller, which replaces its trajectory at receipt,
 * follows it. Pure: the caller passes the clock and publishes.
 */
import type { JointTrajectory } from '../planning/trajectory.ts';
import { retimeTrajectory } from '../planning/time-scaling.ts';
import type { JointLimits } from '../robot/limits.ts';

/** Period of the rate steps, and of the points published, when re-timing (s). */
const STEP_S = 0.002;
const EVERY_S = 0.02;

/** One published timing of the path: from `startMs`, point k at `timesS[k]` reaches plan time `tauS[k]`. */
interface Segment {
  readonly startMs: number;
  readonly timesS: readonly number[];
  readonly tauS: readonly number[];
}

export class RetimedPath {
  private readonly path: JointTrajectory;
  private readonly limits: JointLimits;
  private readonly durationS: number;
  private segment: Segment;
  /** The rate the last timing runs to (0: it ends at rest on the path). */
  private target: number;

  /** `path` in the limits' joint order, its first point the state at `startMs` (t = 0), timed as planned. */
  constructor(path: JointTrajectory, limits: JointLimits, startMs: number) {
    this.path = path;
    this.limits = limits;
    this.durationS = path.points.at(-1)?.timeFromStartS ?? 0;
    const times = path.points.map((p) => p.timeFromStartS);
    this.segment = { startMs, timesS: times, tauS: times };
    this.target = 1;
  }

  /** Plan time reached at `nowMs`, and the rate there (dtau/dt of the published timing). */
  progressAt(nowMs: number): { tauS: number; rate: number } {
    const { startMs, timesS, tauS } = this.segment;
    const t = (nowMs - startMs) / 1000;
    const n = timesS.length;
    if (n === 0) return { tauS: 0, rate: 0 };
    if (t <= (timesS[0] ?? 0)) return { tauS: tauS[0] ?? 0, rate: this.rateOf(0) };
    for (let k = 1; k < n; k++) {
      const t1 = timesS[k] ?? 0;
      if (t <= t1) {
        const t0 = timesS[k - 1] ?? 0;
        const u = t1 > t0 ? (t - t0) / (t1 - t0) : 1;
        const a = tauS[k - 1] ?? 0;
        const b = tauS[k] ?? 0;
        return { tauS: a + u * (b - a), rate: t1 > t0 ? (b - a) / (t1 - t0) : 0 };
      }
    }
    return { tauS: tauS[n - 1] ?? 0, rate: 0 };
  }

  private rateOf(k: number): number {
    const { timesS, tauS } = this.segment;
    const dt = (timesS[k + 1] ?? 0) - (timesS[k] ?? 0);
    return dt > 0 ? ((tauS[k + 1] ?? 0) - (tauS[k] ?? 0)) / dt : 0;
  }

  /** The published timing has ended (the path's end reached, or at rest after a pause). */
  endedAt(nowMs: number): boolean {
    return nowMs >= this.endsAtMs();
  }

  /** When the published timing ends (ms, the caller's clock). */
  endsAtMs(): number {
    return this.segment.startMs + (this.segment.timesS.at(-1) ?? 0) * 1000;
  }

  /** Paused: the last timing ends at rest on the path before its end. */
  get paused(): boolean {
    return this.target === 0;
  }

  /** The path's end has been reached (nothing left to re-time). */
  finishedAt(nowMs: number): boolean {
    return this.progressAt(nowMs).tauS >= this.durationS - 1e-9 && this.endedAt(nowMs);
  }

  /**
   * The rest of the path from where the execution is at `nowMs`, its rate moving to `target` (0:
   * to rest on the path) within the acceleration limits: the trajectory to publish (times from now).
   */
  retime(nowMs: number, target: number): JointTrajectory {
    const from = this.progressAt(nowMs);
    const timed = retimeTrajectory(this.path, this.limits, {
      fromTauS: from.tauS,
      fromRate: Math.min(1, from.rate),
      target,
      dtS: STEP_S,
      everyS: EVERY_S,
    });
    this.segment = { startMs: nowMs, timesS: timed.points.map((p) => p.timeFromStartS), tauS: timed.tauS };
    this.target = target;
    return timed;
  }
}
