/**
 * The listener: the HTTP/1.1 server in front of the app, and its caps. It takes every connection (counted against the
 * caps), reads each request's head, stamps it with the arbiter's count of stops, finds its route in the route table
 * (once: the turn queue and the app are handed it), checks it against the caps, and hands it to the app
 * (lib/server/request.ts: its way through the server); what it answers itself is written by lib/server/own-answers.ts.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { createServerAdapter } from '@whatwg-node/server';
import { rawAnswer } from '../http/raw-answer.ts';
import {
  type BeyondCaps,
  isRestRead,
  isBodilessStop,
  isStop,
  isStream,
  mayHoldStops,
  type RouteMatch,
  type RouteTable,
} from '../http/routes.ts';
import type { WebLimits } from '../settings/load.ts';
import {
  answer,
  answerAndLinger,
  answerParserRefusal,
  drainAfterAnswer,
  LINGER_MAX_BYTES,
  type LingerBounds,
  type LogSink,
  refuseConnect,
} from './own-answers.ts';
import { absoluteUrl, BodylessRequest, hasBody, readRequestTarget, writeResponse } from './request.ts';
import { headerLines, repeatedHeader, STOP_DESPITE_GUESSES } from '../admission/front-door.ts';
import { watchBodies } from './slow-bodies.ts';
import { AUTHORIZATION_LINES_TRIED, unansweredStops } from './unanswered-stops.ts';
import { dispatchUpgrades } from './upgrades.ts';
import type { MakeEventRoom } from '../http/sse.ts';

export interface ListenerOptions {
  /**
   * The app: what a request in origin-form is handed to, with the client's address (the socket's peer), its stamp
   * (the arbiter's count of stops when it arrived, see {@link ListenerOptions.arbiter}) and its route, found here.
   */
  readonly fetch: (
    request: Request,
    address: string,
    arrivedAtStop?: number,
    beyond?: BeyondCaps,
    match?: RouteMatch,
  ) => Promise<Response>;
  /**
   * The arbiter: its count of stops is read as a request's head is parsed (the request's stamp); the requests parsed
   * from one read of the socket all take the first one's.
   */
  readonly arbiter?: { readonly stopCount: number };
  readonly log: LogSink;
  /** Caps and timeouts (web.limits). */
  readonly limits: WebLimits;
  /** Every method some route serves (start-up derives it from the routes): `OPTIONS *` answers it as Allow. */
  readonly methods: readonly string[];
  /**
   * The route table (lib/http/routes.ts), read from the request line alone: each request's route, found once and
   * handed on to the app with the request, says the stops no cap refuses (and the routes whose requests may hold one
   * in their body, let through beyond a cap to the app, which answers them 503), the event stream a GET holds, and the
   * REST reads the app is handed as a light view when they carry no body (lib/server/request.ts; the app answers them
   * as it answers every request, only the objects around them are lighter); and the WebSocket routes the one upgrade
   * dispatcher hands their upgrades (GET /robot/jog).
   */
  readonly routes: Pick<RouteTable, 'match' | 'upgradeAt'>;
  /** Ends the event stream stalled longest to make room at a cap (lib/http/sse.ts): its response, or undefined. */
  readonly makeEventRoom?: MakeEventRoom;
}

/** A running listener: the server, and what its caps count. */
export interface Listener {
  readonly server: Server;
  readonly caps: Caps;
  /** Stops the body watch (the server's close ends the rest). */
  close(): void;
}

// The caps: what clients may hold of the service at once (web.limits), one job, that a crowd never keeps a stop out.
// Open connections in all and per client address, open event streams, uploads being received: counted here, and
// asked before a request reaches the app, so that a request beyond a cap is answered before its body is read (503, then
// the lingering close: lib/server/own-answers.ts). A new connection beyond a connection cap makes room by shedding an
// idle one (nothing being served on it) rather than being refused, so that a crowd of idle connections never keeps a
// new client, and its stop, out. A new event stream at its cap makes room likewise, by ending the stream whose client
// has stalled longest (took no byte for a while though bytes waited: lib/http/sse.ts), when one has.

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

/**
 * Largest declared body of a request let through beyond a cap because its route may hold a stop in its body (an MCP
 * tool call is a few hundred bytes; the endpoint reads no more than this past a limit, lib/mcp/past-guesses.ts): a
 * larger one is refused before its body as every other request is.
 */
export const BEYOND_CAP_BODY_MAX_BYTES = 64 * 1024;

/**
 * How long an idle keep-alive connection is kept after its last answer, as every answer advertises it (`Keep-Alive:
 * timeout=5`, ms). Node closes it 1 s later than that (its own margin, against a client's reuse racing the close): the
 * safe direction, kept (tests/server/keep-alive.test.ts, docs/api.md).
 */
export const KEEP_ALIVE_TIMEOUT_MS = 5000;

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
  /** What frees each event stream's place, by its response. */
  readonly #eventHolds = new WeakMap<object, () => void>();
  readonly #makeEventRoom: MakeEventRoom;

  constructor(limits: CapLimits, makeEventRoom: MakeEventRoom = () => undefined) {
    this.#limits = limits;
    this.#makeEventRoom = makeEventRoom;
  }

  /**
   * Counts a new connection until it closes. Beyond max_connections_per_client the oldest idle connection of its
   * address is shed (destroyed) to make room; beyond max_connections, the oldest idle connection of the address
   * holding the most; when none is idle, the connection of the event stream stalled longest (of the address, or of
   * all: lib/http/sse.ts). Only when there is none is the new one marked as beyond the cap for its life: it is still read, a stop on it is served and anything else answered 503; it must send its request
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
    if (own.size >= limits.maxConnectionsPerClient && !this.#shedOldestIdle(own) && !this.#shedStalled(own))
      refusal = {
        cap: 'client_connections',
        detail: `this client address holds ${limits.maxConnectionsPerClient} connections already (web.limits.max_connections_per_client); close some or try again later`,
      };
    else if (this.#connections >= limits.maxConnections && !this.#shedFromBusiest() && !this.#shedStalled())
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

  /** Ends the event stream stalled longest of `sockets` (of all if none): its places are free now, its socket soon. */
  #shedStalled(sockets?: Set<Socket>): boolean {
    const cap = sockets ? 'max_connections_per_client' : 'max_connections';
    const response = this.#makeEventRoom(cap, sockets && ((r) => sockets.has(r.socket as Socket)));
    if (!response) return false;
    this.#eventHolds.get(response)?.();
    if (response.socket) this.#forgets.get(response.socket)?.();
    this.#shed++;
    return true;
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
    if (holding === 'event_stream' && this.#eventStreams >= limits.maxEventClients && !this.#eventRoom())
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

  /** True when a stalled event stream was ended to make room: its place is free at once (its socket closes soon). */
  #eventRoom(): boolean {
    const release = this.#eventHolds.get(this.#makeEventRoom('max_event_clients') ?? this);
    release?.();
    return release !== undefined;
  }

  /**
   * Counts a served request's holding (an event stream, an upload) until the function returned is called (once);
   * `response`: an event stream's, by which it is released when it is ended to make room.
   */
  hold(holding: Exclude<Holding, 'none'>, response?: object): () => void {
    if (holding === 'event_stream') this.#eventStreams++;
    else this.#uploads++;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      if (holding === 'event_stream') this.#eventStreams--;
      else this.#uploads--;
    };
    if (response && holding === 'event_stream') this.#eventHolds.set(response, release);
    return release;
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

/** What the listener found of a request as its head was parsed, handed to the app with it. */
interface Head {
  /** The arbiter's count of stops when it arrived (see {@link ListenerOptions.arbiter}). */
  readonly stamp: number | undefined;
  readonly match: RouteMatch;
  /** The cap it was let through beyond (its route may hold a stop in its body): the app answers it 503. */
  readonly beyond?: BeyondCaps | undefined;
}

/** What a request holds while it is served: an event stream (a GET of a stream route), an upload (multipart body). */
function holdingOf(match: RouteMatch, req: IncomingMessage): Holding {
  if (isStream(match)) return 'event_stream';
  if (/^multipart\//i.test(req.headers['content-type'] ?? '')) return 'upload';
  return 'none';
}

/**
 * The HTTP server in front of the app: every request form HTTP/1.1 allows reaches the app in origin-form, or is
 * answered here (`OPTIONS *`: 204 with Allow; a target no route can serve, and CONNECT: 4xx). It holds the caps of
 * web.limits (connections in all and per client address, event streams, uploads: beyond one, 503 with Retry-After
 * before the body is read and a lingering close, POST /stop always served, an MCP stop tool's call carried out behind
 * the same 503) and its timeouts (headers, whole request, and a body's minimum rate: 408, the connection closed without
 * lingering: a slow client is not given more time).
 */
export function createListener(options: ListenerOptions): Listener {
  const { limits, log, routes } = options;
  const allow = options.methods.join(', ');
  const caps = new Caps(limits, options.makeEventRoom);
  /** Connections whose request's body the app is reading (a FIN there ends that request, logged by the app). */
  const readingBody = new WeakSet<Duplex>();
  /**
   * Connections answered with a cap's 503 and lingering (closing): the requests the parser still finds on them
   * (pipelined after the refused body) are never served.
   */
  const lingering = new WeakSet<Duplex>();
  const lingerBounds: LingerBounds = {
    timeMs: limits.lingeringTimeMs,
    idleMs: limits.lingeringTimeoutMs,
    maxBytes: LINGER_MAX_BYTES,
  };
  /**
   * The stamp of the requests parsed from one read of a socket: the first one's. Node parses requests pipelined in one
   * read one at a time and runs what each started in between, so a jog read behind a stop would else be stamped after
   * the stop's answer, and move the arm, although it arrived before that answer (docs/api.md, Jogging).
   */
  const readStamps = new WeakMap<Duplex, { readonly bytesRead: number; readonly stamp: number }>();
  const stampOf = (socket: Socket): number | undefined => {
    const now = options.arbiter?.stopCount;
    if (now === undefined) return undefined;
    const read = readStamps.get(socket);
    if (read?.bytesRead === socket.bytesRead) return read.stamp;
    readStamps.set(socket, { bytesRead: socket.bytesRead, stamp: now });
    return now;
  };
  /**
   * What was found of each request the adapter hands the app (later) as its head was parsed: its stamp, its route, and
   * for one let through beyond a cap because its route may hold a stop in its body (the MCP endpoint), that cap: the app
   * answers it with the cap's 503 and carries out only a right token's stops (lib/http/routes.ts's createApp).
   */
  const heads = new WeakMap<IncomingMessage, Head>();
  /** Connections where such a request is being answered (closing after its 503): no later request on them is served. */
  const closing = new WeakSet<Duplex>();
  const adapter = createServerAdapter<{ req: IncomingMessage }>((request, context) => {
    const head = heads.get(context.req);
    return options.fetch(request, context.req.socket?.remoteAddress ?? '', head?.stamp, head?.beyond, head?.match);
  });
  const answerBodyless = (req: IncomingMessage, res: ServerResponse, target: string, head: Head, stream: boolean) => {
    const request = new BodylessRequest(head.match.method, absoluteUrl(req, target), req, res);
    // The app catches what its handlers throw (a 500); what could still fail here is writing to a socket gone.
    options
      .fetch(request as unknown as Request, req.socket.remoteAddress ?? '', head.stamp, undefined, head.match)
      .then((response) => writeResponse(res, response, stream))
      .catch((e: unknown) => {
        log({ level: 'error', msg: 'writing an answer failed', error: e instanceof Error ? e.message : String(e) });
        res.destroy();
      });
  };
  /** Connections whose request offered an upgrade not taken: read again by a new parser (the upgrade dispatcher). */
  const reread = new WeakSet<Socket>();
  /** Stops carried out without their own answer: behind a close, with two Authorization lines, offered with an upgrade. */
  const stops = unansweredStops(options.fetch, log);
  const bodies = watchBodies(
    { graceMs: limits.bodyGraceMs, minBytesPerS: limits.bodyMinBytesPerS },
    (req, res, error) => {
      const socket = req.socket;
      if (res.headersSent || !socket || socket.destroyed) {
        // Answered already (its line is logged): the connection just ends.
        socket?.destroy();
        return;
      }
      // The 408 goes out on the socket, then the body's readers fail with the error: the app logs the request once, 408.
      socket.write(rawAnswer(408, error.message), () => req.destroy(error));
      // A client that does not read the answer either is not waited for.
      setTimeout(() => req.destroy(error), 1000).unref();
    },
  );
  const server = createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
      // The timeouts are checked this often (Node's default is every 30 s).
      connectionsCheckingInterval: Math.min(1000, limits.headersTimeoutMs / 2),
    },
    (req, res) => {
      const socket = req.socket as Socket;
      const stamp = stampOf(socket);
      const method = req.method ?? '';
      const target = readRequestTarget(method, req.url ?? '');
      if (lingering.has(socket) || closing.has(socket)) {
        // Pipelined behind a request refused with Connection: close (a cap's 503, written here or by the app): no
        // answer follows that one, nothing else is served; a stop is carried out all the same (unanswered-stops.ts).
        const behind = target.kind === 'serve' ? routes.match(method, target.path) : undefined;
        if (target.kind === 'serve' && behind && isBodilessStop(behind))
          return stops.carryOut(req, target, behind, stamp);
        if (lingering.has(socket)) socket.destroy();
        return;
      }
      if (target.kind === 'server_options') return answer(res, log, req, 204, undefined, { allow });
      if (target.kind === 'refuse') return answer(res, log, req, 400, { detail: target.detail });
      // The request's route, found once: the caps, the light way, the turn queue and the app read it.
      const match = routes.match(method, target.path);
      const repeated = repeatedHeader(req.rawHeaders);
      const mayHold = mayHoldStops(match) && Number(req.headers['content-length'] ?? 0) <= BEYOND_CAP_BODY_MAX_BYTES;
      let beyond: BeyondCaps | undefined;
      if (repeated) {
        // A stop is carried out for a right token among its Authorization lines, answered alike: a REST one here
        // (unanswered-stops.ts), the stops in an MCP POST's body by the app (its 400, as beyond a cap); not with two Hosts.
        const stop = repeated === 'Authorization' && (isBodilessStop(match) || mayHold);
        const detail = `more than one ${repeated} header${stop ? `; ${STOP_DESPITE_GUESSES}` : ''}`;
        const authorizations = headerLines(req.rawHeaders, 'authorization').slice(0, AUTHORIZATION_LINES_TRIED);
        if (!stop || isBodilessStop(match) || headerLines(req.rawHeaders, 'host').length > 1) {
          answer(res, log, req, 400, { detail });
          if (stop) stops.carryOut(req, target, match, stamp);
          return;
        }
        beyond = { detail, retryAfterS: limits.retryAfterS, authorizations };
        closing.add(socket);
      }
      // A stop offered with an upgrade behind a pending answer, read again: carried out already, answered now.
      const early = isBodilessStop(match) ? upgrades.takeStopAnswer(socket) : undefined;
      if (early) return void early.then((response) => writeResponse(res, response, false)).catch(() => res.destroy());
      if (target.authority !== undefined) {
        req.url = target.path;
        req.headers.host = target.authority;
      }
      const holding = holdingOf(match, req);
      const refused = beyond ? undefined : caps.refusal(req.socket as Socket, holding, isStop(match));
      if (refused && mayHold) {
        // Its stops are in its body (an MCP tool call): the app reads it (bounded), answers the same 503 and carries
        // out a right token's stops; nothing else runs, nothing is held.
        beyond = { detail: refused.detail, retryAfterS: limits.retryAfterS };
        closing.add(req.socket);
      } else if (refused) {
        // Before the body is read: the answer goes out, then the body still coming is drained (bounded) and dropped,
        // so that the client reads the 503 rather than a reset (lib/server/own-answers.ts).
        answerAndLinger(req, rawAnswer(503, refused.detail, { 'Retry-After': limits.retryAfterS }), lingerBounds);
        lingering.add(req.socket);
        log({ level: 'info', msg: 'request', method, path: (req.url ?? '').slice(0, 200), status: 503, ms: 0 });
        return;
      }
      if (holding !== 'none' && !refused) {
        const release = caps.hold(holding, res);
        res.once('close', release);
        res.once('finish', release);
      }
      if (hasBody(req)) {
        bodies.watch(req, res);
        readingBody.add(req.socket);
        req.once('end', () => readingBody.delete(req.socket));
        // An answer given before the body was read (413, 401, 403, 415): the rest is drained within the bounds.
        res.once('prefinish', () => drainAfterAnswer(req, lingerBounds));
      } else if (holding === 'event_stream' || isRestRead(match))
        // The event stream too: its frames are written on the socket directly (lib/http/direct-body.ts).
        return answerBodyless(req, res, target.path, { stamp, match }, holding === 'event_stream');
      heads.set(req, { stamp, match, beyond });
      void adapter(req, res);
    },
  );
  // Every connection is taken: beyond a cap an idle one is shed to make room, or the new one serves only a stop.
  server.on('connection', (socket: Socket) => {
    // A connection read again after an upgrade it offered and was not given is counted once, when it came.
    if (!reread.has(socket)) caps.connected(socket);
  });
  // What Node's parser refuses (a malformed request, headers too large, too slow): a JSON 4xx (own-answers.ts).
  server.on('clientError', answerParserRefusal(log, readingBody));
  // The one upgrade dispatcher (lib/server/upgrades.ts): a WebSocket to its route, any other offer not taken.
  const upgrades = dispatchUpgrades({
    server,
    routes,
    log,
    reread,
    stopNow: (req, target, match) => stops.answerOf(req, target, match, stampOf(req.socket as Socket)),
  });
  // CONNECT (authority-form) asks for a tunnel: armgate is no proxy (405).
  server.on('connect', refuseConnect(log, allow));
  return { server, caps, close: () => bodies.close() };
}
