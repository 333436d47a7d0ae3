/**
 * The worst stall of this process's event loop over a span, and how much of it the thread spent running versus
 * runnable and waiting for a CPU (Linux's /proc/self/task/<tid>/schedstat: ns on a CPU, ns waiting on a run queue).
 * On a shared machine the event-loop delay includes the time the scheduler gave other work; this tells which is
 * which: a stall the thread spent running is the server's own work, one it spent waiting is the machine's load.
 */
import { readFileSync } from 'node:fs';

/** The longest gap between ticks (ms) and the thread's running and waiting time during it (ms). */
export interface WorstStall {
  readonly wallMs: number;
  readonly runningMs: number;
  readonly waitingMs: number;
}

/** How often the probe ticks (ms); a gap is measured between two ticks. */
const TICK_MS = 5;

/** The event loop's thread's [running, waiting] ns, or undefined where /proc does not say (not Linux). */
function schedstat(): [number, number] | undefined {
  try {
    const [running, waiting] = readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ').map(Number);
    return running !== undefined && waiting !== undefined ? [running, waiting] : undefined;
  } catch {
    return undefined;
  }
}

/** Starts watching; `stop()` ends it and answers the worst stall (undefined where schedstat is not available). */
export function watchStalls(): { stop(): WorstStall | undefined } {
  let lastMs = performance.now();
  let last = schedstat();
  let worst: WorstStall | undefined;
  const timer = setInterval(() => {
    const nowMs = performance.now();
    const now = schedstat();
    if (now && last && (!worst || nowMs - lastMs > worst.wallMs))
      worst = { wallMs: nowMs - lastMs, runningMs: (now[0] - last[0]) / 1e6, waitingMs: (now[1] - last[1]) / 1e6 };
    lastMs = nowMs;
    last = now;
  }, TICK_MS);
  return {
    stop() {
      clearInterval(timer);
      return worst;
    },
  };
}
