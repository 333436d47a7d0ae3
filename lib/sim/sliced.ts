import { err, ok, type Result } from '../result.ts';

/**
 * Drives a planning generator to completion, handing the event loop back every `sliceMs` so
 * reads and stop requests are answered while a planner searches. When `signal` aborts (a stop
 * revoked the goal), the planner is abandoned at its next step: the error is the abort reason.
 */
export async function runSliced<R>(generator: Generator<void, R>, nowMs: () => number, signal?: AbortSignal, sliceMs = 8): Promise<Result<R, string>> {
  let sliceEnd = nowMs() + sliceMs;
  for (;;) {
    if (signal?.aborted) {
      generator.return(undefined as never);
      return err(typeof signal.reason === 'string' ? signal.reason : 'cancelled');
    }
    const step = generator.next();
    if (step.done) return ok(step.value);
    if (nowMs() >= sliceEnd) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      sliceEnd = nowMs() + sliceMs;
    }
  }
}
