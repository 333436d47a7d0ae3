/**
 * Which event streams' clients have stopped taking what they are sent: a stream whose way out holds bytes its client
 * has not taken (its socket's buffers full: the kernel's, then Node's) and that took no byte for the stall time is
 * stalled. Sampled on the app's clock (lib/clock.ts: a stepped one in tests) every {@link SWEEP_MS}: a stream is found
 * stalled once it took nothing for at least the stall time, at most one sweep later.
 */
import type { Clock, Timer } from '../clock.ts';

/** How often (ms of the clock) the streams are looked at. */
export const SWEEP_MS = 1000;

/** What the watch reads of a stream. */
export interface Watched {
  /** Bytes its client has taken since it opened (grows as the client reads). */
  taken(): number;
  /** Bytes handed to its way out that the client has not taken yet. */
  owed(): number;
}

/** Streams {@link StallWatch.longestStalled} looks at again (those that read since the last sweep) before giving up. */
const LOOKS = 4;

interface Seen {
  taken: number;
  /** When it was last seen taking bytes, or owing none. */
  sinceMs: number;
}

/** Watches streams; tells `onStalled` of those that took nothing for `stallMs` while owed bytes (each once). */
export class StallWatch<T extends Watched> {
  private readonly seen = new Map<T, Seen>();
  private timer: Timer | undefined;
  private readonly clock: Clock;
  private readonly stallMs: number;
  private readonly onStalled: (stalled: T[]) => void;

  constructor(clock: Clock, stallMs: number, onStalled: (stalled: T[]) => void) {
    this.clock = clock;
    this.stallMs = stallMs;
    this.onStalled = onStalled;
  }

  add(item: T): void {
    this.seen.set(item, { taken: item.taken(), sinceMs: this.clock.nowMs() });
    if (!this.timer) {
      this.timer = this.clock.every(SWEEP_MS, this.sweep);
      this.timer.unref?.();
    }
  }

  delete(item: T): void {
    this.seen.delete(item);
    if (this.seen.size === 0 && this.timer) {
      this.timer.cancel();
      this.timer = undefined;
    }
  }

  /**
   * The stream that has gone longest without taking a byte while bytes waited for it, if that is at least `minMs` (and
   * it still takes nothing now); undefined when none has. A stream that took bytes, or owes none, since it was last
   * looked at is not one (it is looked at again here, as a sweep would). It stays watched: the caller ends it.
   */
  longestStalled(minMs: number, eligible: (item: T) => boolean): T | undefined {
    const now = this.clock.nowMs();
    for (let tries = 0; tries < LOOKS; tries++) {
      let oldest: [T, Seen] | undefined;
      for (const entry of this.seen)
        if (entry[1].sinceMs < (oldest?.[1].sinceMs ?? Number.POSITIVE_INFINITY) && eligible(entry[0])) oldest = entry;
      if (!oldest || now - oldest[1].sinceMs < minMs) return undefined;
      const [item, seen] = oldest;
      const taken = item.taken();
      if (taken === seen.taken && item.owed() > 0) return item;
      seen.taken = taken;
      seen.sinceMs = now;
    }
    return undefined;
  }

  private readonly sweep = () => {
    const now = this.clock.nowMs();
    const stalled: T[] = [];
    for (const [item, seen] of this.seen) {
      const taken = item.taken();
      if (taken !== seen.taken || item.owed() === 0) {
        seen.taken = taken;
        seen.sinceMs = now;
      } else if (now - seen.sinceMs >= this.stallMs) stalled.push(item);
    }
    if (stalled.length === 0) return;
    for (const item of stalled) this.delete(item);
    this.onStalled(stalled);
  };
}
