/**
 * A WebSocket route of the HTTP face: a GET on a path of the route table answered by an upgrade (the `ws` library in
 * noServer mode; the listener's one upgrade dispatcher hands it the upgrades of its path). What every such route does
 * is here; its file (handlers/robot/jog-socket.ts) adds only what it does with a connection.
 *
 * Before the upgrade: the rate of upgrades per client address (429 with Retry-After before anything else is looked at,
 * lib/net/upgrade-rate.ts, as on the Foxglove face; summarised on the audit trail, not logged one by one), admission (Host and Origin, held to the rule of state-changing requests: a socket carries
 * commands), the token (the Authorization header, or the subprotocol `armgate.token.<base64url of the token>` a
 * browser can send: never chosen, logged nor echoed; the server answers with the route's own subprotocol when offered),
 * the role of the route's operation, and the query (a route defines none: a parameter is a 422 with its field path, as
 * on a REST route). A GET of the path without the upgrade is the app's 426, another method its 405 (lib/http/routes.ts).
 * After it: a message cap (1009), a flood cap (1008), text messages only (1003); each message is a JSON body of the
 * operation, called through the one call pipeline (`invoke`: role, validation with field paths under `message`, run,
 * texts) and its error sent back as `{type: 'error', status, detail}`.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { type RawData, type WebSocket, WebSocketServer } from 'ws';
import {
  type AdmissionPolicy,
  admit,
  authorizationAuth,
  type TokenEntry,
  upgradeAuthorization,
} from '../admission/front-door.ts';
import { type ApiError, boundedIssues, statusOf } from '../core/errors.ts';
import { type CallFacts, callerOf, type Decoded, deferred, invoke } from '../core/invoke.ts';
import {
  type AnyOperation,
  type AppState,
  type Channel,
  hasRest,
  type RestOperation,
  type WebSocketFile,
} from '../core/operation.ts';
import { type Caller, type Principal, refusal } from '../core/roles.ts';
import { err, ok, type Result } from '../result.ts';
import { refuseUpgrade } from './raw-answer.ts';
import { queryFields } from './rest.ts';
import { UpgradeRate } from '../net/upgrade-rate.ts';
import { webSocketMessages } from '../net/message-budget.ts';

/** The prefix of the subprotocol that carries the token: `armgate.token.` + base64url(token), no padding. */
export const TOKEN_PROTOCOL_PREFIX = 'armgate.token.';

/** What start-up hands a WebSocket route of the app. */
export interface WebSocketApp {
  readonly state: AppState;
  readonly admission: AdmissionPolicy;
  /** The accepted tokens (empty: no authentication, every caller anonymous admin). */
  readonly tokens: readonly TokenEntry[];
  /** Writes one structured log line (the app's sink). */
  readonly log: (fields: Record<string, string | number>) => void;
}

/** One open connection, as the route's file sees it. */
export interface Connection {
  readonly caller: Caller;
  /** Its calls' channel: what an operation holds for it (a jog) is keyed by it. */
  readonly channel: Channel;
  /** True while the socket is open. */
  readonly open: boolean;
  /** Sends a message as JSON (nothing once the socket is closing). */
  send(message: unknown): void;
  close(code: number, reason: string): void;
}

/** What a route does with one connection: `closed` when it ends, however. Undefined: it closed the connection. */
export type Serve = (connection: Connection) => { readonly closed: () => void } | undefined;

/** A WebSocket route as its file declares it. */
export interface WebSocketRouteSpec {
  /** Its name in texts: `the jog WebSocket`. */
  readonly name: string;
  readonly path: string;
  /** The operation each text message calls, a REST one (its role gates the upgrade; its route off, this one is too). */
  readonly operation: AnyOperation;
  /** The subprotocol the server answers with when the client offers it. */
  readonly protocol: string;
  /** Largest message (bytes): beyond it the socket is closed with 1009 (message too big). */
  readonly maxMessageBytes: number;
  /** Most messages a socket may send in one second: beyond it the socket is closed with 1008 (policy). */
  readonly maxMessagesPerS: number;
  /** Why the app cannot serve the route now (the upgrade is refused with 503), or undefined. */
  readonly unavailable?: (state: AppState) => string | undefined;
  /** Made once per app: what the route does with each connection once upgraded (see {@link Serve}). */
  readonly serve: (state: AppState) => Serve;
}

/** The token of a `armgate.token.<base64url>` subprotocol among those offered, if any. */
function tokenOfProtocols(header: string | undefined): string | undefined {
  for (const offered of (header ?? '').split(',')) {
    const value = offered.trim();
    if (!value.startsWith(TOKEN_PROTOCOL_PREFIX)) continue;
    const encoded = value.slice(TOKEN_PROTOCOL_PREFIX.length);
    if (!/^[A-Za-z0-9_-]+$/.test(encoded)) return '';
    return Buffer.from(encoded, 'base64url').toString('utf8');
  }
  return undefined;
}

/** A text message read as the operation's input: a JSON object, else a 422 located at `message`. */
function decodeMessage(data: RawData): Result<Decoded, ApiError> {
  let fields: unknown;
  try {
    fields = JSON.parse(data.toString());
  } catch (e) {
    return err({
      kind: 'validation',
      issues: [{ loc: ['message'], msg: `not JSON: ${(e as Error).message}`, type: 'json_invalid' }],
    });
  }
  if (typeof fields !== 'object' || fields === null || Array.isArray(fields))
    return err({
      kind: 'validation',
      issues: [{ loc: ['message'], msg: 'the message must be a JSON object', type: 'object_type' }],
    });
  return ok({ fields });
}

/** An error as the socket sends it: its status (the one table) and the issues, or the text. */
const errorMessage = (error: ApiError) => ({
  type: 'error',
  status: statusOf(error),
  detail: error.kind === 'validation' ? error.issues : error.detail,
});

const MESSAGE = () => 'message';

/** Most bytes queued for a socket's client (sent, not yet read): beyond, it is closed (1008), as Foxglove's 1 MiB. */
const SEND_BUFFER_LIMIT = 1024 * 1024;
/** How long (ms) a socket dropped for reading too slowly has to read up to its close frame before it is ended. */
const DROP_GRACE_MS = 5000;

/** How long (ms) a socket closed at shutdown may take to answer the close frame before it is ended. */
const SHUTDOWN_GRACE_MS = 500;

/** Most bytes of a close frame's reason (RFC 6455 5.5: 125 bytes of payload, 2 of them the code). */
const MAX_CLOSE_REASON_BYTES = 123;

/**
 * A close reason as a close frame can carry it: cut to {@link MAX_CLOSE_REASON_BYTES} of UTF-8 at a character (`ws`
 * throws on a longer one; a reason naming a 64-character token name is longer).
 */
function closeReason(reason: string): string {
  if (Buffer.byteLength(reason) <= MAX_CLOSE_REASON_BYTES) return reason;
  let cut = '';
  for (const char of reason) {
    if (Buffer.byteLength(cut + char) > MAX_CLOSE_REASON_BYTES - 3) break;
    cut += char;
  }
  return `${cut}...`;
}

/** The upgrade handler of a route for an app (see the module comment), and its shutdown. */
function openRoute(spec: WebSocketRouteSpec, operation: RestOperation, app: WebSocketApp) {
  const { state, log } = app;
  const { services } = state;
  const { path } = spec;
  const calledAs = `the ${spec.name} WebSocket`;
  const authenticate = authorizationAuth(app.tokens, services.guesses);
  const serve = spec.serve(state);
  const upgrades = new UpgradeRate();
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: spec.maxMessageBytes,
    // The token's protocol is never chosen (nor echoed): the answer is the route's protocol when offered, or none.
    handleProtocols: (protocols) => (protocols.has(spec.protocol) ? spec.protocol : false),
  });
  let next = 1;
  const answerLog = (status: number) => log({ level: 'info', msg: 'request', method: 'GET', path, status, ms: 0 });
  const refuse = (socket: Duplex, status: number, detail: Parameters<typeof refuseUpgrade>[2], headers = {}) => {
    answerLog(status);
    return refuseUpgrade(socket, status, detail, headers);
  };

  /** The caller of an upgrade, or undefined once the upgrade is refused. */
  const screen = (req: IncomingMessage, socket: Duplex): Principal | undefined => {
    const admission = admit(app.admission, {
      method: 'POST',
      host: req.headers.host ?? '',
      origin: typeof req.headers.origin === 'string' ? req.headers.origin : null,
      secFetchSite: typeof req.headers['sec-fetch-site'] === 'string' ? req.headers['sec-fetch-site'] : null,
      preflightMethod: null,
    });
    if (admission.kind !== 'admit') {
      const detail =
        admission.kind === 'refuse' && admission.error.kind !== 'validation' ? admission.error.detail : 'refused';
      return refuse(socket, 403, detail.replace('POST requests', `a ${spec.name} WebSocket`));
    }
    const fromProtocol = tokenOfProtocols(req.headers['sec-websocket-protocol']);
    const authorization = upgradeAuthorization(req.headers.authorization, fromProtocol, 'the token subprotocol');
    if (!authorization.ok) return refuse(socket, 400, authorization.error);
    const address = req.socket.remoteAddress ?? '';
    // The header's text as it is: a token of the subprotocol is any UTF-8 (no Headers object, which throws on a
    // character beyond Latin-1 or a control character: uncaught here, it ended the process).
    const principal = authenticate(authorization.value, address);
    if (!principal.ok) {
      const error = principal.error;
      const tooMany = error.kind === 'too_many_requests';
      const reason = tooMany ? error.detail : `${calledAs} without a valid token`;
      services.audit?.recordRefusal('websocket', address, 'GET', path, tooMany ? 429 : 401, reason);
      if (tooMany) return refuse(socket, 429, error.detail, { 'Retry-After': error.retryAfterS });
      const detail = error.kind === 'unauthorized' ? error.detail : 'refused';
      return refuse(
        socket,
        401,
        `${detail} (or offer the subprotocol ${TOKEN_PROTOCOL_PREFIX}<base64url of the token>)`,
      );
    }
    // The role is the operation's (the pipeline checks it at every message too): refused here, no socket is opened.
    const denied = refusal(operation, principal.value, calledAs);
    if (denied) return refuse(socket, 403, denied.kind === 'forbidden' ? denied.detail : 'refused');
    // A WebSocket route defines no query: a parameter is refused 422 with its path, as a REST route's unknown one.
    const query = queryFields(req.url ?? '', [], {});
    if (!query.ok)
      return refuse(socket, 422, query.error.kind === 'validation' ? boundedIssues(query.error.issues) : 'refused');
    const unavailable = spec.unavailable?.(state);
    if (unavailable) return refuse(socket, 503, unavailable);
    return principal.value;
  };
  const connect = (ws: WebSocket, principal: Principal) => {
    const caller = callerOf(principal, 'rest');
    // Unique among the app's sockets, whatever their route.
    const channel: Channel = { key: `websocket:${path}:${next++}`, via: 'websocket' };
    const connection: Connection = {
      caller,
      channel,
      get open() {
        return ws.readyState === ws.OPEN;
      },
      send: (message) => {
        if (ws.readyState !== ws.OPEN) return;
        if (ws.bufferedAmount > SEND_BUFFER_LIMIT) return tooSlow();
        ws.send(JSON.stringify(message));
      },
      close: (code, reason) => shut(code, reason),
    };
    // What the route holds for the socket ends when the server closes it, not when the client answers the close
    // (`ws` keeps a closing socket readable until then, or its 30 s close timeout): nothing sent after counts.
    let served: ReturnType<Serve>;
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      served?.closed();
    };
    const shut = (code: number, reason: string) => {
      ws.close(code, closeReason(reason));
      end();
    };
    // A client that does not read what it is sent (its answers, its statuses) is dropped as the Foxglove face drops
    // one: what it leaves unread would be kept in memory without a bound.
    const tooSlow = () => {
      log({ level: 'warn', msg: `${calledAs} closed`, reason: 'reads too slowly', bytes: ws.bufferedAmount });
      shut(1008, `reads too slowly: over ${SEND_BUFFER_LIMIT} bytes queued`);
      setTimeout(() => ws.terminate(), DROP_GRACE_MS).unref();
    };
    ws.on('error', () => ws.terminate());
    served = serve(connection);
    if (!served) return;
    // The flood cap: messages counted per second.
    let windowStart = performance.now();
    let inWindow = 0;
    const flooding = () => {
      const now = performance.now();
      if (now - windowStart >= 1000) {
        windowStart = now;
        inWindow = 0;
      }
      return ++inWindow > spec.maxMessagesPerS;
    };
    // A socket's messages, up to maxMessagesPerS a second, are not put on the trail one by one: what they do is (a
    // jog's start and end, lib/control/jog-session.ts).
    const facts: Omit<CallFacts, 'arrivedAtStop'> = {
      ...state,
      caller: principal,
      face: 'rest',
      calledAs,
      channel,
      audit: false,
      locate: MESSAGE,
    };
    ws.on('message', (data: RawData, isBinary: boolean) => {
      // Stamped on arrival: a stop answered after this message cannot be undone by it.
      const arrivedAtStop = services.arbiter.stopCount;
      if (ended || ws.readyState !== ws.OPEN) return;
      if (flooding()) return shut(1008, `more than ${spec.maxMessagesPerS} messages a second`);
      if (isBinary)
        return shut(1003, `text messages only: each a JSON body as ${operation.rest.method} ${operation.rest.path}`);
      // Handled within the WebSocket faces' shared budget of messages per turn (lib/net/message-budget.ts): past it,
      // this socket is paused and the message waits its turn; one whose socket ended meanwhile is not called.
      webSocketMessages.handle(ws, () => {
        if (ended || ws.readyState !== ws.OPEN) return;
        // The input is read once the role allows the call (as a REST body is); a command that is taken answers nothing.
        // A handler's fault is a 500 to this socket (as over REST), never an unhandled rejection that ends the process.
        const failed = (e: unknown) => {
          log({ level: 'error', msg: `${calledAs}: a message failed`, error: String(e).slice(0, 300) });
          connection.send({ type: 'error', status: 500, detail: 'internal error' });
        };
        try {
          invoke(
            operation,
            deferred(() => decodeMessage(data)),
            { ...facts, arrivedAtStop },
          ).then((result) => {
            if (!result.ok) connection.send(errorMessage(result.error));
          }, failed);
        } catch (e) {
          failed(e);
        }
      });
    });
    ws.on('close', end);
  };

  const take = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const address = req.socket.remoteAddress ?? '';
    const rate = upgrades.take(address);
    if (!rate.ok) {
      const detail = upgrades.describe(`${spec.name} WebSocket`);
      services.audit?.recordRefusal('websocket', address, 'GET', path, 429, detail);
      return refuseUpgrade(socket, 429, detail, { 'Retry-After': rate.retryAfterS });
    }
    const principal = screen(req, socket);
    if (!principal) return;
    wss.handleUpgrade(req, socket, head, (ws) => {
      answerLog(101);
      connect(ws, principal);
    });
  };

  return {
    upgrade(req: IncomingMessage, socket: Duplex, head: Buffer) {
      // A fault here ends this socket, never the process: the server's 'upgrade' event has no one to catch a throw.
      try {
        take(req, socket, head);
      } catch (e) {
        log({ level: 'error', msg: `${calledAs} failed`, error: String(e).slice(0, 300) });
        socket.destroy();
      }
    },
    close() {
      for (const client of wss.clients) client.close(1001, 'the server is shutting down');
      // A client that does not answer the close frame is not waited for (`ws` would wait 30 s, and the server's close
      // with it); the Foxglove face ends its sockets alike.
      setTimeout(() => {
        for (const client of wss.clients) client.terminate();
      }, SHUTDOWN_GRACE_MS).unref();
      wss.close();
    },
  };
}

/** A WebSocket route's file entry for the catalog (lib/core/operation.ts's WebSocketFile). */
export function webSocketRoute(spec: WebSocketRouteSpec): WebSocketFile {
  const operation = spec.operation;
  if (!hasRest(operation)) throw new Error(`the WebSocket at ${spec.path}: ${operation.name} has no REST route`);
  return { path: spec.path, operation, open: (app: WebSocketApp) => openRoute(spec, operation, app) };
}

/** Opens a catalog's WebSocket route for an app: its upgrade handler and its shutdown. */
export function openWebSocket(file: WebSocketFile, app: WebSocketApp): ReturnType<WebSocketFile['open']> {
  return (file.open as (app: WebSocketApp) => ReturnType<WebSocketFile['open']>)(app);
}
