import { getPriority, setPriority } from 'node:os';

/**
 * How much nicer than the event loop's thread the trajectory checker's thread runs (Linux): when the two compete for
 * a CPU, the event loop's thread (where a stop is read and answered) gets about nine tenths of it. The checker still
 * gets every CPU nothing else wants: a check under load takes longer, and fails for it only past JOB_TIMEOUT_MS as
 * before.
 */
export const CHECKER_NICENESS = 10;

/** The nicest value Linux knows. */
const NICEST = 19;

/**
 * Lowers the calling thread's priority by {@link CHECKER_NICENESS} (the checker calls it once). Only on Linux, where a
 * nice value is a thread's own; elsewhere it would lower the whole process, so nothing is done there. A system that
 * refuses it changes nothing else either.
 */
export function lowerThisThreadsPriority(): void {
  if (process.platform !== 'linux') return;
  try {
    setPriority(Math.min(NICEST, getPriority() + CHECKER_NICENESS));
  } catch {
    // Not permitted here (a sandbox): the checker runs at the process's priority, as before.
  }
}
