/**
 * What the server answers itself, without the app: a request beyond a cap (503 before its body is read, then the
 * lingering close), the rest of a body after an answer the app gave before reading it (drained within bounds), what
 * Node's HTTP parser refused (400, 408, 431), `OPTIONS *` and a target no route serves, CONNECT, and the head of a
 * request whose offer to upgrade is not taken (read again without it). The listener (lib/server/listener.ts) decides
 * when; these write the answers.
 *
 * The refusal's lingering close, as nginx's lingering_close: a request refused before its body was read (a cap's 503)
 * is answered on the socket, the socket's write side is closed (FIN after the answer), and what the client still sends
 * is read and dropped, within bounds, before the connection closes. Closing with unread bytes in the receive buffer
 * makes the kernel send a reset (RST), and a client still writing its body then mostly sees "connection reset" instead
 * of the answer. The dropped bytes are never kept: a body is read one chunk (at most 64 KiB) per turn of the event
 * loop, so that many refused bodies draining at once do not delay a stop.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { MAX_JSON_BODY_BYTES, MAX_UPLOAD_BYTES } from '../body/limits.ts';
import { rawAnswer } from '../http/raw-answer.ts';

/** Writes one structured log line (the app's sink). */
export type LogSink = (fields: Record<string, string | number>) => void;

/**
 * How long a connection answered by the server itself and closing (a parser's 408 after the idle cut, a 400, CONNECT)
 * waits for the client to close its side before it is destroyed (ms): a client that never reads nor closes does not
 * keep it, half-closed and counted.
 */
const CLOSING_GRACE_MS = 1000;

/** Writes `answer` and closes the connection: at once when the client has closed its side, else after the grace. */
export function endAndClose(socket: Duplex, answer: string): void {
  const close = () => socket.destroy();
  const grace = setTimeout(close, CLOSING_GRACE_MS).unref();
  socket.once('close', () => clearTimeout(grace));
  socket.once('end', close);
  socket.end(answer);
}

/** Answers a request on the socket directly (the app never sees it) and logs it as the app logs a request. */
export function answer(
  res: ServerResponse,
  log: LogSink,
  req: IncomingMessage,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = body === undefined ? '' : JSON.stringify(body);
  res.writeHead(status, {
    ...(text === '' ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }),
    ...headers,
  });
  res.end(text);
  log({ level: 'info', msg: 'request', method: req.method ?? '', path: (req.url ?? '').slice(0, 200), status, ms: 0 });
}

/**
 * The listener's 'clientError': what Node's parser refuses (a malformed request line or header, headers too large, a
 * request too slow) is answered with a JSON 4xx saying what, logged once at info level: it is the client's doing.
 * `readingBody`: the connections whose request's body the app is reading.
 */
export function answerParserRefusal(
  log: LogSink,
  readingBody: WeakSet<Duplex>,
): (error: NodeJS.ErrnoException, socket: Duplex) => void {
  return (error, socket) => {
    // A client that went away before its request was whole: nothing to answer, nothing to log. One that closed its
    // side (FIN) in the middle of a body the app is reading: the app logs that request once (499); nothing is written.
    if (error.code === 'ECONNRESET' || !socket.writable) return void socket.destroy();
    if (error.code === 'HPE_INVALID_EOF_STATE' && readingBody.has(socket)) return void socket.destroy();
    const [status, detail] = clientErrorAnswer(error);
    log({ level: 'info', msg: 'request refused by the HTTP parser', status, code: error.code ?? '' });
    endAndClose(socket, rawAnswer(status, detail));
  };
}

/** The listener's 'connect': CONNECT (authority-form) asks for a tunnel, and armgate is no proxy: 405 with `allow`. */
export function refuseConnect(log: LogSink, allow: string): (req: IncomingMessage, socket: Duplex) => void {
  return (_req, socket) => {
    endAndClose(socket, rawAnswer(405, 'CONNECT is not served: no tunnels', { Allow: allow }));
    log({ level: 'info', msg: 'request', method: 'CONNECT', path: '', status: 405, ms: 0 });
  };
}

/** The status and detail for a request Node's HTTP parser refused. */
export function clientErrorAnswer(error: NodeJS.ErrnoException): [number, string] {
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return [408, 'the request did not arrive in time'];
    case 'HPE_HEADER_OVERFLOW':
      return [431, 'the request headers are too large'];
    default:
      return [400, `malformed HTTP request (${error.code ?? 'parse error'})`];
  }
}

/** A request's head as it came (Node keeps its header lines), without the offer to upgrade and its HTTP2-Settings. */
export function headWithoutUpgrade(req: IncomingMessage): string {
  const lines = [`${req.method} ${req.url} HTTP/${req.httpVersion}`];
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i] ?? '';
    const value = raw[i + 1] ?? '';
    const lower = name.toLowerCase();
    if (lower === 'upgrade' || lower === 'http2-settings') continue;
    if (lower === 'connection') {
      const kept = value
        .split(',')
        .map((token) => token.trim())
        .filter((token) => token !== '' && !/^(upgrade|http2-settings)$/i.test(token));
      if (kept.length > 0) lines.push(`${name}: ${kept.join(', ')}`);
    } else lines.push(`${name}: ${value}`);
  }
  return `${lines.join('\r\n')}\r\n\r\n`;
}

/** How long, and how much, a refused request's connection is drained before it closes. */
export interface LingerBounds {
  /** Longest a connection lingers after its answer (ms): web.limits.lingering_time_s, as nginx's lingering_time. */
  readonly timeMs: number;
  /** Longest wait for the client's next bytes (ms): web.limits.lingering_timeout_s, as nginx's lingering_timeout. */
  readonly idleMs: number;
  /** Most body bytes read and dropped (LINGER_MAX_BYTES); beyond them the connection is cut. */
  readonly maxBytes: number;
}

/**
 * The most body bytes drained (docs/settings.md, web.limits): the largest body the service takes (an upload of
 * MAX_UPLOAD_BYTES, its multipart envelope within 256 KiB) and 1 MiB more, so that any body a client could rightly
 * send is drained and a client that keeps sending is cut.
 */
export const LINGER_MAX_BYTES = MAX_UPLOAD_BYTES + MAX_JSON_BODY_BYTES;

/**
 * Reads and drops the rest of `req`'s body within `bounds`, one chunk (at most 64 KiB) per turn of the event loop: the
 * stream's buffer takes the next chunk and the parser stops reading the socket until the turn after. `whole` is called
 * when the body has all come; at a bound the connection is cut (destroyed, whatever is unread).
 */
function drainBody(req: IncomingMessage, bounds: LingerBounds, whole: () => void): void {
  const socket = req.socket as Socket;
  const cut = () => socket.destroy();
  const timers = [setTimeout(cut, bounds.timeMs).unref(), setTimeout(cut, bounds.idleMs).unref()];
  const idle = timers[1] as NodeJS.Timeout;
  const stop = () => {
    for (const timer of timers) clearTimeout(timer);
  };
  socket.once('close', stop);
  // The socket's destruction fails the request's stream ('aborted'): nothing to report, the answer is given.
  req.on('error', () => {});
  if (req.complete) {
    stop();
    whole();
    return;
  }
  let dropped = 0;
  let resuming = false;
  req.on('data', (chunk: Buffer) => {
    dropped += chunk.byteLength;
    if (dropped > bounds.maxBytes) {
      cut();
      return;
    }
    idle.refresh();
    req.pause();
    if (resuming) return;
    resuming = true;
    setImmediate(() => {
      resuming = false;
      req.resume();
    });
  });
  req.once('end', () => {
    stop();
    socket.off('close', stop);
    whole();
  });
}

/**
 * Writes `answer` (a whole HTTP/1.1 response with `Connection: close`) on the request's socket, ends the write side,
 * and drains the request's body within `bounds`. The connection closes when the answer is written and the client has
 * sent its whole body or closed its side, or at a bound (then cut, whatever is unread). Until it closes it counts as
 * the open connection it is (web.limits.max_connections and max_connections_per_client), nothing more; the listener
 * serves no request the parser still finds on it.
 */
export function answerAndLinger(req: IncomingMessage, answer: string, bounds: LingerBounds): void {
  const socket = req.socket as Socket;
  if (socket.destroyed) return;
  let written = false;
  let bodyDone = false;
  const closeIfDone = () => {
    if (written && bodyDone) socket.destroy();
  };
  // The client closed its side: nothing more will come.
  socket.once('end', () => {
    bodyDone = true;
    closeIfDone();
  });
  socket.end(answer, () => {
    written = true;
    closeIfDone();
  });
  drainBody(req, bounds, () => {
    bodyDone = true;
    closeIfDone();
  });
}

/**
 * After an answer the app gave before reading the whole body (413, 401, 403, 415) on a connection kept open: the rest
 * of the body is read and dropped within `bounds`, as after a refusal, so that the connection serves the next request;
 * a client that keeps sending beyond a bound is cut. Called as the answer ends ('prefinish'), before Node would drain
 * the body itself without a bound.
 */
export function drainAfterAnswer(req: IncomingMessage, bounds: LingerBounds): void {
  if (req.complete || req.destroyed || (req.socket as Socket | null)?.destroyed !== false) return;
  drainBody(req, bounds, () => {});
}
