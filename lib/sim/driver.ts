import type { Clock, Timer } from '../clock.ts';

/**
 * Drives the simulation in scaled time: sim seconds = time_scale x wall seconds since start.
 * While something moves, a timer of the clock calls `step` in fixed sim steps of `dtS` (bounded per tick
 * so the event loop is never blocked); when idle the timer stops.
 */
export class SimDriver {
  private readonly clock: Clock;
  private readonly timeScale: number;
  private readonly dtS: number;
  private readonly step: (nowS: number, dtS: number) => boolean;
  private readonly wallStartMs: number;
  private lastS = 0;
  private timer: Timer | undefined;

  /** `step` returns true while more steps are needed. */
  constructor(clock: Clock, timeScale: number, rateHz: number, step: (nowS: number, dtS: number) => boolean) {
    this.clock = clock;
    this.timeScale = timeScale;
    this.dtS = 1 / rateHz;
    this.step = step;
    this.wallStartMs = clock.nowMs();
  }

  /** Current sim time (s). */
  nowS(): number {
    return ((this.clock.nowMs() - this.wallStartMs) / 1000) * this.timeScale;
  }

  /** Sim time of the last controller update (s). */
  lastUpdateS(): number {
    return this.lastS;
  }

  /**
   * How long ago (wall ms) the state was current: the time since the last update while ticking (a
   * tick under load may take a while after its start), 0 while asleep (the arm rests and its state
   * holds now). A message is stamped with the time its state refers to, not the time it is sent.
   */
  stateAgeMs(): number {
    if (!this.timer) return 0;
    return (Math.max(0, this.nowS() - this.lastS) * 1000) / this.timeScale;
  }

  /** Starts ticking (idempotent). */
  wake(): void {
    if (this.timer) return;
    this.lastS = Math.max(this.lastS, this.nowS() - this.dtS);
    const periodMs = Math.max(1, Math.min(4, (this.dtS * 1000) / this.timeScale));
    this.timer = this.clock.every(periodMs, () => this.tick());
  }

  /** Runs the updates due now. */
  tick(): void {
    const now = this.nowS();
    let busy = true;
    let steps = 0;
    while (this.lastS + this.dtS <= now && steps < 2000) {
      this.lastS += this.dtS;
      busy = this.step(this.lastS, this.dtS);
      steps++;
      if (!busy) break;
    }
    if (steps >= 2000) this.lastS = now;
    if (!busy) this.sleep();
  }

  /** Stops ticking. */
  sleep(): void {
    this.timer?.cancel();
    this.timer = undefined;
    this.lastS = this.nowS();
  }
}
