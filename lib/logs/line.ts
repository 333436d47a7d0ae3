/**
 * Structured log lines (JSON, one per line) on stdout. Never pass secrets.
 *
 * Lines are kept in the order logged and written together once per event-loop turn: one write
 * for all the requests a turn answered rather than one each (with stdout on a file, as under a
 * service manager, every write is a synchronous system call, and one per request cost about a
 * third of the read throughput). Nothing is lost on the way out: `flushLogLines` runs on the
 * process's 'exit' (after SIGTERM's shutdown, process.exit and an uncaught exception alike),
 * and server.ts calls it before its own lines so that stdout stays in order. Only SIGKILL can
 * drop the lines of the turn in progress.
 */
let pending: string[] = [];
let scheduled = false;
let exitHooked = false;

export function logLine(fields: Record<string, string | number | boolean | undefined>): void {
  pending.push(`${JSON.stringify({ time: new Date().toISOString(), ...fields })}\n`);
  if (scheduled) return;
  scheduled = true;
  setImmediate(flushLogLines);
  if (!exitHooked) {
    exitHooked = true;
    process.on('exit', flushLogLines);
  }
}

/** Writes every pending line now, in order (stdout on a file, a pipe or a terminal writes synchronously on Linux). */
export function flushLogLines(): void {
  scheduled = false;
  if (pending.length === 0) return;
  const text = pending.join('');
  pending = [];
  process.stdout.write(text);
}
