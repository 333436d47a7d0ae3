/**
 * The jog WebSocket at GET /robot/jog (the `ws` library in noServer mode; the listener's one upgrade dispatcher hands
 * it the upgrades of its path). Admission (Host and Origin, as for a state-changing request), the token (the
 * Authorization header, or the subprotocol `armgate.token.<base64url of the token>` a browser can send; the server
 * answers with the subprotocol {@link JOG_PROTOCOL} and never logs or echoes the token) and the role of POST /robot/jog
 * are checked before the upgrade. Each text message is a body as POST /robot/jog's; the server sends a status (JSON)
 * every {@link STATUS_PERIOD_MS} ms while this socket's jog is in force. The socket closing brakes the arm; silence
 * past the ttl brakes it anyway (the dead-man). One jogging socket at a time; a message cap and a flood cap, each with
 * a clear close code.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import * as v from 'valibot';
import { type RawData, type WebSocket, WebSocketServer } from 'ws';
import { type AdmissionPolicy, admit } from '../admission/origin.ts';
import type { Services } from '../app/services.ts';
import { locatedIssues } from '../core/errors.ts';
import { type AnyOperation, inputSchemaOf, renderText } from '../core/operation.ts';
import { type Caller, type Principal, refusal } from '../core/roles.ts';
import { principalAuth, type TokenEntry } from '../http/auth.ts';
import { type JogCommandInput, jogTargetOf } from '../ops/jog.ts';
import type { RobotContext } from '../ros/context.ts';
import type { LogSink } from './listener.ts';

/** The subprotocol the server answers with (non-secret); a browser client offers it beside its token. */
export const JOG_PROTOCOL = 'armgate.jog.v1';
/** The prefix of the subprotocol that carries the token: `armgate.token.` + base64url(token), no padding. */
export const TOKEN_PROTOCOL_PREFIX = 'armgate.token.';
/** Largest message (bytes): beyond it the socket is closed with 1009 (message too big). */
export const JOG_MAX_MESSAGE_BYTES = 4096;
/** Most messages a socket may send in one second: beyond it the socket is closed with 1008 (policy). */
export const JOG_MAX_MESSAGES_PER_S = 100;
/** How often a status goes out while the socket's jog is in force (ms): 20 a second. */
export const STATUS_PERIOD_MS = 50;
/** Close codes: another socket jogs (4409), not a text message (1003), flood (1008), too big (1009, by ws). */
export const CLOSE_BUSY = 4409;

/** What the jog socket needs of the app. */
export interface JogSocketOptions {
  readonly services: Services;
  readonly context: RobotContext;
  readonly admission: AdmissionPolicy;
  /** The accepted tokens (empty: no authentication, every caller anonymous admin). */
  readonly tokens: readonly TokenEntry[];
  /** POST /robot/jog's operation: its input schema and role. */
  readonly operation: AnyOperation;
  readonly log: LogSink;
}

/** The jog socket's upgrade handler and its shutdown. */
export interface JogSocket {
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  close(): void;
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

/** Refuses an upgrade with an HTTP answer on the raw socket. */
function refuse(socket: Duplex, status: number, reason: string, detail: string): void {
  const body = JSON.stringify({ detail });
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nConnection: close\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

const REASONS: Record<number, string> = {
  401: 'Unauthorized',
  403: 'Forbidden',
  429: 'Too Many Requests',
  503: 'Service Unavailable',
};

/** The jog WebSocket (see the module comment). */
export function createJogSocket(options: JogSocketOptions): JogSocket {
  const { services, context, operation, log } = options;
  const authenticate = principalAuth(options.tokens, options.services.guesses);
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: JOG_MAX_MESSAGE_BYTES,
    // The token's protocol is never chosen (nor echoed): the answer is the jog protocol when offered, or none.
    handleProtocols: (protocols) => (protocols.has(JOG_PROTOCOL) ? JOG_PROTOCOL : false),
  });
  let next = 1;
  /** The socket that holds the jog slot (one jogging client at a time). */
  let holder: { readonly socket: WebSocket; readonly caller: Caller } | undefined;

  const answerLog = (status: number) =>
    log({ level: 'info', msg: 'request', method: 'GET', path: '/robot/jog', status, ms: 0 });

  const handleUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const admission = admit(options.admission, {
      // A jog socket moves the arm: its Origin is held to the rule of state-changing requests.
      method: 'POST',
      host: req.headers.host ?? '',
      origin: typeof req.headers.origin === 'string' ? req.headers.origin : null,
      secFetchSite: typeof req.headers['sec-fetch-site'] === 'string' ? req.headers['sec-fetch-site'] : null,
      preflightMethod: null,
    });
    if (admission.kind !== 'admit') {
      const detail =
        admission.kind === 'refuse' && admission.error.kind !== 'validation' ? admission.error.detail : 'refused';
      answerLog(403);
      return refuse(socket, 403, REASONS[403] ?? '', detail.replace('POST requests', 'a jog WebSocket'));
    }
    const fromProtocol = tokenOfProtocols(req.headers['sec-websocket-protocol']);
    const authorization =
      req.headers.authorization ?? (fromProtocol !== undefined ? `Bearer ${fromProtocol}` : undefined);
    const address = req.socket.remoteAddress ?? '';
    const principal = authenticate(
      { headers: new Headers(authorization ? { authorization } : {}) } as Request,
      address,
    );
    if (!principal.ok && principal.error.kind === 'too_many_requests') {
      answerLog(429);
      services.audit?.recordRefusal('rest', address, 'GET', '/robot/jog', 429, principal.error.detail);
      return refuse(socket, 429, REASONS[429] ?? '', principal.error.detail);
    }
    if (!principal.ok) {
      answerLog(401);
      services.audit?.recordRefusal(
        'rest',
        address,
        'GET',
        '/robot/jog',
        401,
        'the jog WebSocket without a valid token',
      );
      return refuse(
        socket,
        401,
        REASONS[401] ?? '',
        `${principal.error.kind === 'unauthorized' ? principal.error.detail : 'refused'} (or offer the subprotocol ${TOKEN_PROTOCOL_PREFIX}<base64url of the token>)`,
      );
    }
    const caller: Caller = { ...(principal.value as Principal), face: 'rest' };
    const denied = refusal(operation, caller, 'the jog WebSocket');
    if (denied) {
      answerLog(403);
      return refuse(socket, 403, REASONS[403] ?? '', denied.kind === 'forbidden' ? denied.detail : 'refused');
    }
    if (!services.jog || !context.jog) {
      answerLog(503);
      return refuse(socket, 503, REASONS[503] ?? '', 'jogging is not available on this backend');
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      answerLog(101);
      serve(ws, caller, next++);
    });
  };

  const serve = (ws: WebSocket, caller: Caller, id: number) => {
    const jog = services.jog;
    if (!jog) return ws.close(1011, 'jogging is not available');
    if (holder && holder.socket.readyState === holder.socket.OPEN) {
      ws.close(
        CLOSE_BUSY,
        `another client jogs over the WebSocket (${holder.caller.name}); one jogging client at a time`,
      );
      return;
    }
    holder = { socket: ws, caller };
    const owner = { key: `websocket:${id}`, via: 'websocket' as const };
    const schema = inputSchemaOf(operation, context.limits);
    const send = (message: unknown) => {
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(message));
    };
    const status = (extra: Record<string, unknown> = {}) => {
      const now = jog.status();
      if (!now) return;
      send({
        type: 'status',
        jogging: jog.owner() === owner.key,
        moving: now.moving,
        paused: now.paused,
        positions: now.positions.map((q) => Math.round(q * 1e6) / 1e6),
        limit: now.limit,
        ...extra,
      });
    };
    let ticker: ReturnType<typeof setInterval> | undefined;
    const stopTicker = () => {
      if (ticker) clearInterval(ticker);
      ticker = undefined;
    };
    const unsubscribe = jog.onEvents((event) => {
      if (event.owner !== owner.key) return;
      if (event.state === 'started' && !ticker) ticker = setInterval(() => status(), STATUS_PERIOD_MS);
      if (event.state === 'ended') {
        stopTicker();
        // The jog is over (its owner is cleared only after the listeners run).
        status({ jogging: false, ended: event.reason ?? 'released' });
      }
    });
    // The flood cap: messages counted per second.
    let windowStart = performance.now();
    let inWindow = 0;
    const flooding = () => {
      const now = performance.now();
      if (now - windowStart >= 1000) {
        windowStart = now;
        inWindow = 0;
      }
      return ++inWindow > JOG_MAX_MESSAGES_PER_S;
    };
    ws.on('message', (data: RawData, isBinary: boolean) => {
      // Stamped on arrival: a stop answered after this message cannot be undone by it.
      const arrivedAtStop = services.arbiter.stopCount;
      if (flooding()) return ws.close(1008, `more than ${JOG_MAX_MESSAGES_PER_S} messages a second`);
      if (isBinary) return ws.close(1003, 'text messages only: each a JSON body as POST /robot/jog');
      let body: unknown;
      try {
        body = JSON.parse(data.toString());
      } catch (e) {
        return send({
          type: 'error',
          status: 422,
          detail: [{ loc: ['message'], msg: `not JSON: ${(e as Error).message}`, type: 'json_invalid' }],
        });
      }
      if (typeof body !== 'object' || body === null || Array.isArray(body))
        return send({
          type: 'error',
          status: 422,
          detail: [{ loc: ['message'], msg: 'the message must be a JSON object', type: 'object_type' }],
        });
      const parsed = schema ? v.safeParse(schema, body) : undefined;
      if (!parsed?.success) {
        const error = parsed ? locatedIssues(parsed.issues, () => 'message') : undefined;
        return send({ type: 'error', status: 422, detail: error?.kind === 'validation' ? error.issues : [] });
      }
      const input = parsed.output as JogCommandInput;
      const answer = jog.command(jogTargetOf(input), input.ttl_ms, { caller, owner, arrivedAtStop });
      if (!answer.ok)
        return send({
          type: 'error',
          status: answer.error.kind === 'busy' ? 409 : 503,
          detail: renderText(answer.error.detail, 'rest'),
        });
    });
    ws.on('close', () => {
      stopTicker();
      unsubscribe();
      jog.release(owner.key, 'socket closed');
      if (holder?.socket === ws) holder = undefined;
    });
    ws.on('error', () => ws.terminate());
    status();
  };

  return {
    handleUpgrade,
    close() {
      for (const client of wss.clients) client.close(1001, 'the server is shutting down');
      wss.close();
    },
  };
}
