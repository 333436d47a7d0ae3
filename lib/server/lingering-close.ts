/**
 * A lingering close, as nginx's lingering_close: a request refused before its body was read (a cap's 503) is answered
 * on the socket, the socket's write side is closed (FIN after the answer), and what the client still sends is read
 * and dropped, within bounds, before the connection closes. Closing with unread bytes in the receive buffer makes the
 * kernel send a reset (RST), and a client still writing its body then mostly sees "connection reset" instead of the
 * answer. The dropped bytes are never kept: a body is read one chunk (at most 64 KiB) per turn of the event loop, so
 * that many refused bodies draining at once do not delay a stop.
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { MAX_JSON_BODY_BYTES, MAX_UPLOAD_BYTES } from '../http/limits.ts';

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

/** Sockets lingering: the requests the parser still finds on them (pipelined after the refused body) are not served. */
const lingering = new WeakSet<Socket>();

/** True when `socket` is lingering after a refusal: a request on it is dropped, never served. */
export const isLingering = (socket: Socket): boolean => lingering.has(socket);

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
 * the open connection it is (web.limits.max_connections and max_connections_per_client), nothing more.
 */
export function answerAndLinger(req: IncomingMessage, answer: string, bounds: LingerBounds): void {
  const socket = req.socket as Socket;
  if (socket.destroyed) return;
  lingering.add(socket);
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
