import { err, ok, type Result } from '../result.ts';

/** Longest stretch of planning work between two returns to the event loop (ms). */
export const SLICE_MS = 4;

/** Hands the event loop back (after pending I/O, such as a POST /stop, has been served). */
export const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A checkpoint for a loop of small steps: awaiting it yields to the event loop once the slice is spent. */
export function sliceCheckpoint(nowMs: () => number, sliceMs = SLICE_MS): () => Promise<void> | undefined {
  let sliceEnd = nowMs() + sliceMs;
  return () => {
    if (nowMs() < sliceEnd) return undefined;
    return yieldToLoop().then(() => {
      sliceEnd = nowMs() + sliceMs;
    });
  };
}

/**
 * Drives a planning generator to completion, handing the event loop back every `sliceMs` so
 * reads and stop requests are answered while a planner searches: it yields when the slice is
 * spent, or when the next step (as long as the last one) would overrun it. When `signal` aborts (a
 * stop revoked the goal), the planner is abandoned at its next step: the error is the abort reason.
 */
export async function runSliced<R>(
  generator: Generator<void, R>,
  nowMs: () => number,
  signal?: AbortSignal,
  sliceMs = SLICE_MS,
): Promise<Result<R, string>> {
  let sliceEnd = nowMs() + sliceMs;
  let stepMs = 0;
  for (;;) {
    if (signal?.aborted) {
      generator.return(undefined as never);
      return err(typeof signal.reason === 'string' ? signal.reason : 'cancelled');
    }
    const started = nowMs();
    const step = generator.next();
    if (step.done) return ok(step.value);
    const now = nowMs();
    stepMs = now - started;
    if (now + stepMs >= sliceEnd) {
      await yieldToLoop();
      sliceEnd = nowMs() + sliceMs;
    }
  }
}
