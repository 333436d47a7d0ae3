/**
 * What clients may hold of the service at once (web.limits), and how a request beyond it is refused: one job, that a
 * crowd never keeps a stop out.
 *
 * The caps: open connections in all and per client address, open event streams, uploads being received. The counts
 * are kept here; the listener asks before a request reaches the app, so a request beyond a cap is answered before its
 * body is read. A new connection beyond a connection cap makes room by shedding an idle one (nothing being served on
 * it) rather than being refused, so that a crowd of idle connections never keeps a new client, and its stop, out.
 *
 * The refusal's lingering close, as nginx's lingering_close: a request refused before its body was read (a cap's 503)
 * is answered on the socket, the socket's write side is closed (FIN after the answer), and what the client still sends
 * is read and dropped, within bounds, before the connection closes. Closing with unread bytes in the receive buffer
 * makes the kernel send a reset (RST), and a client still writing its body then mostly sees "connection reset" instead
 * of the answer. The dropped bytes are never kept: a body is read one chunk (at most 64 KiB) per turn of the event
 * loop, so that many refused bodies draining at once do not delay a stop.
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { MAX_JSON_BODY_BYTES, MAX_UPLOAD_BYTES } from '../http/limits.ts';

export interface CapLimits {
  readonly maxConnections: number;
  readonly maxConnectionsPerClient: number;
  readonly maxEventClients: number;
  readonly maxUploads: number;
}

/** Which cap a request is beyond, with the sentence its 503 says. */
export interface Refusal {
  readonly cap: 'connections' | 'client_connections' | 'event_clients' | 'uploads';
  readonly detail: string;
}

/** What kind of work a request holds while it is served. */
export type Holding = 'event_stream' | 'upload' | 'none';

/** Longest a connection taken beyond a connection cap may take to send its request (ms): a stop, or a 503. */
export const BEYOND_CAP_REQUEST_MS = 2000;

/**
 * True when no request is being served on `socket`: nothing sent yet, headers on their way, or kept alive between
 * requests. Node's server sets the socket's `_httpMessage` to the response of the request being served and clears it
 * when that response is done: read here rather than counting every request, which would cost the REST reads. A socket
 * handed over by an upgrade (a WebSocket) has no parser any more: it is never idle.
 */
const isIdle = (socket: Socket) => {
  const http = socket as Socket & { _httpMessage?: unknown; parser?: unknown };
  return http._httpMessage == null && http.parser != null;
};

/** Counts of what is held, and the decision for a new request. */
export class Caps {
  readonly #limits: CapLimits;
  #connections = 0;
  /** The open connections of each client address, oldest first. */
  readonly #byClient = new Map<string, Set<Socket>>();
  #eventStreams = 0;
  #uploads = 0;
  /** Connections taken beyond a connection cap: only a stop is served on them. */
  readonly #beyond = new WeakMap<Socket, Refusal>();
  /** What stops counting each connection (once): on its close, or at once when it is shed. */
  readonly #forgets = new WeakMap<Socket, () => void>();
  /** Connections shed (destroyed to make room) since start. */
  #shed = 0;

  constructor(limits: CapLimits) {
    this.#limits = limits;
  }

  /**
   * Counts a new connection until it closes. Beyond max_connections_per_client the oldest idle connection of its
   * address is shed (destroyed) to make room; beyond max_connections, the oldest idle connection of the address
   * holding the most. Only when none is idle (every one is serving a request) is the new one marked as beyond the cap
   * for its life: it is still read, a stop on it is served and anything else answered 503; it must send its request
   * within {@link BEYOND_CAP_REQUEST_MS}.
   */
  connected(socket: Socket): void {
    const client = socket.remoteAddress ?? '';
    const limits = this.#limits;
    let own = this.#byClient.get(client);
    if (!own) {
      own = new Set();
      this.#byClient.set(client, own);
    }
    let counted = true;
    const forget = () => {
      if (!counted) return;
      counted = false;
      this.#connections--;
      own.delete(socket);
      if (own.size === 0 && this.#byClient.get(client) === own) this.#byClient.delete(client);
    };
    socket.once('close', forget);
    this.#forgets.set(socket, forget);
    let refusal: Refusal | undefined;
    if (own.size >= limits.maxConnectionsPerClient && !this.#shedOldestIdle(own))
      refusal = {
        cap: 'client_connections',
        detail: `this client address holds ${limits.maxConnectionsPerClient} connections already (web.limits.max_connections_per_client); close some or try again later`,
      };
    else if (this.#connections >= limits.maxConnections && !this.#shedFromBusiest())
      refusal = {
        cap: 'connections',
        detail: `the service holds ${limits.maxConnections} connections already (web.limits.max_connections); try again later`,
      };
    this.#connections++;
    own.add(socket);
    if (refusal) {
      this.#beyond.set(socket, refusal);
      const late = setTimeout(() => {
        if (isIdle(socket)) socket.destroy();
      }, BEYOND_CAP_REQUEST_MS).unref();
      socket.once('close', () => clearTimeout(late));
    }
  }

  /** Destroys the oldest idle connection of `sockets`; false when every one is serving a request. */
  #shedOldestIdle(sockets: Set<Socket>): boolean {
    for (const socket of sockets)
      if (isIdle(socket)) {
        this.#forgets.get(socket)?.();
        socket.destroy();
        this.#shed++;
        return true;
      }
    return false;
  }

  /** Sheds the oldest idle connection of the address holding the most connections (the next if all of its are busy). */
  #shedFromBusiest(): boolean {
    let busiest: Set<Socket> | undefined;
    for (const sockets of this.#byClient.values()) if (sockets.size > (busiest?.size ?? 0)) busiest = sockets;
    if (busiest && this.#shedOldestIdle(busiest)) return true;
    // Every connection of that address serves a request: the others, most connections first.
    const addresses = [...this.#byClient.values()].filter((s) => s !== busiest).sort((a, b) => b.size - a.size);
    return addresses.some((sockets) => this.#shedOldestIdle(sockets));
  }

  /**
   * Why a request on `socket` holding `holding` is refused, or undefined to serve it. An urgent request (stop) is never
   * refused: the caps are there so that it always gets through.
   */
  refusal(socket: Socket, holding: Holding, urgent: boolean): Refusal | undefined {
    if (urgent) return undefined;
    const limits = this.#limits;
    const beyond = this.#beyond.get(socket);
    if (beyond) return beyond;
    if (holding === 'event_stream' && this.#eventStreams >= limits.maxEventClients)
      return {
        cap: 'event_clients',
        detail: `${limits.maxEventClients} event streams are open already (web.limits.max_event_clients); try again later`,
      };
    if (holding === 'upload' && this.#uploads >= limits.maxUploads)
      return {
        cap: 'uploads',
        detail: `${limits.maxUploads} uploads are being received already (web.limits.max_uploads); try again later`,
      };
    return undefined;
  }

  /** Counts a served request's holding until `done` is called (once). */
  hold(holding: Holding): () => void {
    if (holding === 'none') return () => {};
    if (holding === 'event_stream') this.#eventStreams++;
    else this.#uploads++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (holding === 'event_stream') this.#eventStreams--;
      else this.#uploads--;
    };
  }

  /** The counts now (tests, logs); `shed`: connections destroyed to make room since start. */
  counts(): { connections: number; eventStreams: number; uploads: number; shed: number } {
    return {
      connections: this.#connections,
      eventStreams: this.#eventStreams,
      uploads: this.#uploads,
      shed: this.#shed,
    };
  }
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
