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
 * the kill; a server that shuts down cleanly leaves at once.
 */
export function watchServer(available: () => boolean, reason: string): ServerWatch {
  const lost = new AbortController();
  let goneSinceMs: number | undefined;
  const timer = setInterval(() => {
    let up: boolean;
    try {
      up = available();
    } catch {
      // The client is gone (the context is closing): nothing to watch any more.
      clearInterval(timer);
      return;
    }
    if (up) {
      goneSinceMs = undefined;
      return;
    }
    const now = performance.now();
    goneSinceMs ??= now;
    if (now - goneSinceMs < GONE_MS) return;
    clearInterval(timer);
    lost.abort(reason);
  }, POLL_MS);
  timer.unref();
  return { signal: lost.signal, stop: () => clearInterval(timer) };
}
