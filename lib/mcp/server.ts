import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { DEFAULT_NEGOTIATED_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { Response as PonyfillResponse } from '@whatwg-node/fetch';
import type { Arrival } from '../core/roles.ts';
import { type AdmissionPolicy, sdkAllowLists } from '../admission/front-door.ts';
import { type Clock, systemClock } from '../clock.ts';
import { MCP_CALL_ABANDONED } from '../control/dead-man.ts';
import { ACCEPT_BOTH, authInfoOf, lazyRequestInfo, SessionTransport } from './session-transport.ts';
import { readBoundedText } from '../body/bounded.ts';
import { parseJson } from '../body/parse-json.ts';
import {
  BATCH_TOO_LARGE,
  type Batch,
  declaresElicitation,
  inspect,
  MAX_MCP_BATCH,
  normalizeToolCalls,
  refuseWide,
} from './batch.ts';
import { MAX_JSON_BODY_BYTES } from '../body/limits.ts';
import { sessionIds } from './session-ids.ts';
import { stopBodyOf } from './past-guesses.ts';
import { foreignCharset } from '../body/charset.ts';
import { type Accepts, accepts, batchAnswer, isJsonType, relayStream } from './wire.ts';

export { OAUTH_DISCOVERY_PATH, oauthDiscoveryResponse } from './oauth.ts';

/** Sessions idle longer than this are closed (ms); a session with a call in progress is never idle. */
export const SESSION_IDLE_MS = 10 * 60 * 1000;
/** Most sessions kept at once; beyond it the least recently used idle one goes. */
export const MAX_SESSIONS = 256;
/**
 * Largest JSON-RPC body accepted (bytes): twice REST's largest JSON body (1 MiB, lib/body/limits.ts), so that every
 * input REST takes fits in a call whatever the client's JSON spells it as (`1e-6` is `0.000001` to JSON.stringify),
 * with its envelope. Not the SDK transport's 4 MiB: parsing JSON costs the event loop 25 to 50 ms a MiB (objects of
 * many keys), which a stop sent meanwhile waits for.
 */
export const MAX_MCP_BODY_BYTES = 2 * MAX_JSON_BODY_BYTES;
/** The methods the MCP endpoint serves: POST (messages), DELETE (ending a session). */
export const MCP_METHODS = ['POST', 'DELETE'] as const;

/**
 * Ids of ended (DELETE) sessions remembered so they stay 404, per principal (token name): the oldest of a principal
 * are forgotten first, so another token's churn never forgets one. A forgotten id is as one closed for idleness.
 */
export const ENDED_IDS_KEPT = 4096;

interface Session {
  readonly id: string;
  /** The principal (token name) that opened it: requests of any other are answered as if it did not exist. */
  readonly owner: string;
  readonly server: Server;
  readonly transport: SessionTransport;
  /** The exact Host and Origin values the SDK's DNS-rebinding protection admits for this session. */
  readonly hosts: ReadonlySet<string>;
  readonly origins: ReadonlySet<string>;
  /** When it was last used, on the endpoint's clock (ms). */
  lastUsedMs: number;
}

/** A POST read and parsed: the request, who sent it, its JSON body, what the body holds, and what the client accepts. */
interface ParsedPost {
  readonly request: Request;
  readonly from: Arrival;
  readonly body: unknown;
  readonly batch: Batch;
  readonly kind: Exclude<Accepts, 'none'>;
  /** Its Content-Type header (read once: the charset check, then the hand-off's). */
  readonly contentType: string | null;
}

export interface McpEndpointOptions {
  /** Builds the Server of a new session: lib/mcp/face.ts's createMcpFace (in tests, a bare server). */
  readonly createServer: () => Server;
  readonly idleMs?: number;
  /** The clock of the sessions' idleness (lib/clock.ts): the process clock by default, a stepped one in tests. */
  readonly clock?: Clock;
  readonly maxSessions?: number;
  /**
   * Answer tools/call on a stream whenever the client accepts one, so that a request to the client
   * (the elicitation of mcp.confirm_motion) can travel on it.
   */
  readonly streamToolCalls?: boolean;
  /**
   * Runs a request's work in its turn (lib/server/request.ts), once its body is read: the server does not queue MCP
   * requests itself, so that a call of a stop tool or a cancellation (`stopTools`, notifications/cancelled) runs at
   * once, as POST /stop does. Absent: everything runs at once.
   */
  readonly schedule?: <T>(task: () => Promise<T>) => Promise<T>;
  /** The names of the tools that stop the arm. */
  readonly stopTools?: ReadonlySet<string>;
  /**
   * What carries out the stop tools a parsed body calls (lib/mcp/past-guesses.ts, stopsOfBody): run for a POST refused
   * for its form or its session (a 400, 404 or 415, a batch refused for one bad call, a 406 for its Accept), as a right
   * token's stop is never kept out (stop wins). Absent: such a stop is refused with the rest. Not for a 413: a body over
   * the limit is not read whole, and what a prefix of JSON calls cannot be told.
   */
  readonly refusedStops?: (body: unknown) => ((call: Arrival) => Promise<void>) | undefined;
}

/** The /mcp/mcp endpoint and its sessions. */
export interface McpEndpoint {
  /** The fetch handler of /mcp/mcp, given who calls and when the request arrived (the app authenticated it). */
  readonly handler: (request: Request, call: Arrival) => Promise<Response>;
  /** Number of sessions held in memory. */
  sessionCount(): number;
  /** Closes every session (server shutdown). */
  close(): Promise<void>;
}

/**
 * A JSON answer of the session `sessionId`: its Content-Length given with the headers, so that the server adapter
 * writes the head from them in one call instead of copying them one by one.
 */
export const jsonAnswer = (text: string, sessionId: string): Response =>
  new PonyfillResponse(text, {
    status: 200,
    headers: {
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(text)),
      'mcp-session-id': sessionId,
    },
  });

const jsonRpcError = (status: number, code: number, message: string, headers: Record<string, string> = {}) =>
  new PonyfillResponse(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  });

/** The principal a request comes from, by name: who owns the sessions it opens. */
const ownerOf = (from: Arrival): string => from.caller.name;

/**
 * The /mcp/mcp fetch handler around the SDK's web-standard streamable HTTP transport, one session
 * (a low-level Server and its transport) per client.
 *
 * - POST answers in a form the client accepts: an SSE stream when the client accepts one and a
 *   request asks for progress (the notifications travel on it) or when a stream is all it
 *   accepts; plain JSON otherwise, including for a client that accepts only application/json (or
 *   sends no Accept). Both through the SDK's transport and the session's Server (see SessionTransport).
 * - GET is 405: the server sends nothing outside the answer to a request, so there is no stream to
 *   hold open. DELETE ends the session.
 * - A session idle for 10 minutes, or the least recently used idle one beyond 256, is closed to
 *   free memory; its id stays valid and the session is rebuilt on its next request, so clients
 *   (the SDK client does not initialize again on a 404) never notice. An id this process never
 *   issued (another process, a restart, a typo) or one ended by DELETE is a 404, after which the
 *   client initializes again; an ended id is remembered among its principal's last 4,096 (ENDED_IDS_KEPT), beyond
 *   which it is as one closed for idleness (rebuilt on its next request).
 * - A session belongs to the principal (token) that opened it: a request of any other principal naming it (POST,
 *   DELETE) is answered 404 as for an id never issued, and nothing in the session is touched.
 * - notifications/cancelled reaches the session's server, which aborts the call's signal, and
 *   ends the answer of the cancelled request.
 * - The SDK's DNS-rebinding protection is on, with the hosts and origins of `admission` (the same
 *   policy the app checks first), for the port the session began on.
 */
export function createMcpEndpoint(admission: AdmissionPolicy, options: McpEndpointOptions): McpEndpoint {
  const createServer = options.createServer;
  const stopTools = options.stopTools ?? new Set<string>();
  const idleMs = options.idleMs ?? SESSION_IDLE_MS;
  const maxSessions = options.maxSessions ?? MAX_SESSIONS;
  const clock = options.clock ?? systemClock;
  const ids = sessionIds();
  const sessions = new Map<string, Session>();
  const rebuilding = new Map<string, Promise<Session>>();
  /** Per principal, the ids of its sessions ended by DELETE, oldest first (ENDED_IDS_KEPT each). */
  const ended = new Map<string, Set<string>>();
  const hasEnded = (id: string, owner: string) => ended.get(owner)?.has(id) === true;
  /** What each session's client declared at initialize, so that a rebuilt session knows it too (elicitation). */
  const declared = new Map<string, Record<string, unknown>>();
  let closed = false;

  const closeSession = async (id: string) => {
    const session = sessions.get(id);
    if (!session) return;
    sessions.delete(id);
    await session.transport.close();
    await session.server.close();
  };
  const forget = (id: string, owner: string) => {
    const mine = ended.get(owner) ?? new Set<string>();
    ended.set(owner, mine);
    mine.add(id);
    declared.delete(id);
    if (mine.size > ENDED_IDS_KEPT) for (const old of mine) if (mine.delete(old)) break;
  };
  /** Marks a session used: `sessions` is kept least recently used first (room made at once, by use, not by clock). */
  const touch = (session: Session) => {
    session.lastUsedMs = clock.nowMs();
    if (sessions.get(session.id) !== session) return;
    sessions.delete(session.id);
    sessions.set(session.id, session);
  };
  const makeRoom = () => {
    if (sessions.size <= maxSessions) return;
    for (const s of sessions.values())
      if (!s.transport.busy) {
        void closeSession(s.id);
        return;
      }
  };
  const sweep = clock.every(Math.min(60_000, idleMs), () => {
    const now = clock.nowMs();
    for (const [id, s] of sessions) if (!s.transport.busy && now - s.lastUsedMs > idleMs) void closeSession(id);
  });
  sweep.unref?.();

  /** Holds a session (making room if needed). */
  const hold = (session: Session) => {
    sessions.set(session.id, session);
    makeRoom();
  };

  /** A server and transport whose session id is `id` (a new one, or one rebuilt), not yet held. */
  const openSession = async (request: Request, id: string, owner: string): Promise<Session> => {
    const server = createServer();
    const allow = sdkAllowLists(admission, request.headers.get('host') ?? '');
    const transport = new SessionTransport({
      id,
      ...allow,
      stopTools,
      onDeleted: (deleted) => {
        sessions.delete(deleted);
        forget(deleted, owner);
      },
    });
    await server.connect(transport);
    const hosts = new Set(allow.allowedHosts);
    const origins = new Set(allow.allowedOrigins);
    return { id, owner, server, transport, hosts, origins, lastUsedMs: clock.nowMs() };
  };

  /** Rebuilds a session closed for idleness or room: the initialize handshake replayed in process. */
  const rebuild = (request: Request, id: string, owner: string): Promise<Session> => {
    let pending = rebuilding.get(id);
    if (pending) return pending;
    pending = (async () => {
      const session = await openSession(request, id, owner);
      const header = request.headers.get('mcp-protocol-version');
      const protocolVersion =
        header && SUPPORTED_PROTOCOL_VERSIONS.includes(header) ? header : DEFAULT_NEGOTIATED_PROTOCOL_VERSION;
      const replay = async (message: unknown) => {
        const headers = new Headers(request.headers);
        headers.set('accept', ACCEPT_BOTH);
        headers.set('content-type', 'application/json');
        headers.delete('content-length');
        const init = new Request(request.url, { method: 'POST', headers, body: JSON.stringify(message) });
        await (await session.transport.handle(init, false, { parsedBody: message })).text();
      };
      await replay({
        jsonrpc: '2.0',
        id: 'armgate-rebuild',
        method: 'initialize',
        params: {
          protocolVersion,
          // Forgotten beyond 4,096 sessions opened since: the id still says whether its person can be asked.
          capabilities: declared.get(id) ?? (ids.elicits(id, owner) ? { elicitation: {} } : {}),
          clientInfo: { name: 'rebuilt session', version: '0' },
        },
      });
      await replay({ jsonrpc: '2.0', method: 'notifications/initialized' });
      hold(session);
      return session;
    })().finally(() => rebuilding.delete(id));
    rebuilding.set(id, pending);
    return pending;
  };

  /** The session a request names: held, rebuilt, or undefined (never issued here, ended, or another principal's). */
  const sessionFor = async (request: Request, id: string, owner: string): Promise<Session | undefined> => {
    const held = sessions.get(id);
    if (held) return held.owner === owner ? held : undefined;
    if (closed || hasEnded(id, owner) || !ids.issuedHere(id, owner)) return undefined;
    return rebuild(request, id, owner);
  };

  /** Hands a POST to the session's transport and shapes the answer for what the client accepts. */
  const post = async (session: Session, parsed: ParsedPost): Promise<Response> => {
    const { request, batch } = parsed;
    // JSON-RPC ids are unique while in flight: a reused one would take over the answer (and the cancellation) of the other.
    const reused = batch.requestIds.find((id) => session.transport.inFlight(id));
    if (reused !== undefined)
      return jsonRpcError(
        400,
        -32600,
        `Invalid Request: id ${JSON.stringify(reused).slice(0, 100)} belongs to a request of this session still running`,
      );
    // The dead-man: a call whose connection closes before its answer is abandoned (nobody can receive the answer: there
    // is no event store to resume from), and cancelled as a notifications/cancelled would; a motion then stops. It
    // watches only a call still running once this turn's work is done (a read answers before: a connection closed
    // meanwhile is seen then, as `aborted`), since the adapter's signal costs ~2 us a call to subscribe to.
    const watch = batch.requestIds.length > 0 ? deadMan(request, session, batch) : undefined;
    try {
      return await answer(session, parsed, () => watch?.());
    } catch (e) {
      watch?.();
      throw e;
    }
  };

  /**
   * True when a request may skip the SDK's transport: the checks it would make of the HTTP request pass (Host and
   * Origin for DNS rebinding, media type, protocol version; the envelope was checked with the SDK's schema, see
   * Batch.single). Otherwise the SDK's transport takes it and answers its own error.
   */
  const handOff = (session: Session, headers: Headers, contentType: string | null): boolean => {
    const origin = headers.get('origin');
    const version = headers.get('mcp-protocol-version');
    return (
      session.hosts.has(headers.get('host') ?? '') &&
      (origin === null || session.origins.has(origin)) &&
      isJsonType(contentType) &&
      (version === null || SUPPORTED_PROTOCOL_VERSIONS.includes(version))
    );
  };

  /**
   * post()'s answer: on an SSE stream where it carries something (progress, a request to the client) or is all the
   * client takes, in plain JSON otherwise; by the SDK's transport, or for one plain request answered in JSON handed
   * straight to the session's Server (the same Server, ~60 us less). `answered` runs once no answer of the batch is
   * pending any more (the stream ended, or the JSON came).
   */
  const answer = async (session: Session, parsed: ParsedPost, answered: () => void): Promise<Response> => {
    const { request, from, body, batch, kind, contentType } = parsed;
    const stream =
      kind === 'stream' ||
      (kind === 'both' && (batch.wantsProgress || (options.streamToolCalls === true && batch.callsTool)));
    touch(session);
    if (!stream && batch.single && handOff(session, request.headers, contentType)) {
      const message = await session.transport.call(batch.single, lazyRequestInfo(request, from));
      touch(session);
      answered();
      return jsonAnswer(JSON.stringify(message), session.id);
    }
    if (request.headers.get('accept') !== ACCEPT_BOTH) request.headers.set('accept', ACCEPT_BOTH);
    const response = await session.transport.handle(request, stream, { parsedBody: body, authInfo: authInfoOf(from) });
    const done = () => {
      touch(session);
      answered();
    };
    if (!stream || response.body === null || response.status !== 200) {
      done();
      return Array.isArray(body) ? batchAnswer(response) : response;
    }
    const relay = relayStream(response.body, done);
    return new PonyfillResponse(relay.stream, { status: response.status, headers: response.headers });
  };

  const handler = async (request: Request, from: Arrival): Promise<Response> => {
    const method = request.method;
    if (method === 'GET')
      return jsonRpcError(
        405,
        -32000,
        'Method not allowed: this server sends messages only in answer to a POST; there is no GET stream',
        { allow: MCP_METHODS.join(', ') },
      );
    if (method !== 'POST' && method !== 'DELETE')
      return jsonRpcError(405, -32000, `Method ${method} not allowed: use POST (or DELETE to end a session)`, {
        allow: MCP_METHODS.join(', '),
      });
    const id = request.headers.get('mcp-session-id');
    if (method === 'DELETE') {
      if (!id) return jsonRpcError(400, -32000, 'Bad Request: Mcp-Session-Id header is required');
      // Another principal's session is, to this request, one that does not exist: nothing in it is touched.
      const owner = ownerOf(from);
      const held = sessions.get(id);
      if (held) return held.owner === owner ? held.transport.handle(request, false) : sessionNotFound();
      if (closed || hasEnded(id, owner) || !ids.issuedHere(id, owner)) return sessionNotFound();
      forget(id, owner);
      return new PonyfillResponse(null, { status: 200 });
    }

    const contentType = request.headers.get('content-type');
    const charset = foreignCharset(contentType);
    if (charset) return refusedUnread(jsonRpcError(415, -32000, `Unsupported Media Type: ${charset}`), request, from);
    const kind = accepts(request.headers.get('accept'));
    if (kind === 'none') {
      const refusal = jsonRpcError(406, -32000, 'Not Acceptable: accept application/json, text/event-stream or both');
      return refusedUnread(refusal, request, from);
    }
    const text = await readBoundedText(request, MAX_MCP_BODY_BYTES);
    if (text === undefined) return jsonRpcError(413, -32000, `Payload Too Large: at most ${MAX_MCP_BODY_BYTES} bytes`);
    let body: unknown;
    try {
      // A large body is parsed a slice per turn of the event loop: a stop sent meanwhile waits for one slice at most. A
      // text the slices refuse that JSON.parse takes (more large containers nested than they frame) is read whole.
      body = await parseJson(text);
    } catch {
      return jsonRpcError(400, -32700, 'Parse error: Invalid JSON');
    }
    // JSON-RPC 2.0, 6: an empty batch is one Invalid Request, answered with a single error (the SDK answered it 202).
    if (Array.isArray(body) && body.length === 0)
      return jsonRpcError(400, -32600, 'Invalid Request: an empty batch (a batch holds at least one message)');
    // Before any work per message (JSON-RPC parsing of each by the SDK, normalizeToolCalls, inspect: ~100 ms for a 4 MiB
    // batch of small calls), as the SDK's transport refuses it; a stop in it is carried out all the same.
    if (Array.isArray(body) && body.length > MAX_MCP_BATCH)
      return stopAnyway(jsonRpcError(400, -32600, BATCH_TOO_LARGE), body, from);
    const malformed = refuseWide(body) ?? normalizeToolCalls(body, stopTools);
    if (malformed) return stopAnyway(malformed, body, from);
    const batch = inspect(body, stopTools);
    const serve = () => dispatch({ request, from, body, batch, kind, contentType }, id);
    const response = await (options.schedule && !batch.urgent ? options.schedule(serve) : serve());
    const status = response.status;
    return status === 400 || status === 404 || status === 415 ? stopAnyway(response, body, from) : response;
  };

  /**
   * A POST refused for its form or its session (nothing in it ran): the stop tools it calls are carried out all the
   * same once the refusal is on its way (stop wins), as past the guess limit. The answer is the refusal.
   */
  const stopAnyway = (refusal: Response, body: unknown, from: Arrival): Response => {
    const run = options.refusedStops?.(body);
    if (run) setImmediate(() => void run(from).catch(() => undefined));
    return refusal;
  };

  /**
   * A POST refused before its body is needed (its Accept, its charset): the body is read all the same, bounded as past
   * the guess limit (lib/mcp/past-guesses.ts, stopBodyOf), for the stop tools it calls (stopAnyway).
   */
  const refusedUnread = async (refusal: Response, request: Request, from: Arrival): Promise<Response> =>
    options.refusedStops ? stopAnyway(refusal, await stopBodyOf(request), from) : refusal;

  /** Answers a parsed POST: in its session, or as the initialize that opens one. */
  const dispatch = async (parsed: ParsedPost, id: string | null): Promise<Response> => {
    const { request, from, batch } = parsed;
    if (id) {
      // A session held is found at once; only one closed for idleness or room is rebuilt (awaited).
      const held = sessions.get(id);
      const owner = ownerOf(from);
      const session = held ? (held.owner === owner ? held : undefined) : await sessionFor(request, id, owner);
      if (!session) return sessionNotFound();
      return post(session, parsed);
    }
    if (!batch.isInitialize)
      return jsonRpcError(
        400,
        -32000,
        'Bad Request: Mcp-Session-Id header is required (send initialize first to get a session)',
      );
    if (closed) return jsonRpcError(503, -32000, 'Service Unavailable: the server is shutting down');
    const owner = ownerOf(from);
    const session = await openSession(request, ids.issue(owner, declaresElicitation(parsed.body)), owner);
    hold(session);
    const response = await post(session, parsed);
    if (response.status !== 200) await closeSession(session.id);
    else {
      const capabilities = session.server.getClientCapabilities();
      if (capabilities) {
        declared.set(session.id, capabilities as Record<string, unknown>);
        if (declared.size > ENDED_IDS_KEPT) for (const old of declared.keys()) if (declared.delete(old)) break;
      }
    }
    return response;
  };

  return {
    handler,
    sessionCount: () => sessions.size,
    async close() {
      closed = true;
      sweep.cancel();
      await Promise.all([...sessions.keys()].map(closeSession));
    },
  };
}

/**
 * Watches the connection of `request` from the next turn of the event loop: once it closes, the batch's requests are
 * cancelled (MCP_CALL_ABANDONED). Answers the function that stops watching (call it once the answers are out).
 */
function deadMan(request: Request, session: Session, batch: Batch): () => void {
  let connection: AbortSignal | undefined;
  const abandon = () => {
    for (const requestId of batch.requestIds) session.transport.cancel(requestId, MCP_CALL_ABANDONED);
  };
  const start = setImmediate(() => {
    connection = request.signal;
    if (connection.aborted) abandon();
    else connection.addEventListener('abort', abandon, { once: true });
  });
  return () => {
    clearImmediate(start);
    connection?.removeEventListener('abort', abandon);
  };
}

function sessionNotFound(): Response {
  return jsonRpcError(
    404,
    -32001,
    'Session not found: send initialize (without Mcp-Session-Id) to start a new session',
  );
}
