/**
 * Drives a planning generator to completion, handing the event loop back every `sliceMs` so
 * reads and stop requests are answered while a planner searches.
 */
export async function runSliced<R>(generator: Generator<void, R>, nowMs: () => number, sliceMs = 8): Promise<R> {
  let sliceEnd = nowMs() + sliceMs;
  for (;;) {
    const step = generator.next();
    if (step.done) return step.value;
    if (nowMs() >= sliceEnd) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      sliceEnd = nowMs() + sliceMs;
    }
  }
}
