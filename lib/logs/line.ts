/**
 * Structured log lines (JSON, one per line) on stdout. Never pass secrets.
 *
 * Lines are kept in the order logged and written together: at most {@link FLUSH_AFTER_MS} after
 * the first line waiting, at once when {@link FLUSH_AT_BYTES} are waiting, and at once for a line
 * that is not `info` (a warning or an error is never held back). With stdout on a file, as under a
 * service manager, every write is a synchronous system call: one per request cost about a third
 * of the read throughput, one per turn of the event loop still about a sixth (a busy turn answers
 * only a few requests). Nothing is lost on the way out: `flushLogLines` runs on the process's
 * 'exit' (after SIGTERM's shutdown, process.exit and an uncaught exception alike), and server.ts
 * calls it before its own lines so that stdout stays in order. Only SIGKILL can drop lines: those
 * of the last {@link FLUSH_AFTER_MS} at most.
 */

/** The longest a line waits to be written, ms. */
export const FLUSH_AFTER_MS = 10;
/** Waiting lines are written at once when they reach this size (UTF-16 code units, about bytes). */
export const FLUSH_AT_BYTES = 64 * 1024;

let pending: string[] = [];
let pendingLength = 0;
let timer: NodeJS.Timeout | undefined;
let exitHooked = false;
/** stdout failed (its reader closed it): lines are dropped from then on. */
let stdoutFailed = false;

let stampMs = Number.NaN;
let stampText = '';

/** The time of now as a JSON string, worked out once per millisecond (a busy server logs tens of lines per ms). */
function timeField(): string {
  const now = Date.now();
  if (now !== stampMs) {
    stampMs = now;
    stampText = JSON.stringify(new Date(now).toISOString());
  }
  return stampText;
}

export function logLine(fields: Record<string, string | number | boolean | undefined>): void {
  // The time first, then the fields as given: one JSON object per line.
  const text = JSON.stringify(fields);
  append(
    text === '{}' ? `{"time":${timeField()}}\n` : `{"time":${timeField()},${text.slice(1)}\n`,
    fields.level !== undefined && fields.level !== 'info',
  );
}

/**
 * The line of one answered request: what `logLine({ level: 'info', msg: 'request', method, path, status, ms })` writes,
 * built without the object and its serialization (every request writes one; a read's whole handling is a few us).
 */
export function logRequestLine(method: string, path: string, status: number, ms: number): void {
  append(
    `{"time":${timeField()},"level":"info","msg":"request","method":${JSON.stringify(method)},"path":${JSON.stringify(path)},"status":${JSON.stringify(status)},"ms":${JSON.stringify(ms)}}\n`,
    false,
  );
}

/** Queues a line; `now`: write it and every line before it at once. */
function append(line: string, now: boolean): void {
  pending.push(line);
  pendingLength += line.length;
  if (!exitHooked) {
    exitHooked = true;
    process.on('exit', flushLogLines);
  }
  if (now || pendingLength >= FLUSH_AT_BYTES) flushLogLines();
  else timer ??= setTimeout(flushLogLines, FLUSH_AFTER_MS).unref();
}

/**
 * Keeps the process serving when its output fails: a reader of stdout that goes away (`npm start | head -1`, a log
 * shipper that died: EPIPE) would otherwise end the process through the stream's unhandled 'error', and with it the
 * server of the arm, on the first line logged after. From stdout's first error on, the lines are dropped and stderr
 * says so once; an error of stderr itself leaves nothing to tell.
 */
export function surviveOutputErrors(): void {
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (stdoutFailed) return;
    stdoutFailed = true;
    process.stderr.write(
      `armgate: stdout failed (${e.code ?? e.message}: its reader closed it?); log lines are dropped from now on\n`,
    );
  });
  process.stderr.on('error', () => undefined);
}

/** Writes every pending line now, in order (stdout on a file, a pipe or a terminal writes synchronously on Linux). */
export function flushLogLines(): void {
  if (timer !== undefined) {
    clearTimeout(timer);
    timer = undefined;
  }
  if (pending.length === 0) return;
  const text = pending.join('');
  pending = [];
  pendingLength = 0;
  if (!stdoutFailed) process.stdout.write(text);
}
