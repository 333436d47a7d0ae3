import { type Clock, systemClock } from '../clock.ts';

/** How often the server of a goal in flight is looked for on the graph. */
const POLL_MS = 250;
/** How long it must stay gone before its goal is given up: a discovery blip is not a crash. */
const GONE_MS = 1000;

/** A watch on a server while its goal runs: `signal` aborts (with `reason`) once the server is gone. */
export interface ServerWatch {
  readonly signal: AbortSignal;
  /** Ends the watch (the goal has ended). */
  stop(): void;
}

/**
 * Aborts `signal` when `available()` has answered false for {@link GONE_MS} in a row, asked every
 * {@link POLL_MS}. A goal's result never comes when its server dies (a process killed leaves no
 * answer): this is how a waiting request learns it. Over Cyclone DDS a killed process leaves the
 * graph when its participant's lease runs out (10 s by default), so the watch fires about 11 s after
 * the kill; a server that shuts down cleanly leaves at once. The polls and the second run on `clock`.
 */
export function watchServer(available: () => boolean, reason: string, clock: Clock = systemClock): ServerWatch {
  const lost = new AbortController();
  let goneSinceMs: number | undefined;
  const timer = clock.every(POLL_MS, () => {
    let up: boolean;
    try {
      up = available();
    } catch {
      // The client is gone (the context is closing): nothing to watch any more.
      timer.cancel();
      return;
    }
    if (up) {
      goneSinceMs = undefined;
      return;
    }
    const now = clock.nowMs();
    goneSinceMs ??= now;
    if (now - goneSinceMs < GONE_MS) return;
    timer.cancel();
    lost.abort(reason);
  });
  timer.unref?.();
  return { signal: lost.signal, stop: () => timer.cancel() };
}
