/**
 * A motion's timeout that counts execution progress, not wall time: while the motion runs at the
 * rate r (1 as planned, p/100 under an override, 0 while paused) its budget is spent at r seconds
 * per second, so a paused motion never times out and one slowed to 50 % gets twice the wall time.
 * Before its trajectory executes (planning) the budget is spent at 1. At rate 1 it is one plain
 * timer; while the rate is below 1 or changing it checks every {@link POLL_MS}.
 */

import { type Clock, type Timer, systemClock } from '../clock.ts';

/** How often the budget is re-counted while the rate is not 1 (ms). */
export const POLL_MS = 25;

export class ProgressDeadline {
  private remainingS: number;
  private lastMs: number;
  private lastRate: number;
  private timer: Timer | undefined;
  private done = false;
  private readonly rate: () => number;
  private readonly steady: () => boolean;
  private readonly onExpire: () => void;
  private readonly clock: Clock;

  /**
   * `rate()`: the rate the budget is spent at now (0..1); `steady()`: true while the rate is 1 and
   * will stay so until {@link poke} is called; `onExpire` runs once when the budget is spent.
   */
  constructor(
    budgetS: number,
    rate: () => number,
    steady: () => boolean,
    onExpire: () => void,
    clock: Clock = systemClock,
  ) {
    this.remainingS = budgetS;
    this.rate = rate;
    this.steady = steady;
    this.onExpire = onExpire;
    this.clock = clock;
    this.lastMs = clock.nowMs();
    this.lastRate = rate();
    // Never expires from inside the constructor: the first check is a timer too.
    this.timer = this.clock.after(this.waitMs(), () => this.poke());
  }

  /** The rate may have changed (pause, resume, override): counts what was spent so far and re-plans. */
  poke(): void {
    if (this.done) return;
    this.account();
    this.schedule();
  }

  /** Ends the deadline without expiring (idempotent). */
  cancel(): void {
    this.done = true;
    this.timer?.cancel();
    this.timer = undefined;
  }

  private account(): void {
    const now = this.clock.nowMs();
    this.remainingS -= ((now - this.lastMs) / 1000) * this.lastRate;
    this.lastMs = now;
    this.lastRate = Math.min(1, Math.max(0, this.rate()));
  }

  private schedule(): void {
    this.timer?.cancel();
    this.timer = undefined;
    if (this.remainingS <= 0) {
      this.cancel();
      this.onExpire();
      return;
    }
    this.timer = this.clock.after(this.waitMs(), () => this.poke());
  }

  private waitMs(): number {
    return this.steady() && this.lastRate >= 1 ? Math.max(0, this.remainingS * 1000) : POLL_MS;
  }
}
