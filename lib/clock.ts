/** A scheduled callback; `cancel` is idempotent. */
export interface Timer {
  cancel(): void;
  /** Lets the process end while the timer waits (a real timer's unref; nothing on a stepped clock). */
  unref?(): void;
}

/**
 * Time as a dependency: a monotonic clock in milliseconds, the wall clock for message stamps, and
 * the timers that run on them. The process clock in production; a {@link SteppedClock} in tests.
 */
export interface Clock {
  /** Monotonic milliseconds (performance.now() in production). */
  nowMs(): number;
  /** Milliseconds since the Unix epoch, for message stamps. */
  epochMs(): number;
  /** Runs `fn` once, `ms` from now. */
  after(ms: number, fn: () => void): Timer;
  /** Runs `fn` every `ms` from now on, until cancelled. */
  every(ms: number, fn: () => void): Timer;
}

/** The process clock. */
export const systemClock: Clock = {
  nowMs: () => performance.now(),
  epochMs: () => Date.now(),
  after: (ms, fn) => {
    const handle = setTimeout(fn, ms);
    return { cancel: () => clearTimeout(handle), unref: () => handle.unref() };
  },
  every: (ms, fn) => {
    const handle = setInterval(fn, ms);
    return { cancel: () => clearInterval(handle), unref: () => handle.unref() };
  },
};

interface Scheduled {
  dueMs: number;
  readonly periodMs: number | undefined;
  readonly seq: number;
  readonly fn: () => void;
  cancelled: boolean;
}

/** Lets promise chains started by a timer settle before the next one runs (no wall time passes). */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * A clock that moves only when told to: {@link advance} runs the timers due in order, each at its
 * own time, letting the promise chains they start settle in between. Logic that runs on a
 * {@link Clock} runs on it without sleeping and without depending on the machine's load.
 */
export class SteppedClock implements Clock {
  private now: number;
  private readonly epochStartMs: number;
  private readonly startMs: number;
  private seq = 0;
  private scheduled: Scheduled[] = [];
  /** The advance in progress (advances run one at a time). */
  private advancing: Promise<void> = Promise.resolve();

  constructor(startMs = 0, epochStartMs = Date.UTC(2026, 0, 1)) {
    this.now = startMs;
    this.startMs = startMs;
    this.epochStartMs = epochStartMs;
  }

  nowMs(): number {
    return this.now;
  }

  epochMs(): number {
    return this.epochStartMs + (this.now - this.startMs);
  }

  after(ms: number, fn: () => void): Timer {
    return this.schedule(ms, undefined, fn);
  }

  every(ms: number, fn: () => void): Timer {
    return this.schedule(ms, Math.max(ms, 1e-3), fn);
  }

  /** How many timers wait. */
  pending(): number {
    return this.scheduled.filter((s) => !s.cancelled).length;
  }

  /**
   * Moves the clock `ms` on, running each timer due on the way at its time. Advances asked for at once (two waits
   * of a test stepping the same clock) run one after the other, each from where the one before ended: the clock
   * never goes back.
   */
  advance(ms: number): Promise<void> {
    const run = this.advancing.then(() => this.advanceNow(ms));
    this.advancing = run.catch(() => undefined);
    return run;
  }

  private async advanceNow(ms: number): Promise<void> {
    const end = this.now + ms;
    await settle();
    while (this.runNextDue(end)) await settle();
    this.now = end;
  }

  /** Runs the next timer due by `end` at its time (a periodic one scheduled again); false when none is. */
  private runNextDue(end: number): boolean {
    const next = this.nextDue();
    if (!next || next.dueMs > end) return false;
    this.now = Math.max(this.now, next.dueMs);
    if (next.periodMs === undefined) next.cancelled = true;
    else next.dueMs += next.periodMs;
    if (next.cancelled) this.scheduled = this.scheduled.filter((s) => s !== next);
    next.fn();
    return true;
  }

  /**
   * Moves the clock `ms` on and runs the timers due on the way, each at its time, all within this one turn of the
   * event loop: nothing else runs in between (no promise chain they start, no message from another thread). For a
   * test that must step the clock before an event it cannot hold (a worker thread's answer) comes; {@link advance}
   * lets the event loop turn first.
   */
  advanceAtOnce(ms: number): void {
    const end = this.now + ms;
    while (this.runNextDue(end));
    this.now = end;
  }

  /** Moves the clock `ms` on without running a timer, as a held event loop or a slow piece of work would. */
  skip(ms: number): void {
    this.now += ms;
  }

  /** Advances in steps of `stepMs` until `done()` holds or `limitMs` has passed; returns whether it held. */
  async until(done: () => boolean, stepMs: number, limitMs: number): Promise<boolean> {
    for (let spent = 0; spent < limitMs; spent += stepMs) {
      if (done()) return true;
      await this.advance(stepMs);
    }
    return done();
  }

  private schedule(ms: number, periodMs: number | undefined, fn: () => void): Timer {
    const entry: Scheduled = { dueMs: this.now + Math.max(0, ms), periodMs, seq: this.seq++, fn, cancelled: false };
    this.scheduled.push(entry);
    return {
      cancel: () => {
        entry.cancelled = true;
        this.scheduled = this.scheduled.filter((s) => s !== entry);
      },
    };
  }

  private nextDue(): Scheduled | undefined {
    let best: Scheduled | undefined;
    for (const s of this.scheduled)
      if (!s.cancelled && (!best || s.dueMs < best.dueMs || (s.dueMs === best.dueMs && s.seq < best.seq))) best = s;
    return best;
  }
}
