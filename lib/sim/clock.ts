/** A monotonic clock in milliseconds and the wall clock for message stamps; injectable for tests. */
export interface Clock {
  /** Monotonic milliseconds (performance.now() in production). */
  nowMs(): number;
  /** Milliseconds since the Unix epoch, for message stamps. */
  epochMs(): number;
}

/** The process clock. */
export const systemClock: Clock = {
  nowMs: () => performance.now(),
  epochMs: () => Date.now(),
};
