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
  let bodyDone = req.complete;
  let dropped = 0;
  const cut = () => socket.destroy();
  const whole = setTimeout(cut, bounds.timeMs).unref();
  const idle = setTimeout(cut, bounds.idleMs).unref();
  const closeIfDone = () => {
    if (written && bodyDone) socket.destroy();
  };
  socket.once('close', () => {
    clearTimeout(whole);
    clearTimeout(idle);
  });
  // The client closed its side: nothing more will come.
  socket.once('end', () => {
    bodyDone = true;
    closeIfDone();
  });
  socket.end(answer, () => {
    written = true;
    closeIfDone();
  });
  if (bodyDone) return;
  // One chunk per turn: the stream's buffer takes the next chunk and the parser stops reading the socket until then.
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
    bodyDone = true;
    closeIfDone();
  });
  // The socket's destruction fails the request's stream ('aborted'): nothing to report, the answer is given.
  req.on('error', () => {});
}
