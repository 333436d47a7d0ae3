/**
 * A session's transport: the SDK's web-standard transport, twice (one answering in plain JSON, one on SSE streams),
 * joined into the one Transport its Server is connected to, and a hand-off of one plain request straight to the
 * Server. Every request is handled by the Server; this file only routes each message to the HTTP answer it belongs to.
 */
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  type JSONRPCMessage,
  LATEST_PROTOCOL_VERSION,
  type MessageExtraInfo,
} from '@modelcontextprotocol/sdk/types.js';
import type { Arrival, Principal } from '../core/roles.ts';

/** Why a request to the client (elicitation) fails during a call answered in plain JSON. */
const NO_STREAM = 'the client accepts only a JSON answer, so no request can reach it during this call';
/** JSON-RPC "request cancelled" (the code the SDK uses for a cancelled request). */
export const CANCELLED_CODE = -32800;
/** What the SDK transport requires a POST to accept; the endpoint accepts either and answers in kind. */
export const ACCEPT_BOTH = 'application/json, text/event-stream';
/** Cancellations of requests not (yet) in flight kept per session: their requests are refused if they come after. */
const EARLY_CANCELS_KEPT = 64;
/** The id of the initialize that readies the second transport of a session (answered here, never by the Server). */
const SIBLING_INITIALIZE = 'armgate-initialize-sibling';

/** A JSON-RPC request id. */
export type RequestId = string | number;

/** A JSON-RPC request as the hand-off takes it (the Server validates its params). */
export interface JsonRpcRequest {
  readonly jsonrpc: '2.0';
  readonly id: RequestId;
  readonly method: string;
  readonly params?: Record<string, unknown>;
}

type SdkTransport = WebStandardStreamableHTTPServerTransport;
/** Where a request's answer goes: the SDK transport whose HTTP request carried it, or the hand-off waiting for it. */
type Answerer = SdkTransport | ((answer: JSONRPCMessage) => void);

/** A JSON-RPC error answer to a request. */
export const errorAnswer = (id: RequestId, code: number, message: string): JSONRPCMessage => ({
  jsonrpc: '2.0',
  id,
  error: { code, message },
});

/** What a session's SDK transports are made with: its id, and the Host and Origin values its DNS-rebinding check admits. */
export interface SessionTransportOptions {
  readonly id: string;
  readonly allowedHosts: string[];
  readonly allowedOrigins: string[];
  /** The names of the tools that stop the arm: a call of one is never refused for a cancellation that came first. */
  readonly stopTools?: ReadonlySet<string>;
  /** Called when a DELETE ends the session (before its transports close). */
  readonly onDeleted: (id: string) => void;
}

/**
 * The transport a session's Server is connected to. The SDK's transport answers a POST either in JSON or on an SSE
 * stream, chosen when it is made, so a session has one of each, both of its id: a POST goes to the one that answers
 * as the client asks (`handle`), and every message the Server sends goes back through the transport whose request it
 * answers or belongs to. One plain request answered in JSON may skip the SDK's transport (`call`): the same Server
 * answers it, and the endpoint hands it over only when the SDK's transport would take it. What is left here is what the SDK's transport cannot know: a request to the client about a
 * call answered in JSON has no stream to travel on (it fails at once), and a cancelled request's answer is ended
 * (the SDK's Protocol aborts the handler and sends nothing).
 */
export class SessionTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: ((message: JSONRPCMessage, extra?: MessageExtraInfo) => void) | undefined;
  readonly sessionId: string;
  private readonly json: SdkTransport;
  private readonly stream: SdkTransport;
  /** Where the answer of each request in flight goes, by JSON-RPC id. */
  private readonly answering = new Map<RequestId, Answerer>();
  /**
   * Ids named by a cancellation that came before their request (its body still arriving, or waiting for its turn while
   * the cancellation ran at once): the request is answered cancelled when it comes, never run. MCP forbids reusing a
   * request id within a session, so a later request of such an id can only be the one cancelled. The oldest go first.
   */
  private readonly cancelledEarly = new Set<RequestId>();
  /** True once the session's initialize was taken (by either transport; the other is readied when first needed). */
  private initialized = false;
  /**
   * The transport the initialize went to, and that request's URL and Host: the other transport is readied by a sibling
   * initialize of that URL and Host before its first request.
   */
  private first: { readonly transport: SdkTransport; readonly url: string; readonly host: string | null } | undefined;
  /** The sibling initialize, once begun. */
  private sibling: Promise<void> | undefined;
  /** The transport being readied by the sibling initialize (whose answer is made here), while that lasts. */
  private readying: SdkTransport | undefined;
  private closed = false;
  private readonly stopTools: ReadonlySet<string>;

  constructor(options: SessionTransportOptions) {
    this.sessionId = options.id;
    this.stopTools = options.stopTools ?? new Set();
    const make = (enableJsonResponse: boolean): SdkTransport => {
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => options.id,
        enableJsonResponse,
        enableDnsRebindingProtection: true,
        allowedHosts: options.allowedHosts,
        allowedOrigins: options.allowedOrigins,
        // A DELETE: the answers still open end first (the SDK's transport then closes without ending a JSON answer).
        onsessionclosed: (id) => {
          this.endAll();
          options.onDeleted(id);
        },
      });
      transport.onmessage = (message, extra) => this.received(transport, message, extra);
      transport.onerror = (error) => this.onerror?.(error);
      transport.onclose = () => void this.close();
      return transport;
    };
    this.json = make(true);
    this.stream = make(false);
  }

  async start(): Promise<void> {
    await this.json.start();
    await this.stream.start();
  }

  /** True while a request of the session waits for its answer. */
  get busy(): boolean {
    return this.answering.size > 0;
  }

  /** True when request `id` of this session still waits for its answer. */
  inFlight(id: RequestId): boolean {
    return this.answering.has(id);
  }

  /**
   * Hands a POST (or DELETE) to the SDK transport that answers as asked: on a stream, or in plain JSON. The other
   * transport is readied for the session before the first request it takes (most sessions only ever need one: ~0.2 ms
   * and the memory of a second initialize saved), so that every request may take either.
   */
  async handle(
    request: Request,
    streamed: boolean,
    options?: { parsedBody?: unknown; authInfo?: AuthInfo },
  ): Promise<Response> {
    const transport = streamed ? this.stream : this.json;
    const first = this.first;
    if (first !== undefined && transport !== first.transport) {
      this.sibling ??= this.initializeSibling(transport, first);
      await this.sibling;
    }
    const response = await transport.handleRequest(request, options);
    if (!this.initialized && response.status === 200 && isInitialize(options?.parsedBody)) {
      this.initialized = true;
      this.first = { transport, url: request.url, host: request.headers.get('host') };
    }
    return response;
  }

  /**
   * Hands one request straight to the Server and resolves with its answer: the endpoint's way for a single plain
   * request answered in JSON, once it has checked what the SDK's transport would (lib/mcp/server.ts, `handOff`). The
   * SDK's transport costs ~60 us a request more (its envelope checks by schema, a fetch Response read back).
   */
  call(request: JsonRpcRequest, extra: MessageExtraInfo): Promise<JSONRPCMessage> {
    return new Promise((resolve) => {
      this.answering.set(request.id, resolve);
      if (this.cancelledEarly.size > 0 && this.cancelledBefore(request))
        this.end(request.id, CANCELLED_CODE, 'Request cancelled');
      else this.onmessage?.(request as JSONRPCMessage, extra);
    });
  }

  /** Readies `sibling` for the session with an initialize of its own, answered here: the Server saw the client's. */
  private async initializeSibling(sibling: SdkTransport, first: { url: string; host: string | null }): Promise<void> {
    const message = {
      jsonrpc: '2.0',
      id: SIBLING_INITIALIZE,
      method: 'initialize',
      params: {
        protocolVersion: LATEST_PROTOCOL_VERSION,
        capabilities: {},
        clientInfo: { name: 'armgate', version: '0' },
      },
    };
    const headers = new Headers({ accept: ACCEPT_BOTH, 'content-type': 'application/json' });
    if (first.host !== null) headers.set('host', first.host);
    const init = new Request(first.url, { method: 'POST', headers, body: JSON.stringify(message) });
    this.readying = sibling;
    try {
      await (await sibling.handleRequest(init, { parsedBody: message })).text();
    } finally {
      this.readying = undefined;
    }
  }

  private received(from: SdkTransport, message: JSONRPCMessage, extra?: MessageExtraInfo): void {
    if ('method' in message && 'id' in message) {
      if (from === this.readying && message.id === SIBLING_INITIALIZE && message.method === 'initialize') {
        void from.send({ jsonrpc: '2.0', id: SIBLING_INITIALIZE, result: {} });
        return;
      }
      this.answering.set(message.id, from);
      // Cancelled before it came: answered so, never run.
      if (this.cancelledEarly.size > 0 && this.cancelledBefore(message)) {
        this.end(message.id, CANCELLED_CODE, 'Request cancelled');
        return;
      }
    }
    this.onmessage?.(message, extra);
    if ('method' in message && message.method === 'notifications/cancelled' && !('id' in message)) {
      const id = (message.params as { requestId?: unknown } | undefined)?.requestId;
      if (typeof id !== 'string' && typeof id !== 'number') return;
      if (this.answering.has(id)) this.end(id, CANCELLED_CODE, 'Request cancelled');
      else {
        this.cancelledEarly.add(id);
        if (this.cancelledEarly.size > EARLY_CANCELS_KEPT)
          for (const old of this.cancelledEarly) if (this.cancelledEarly.delete(old)) break;
      }
    }
  }

  /** True when a cancellation named the request before it came (a call of a stop tool is never refused: stop wins). */
  private cancelledBefore(request: { id: RequestId; method: string; params?: unknown }): boolean {
    if (!this.cancelledEarly.delete(request.id)) return false;
    const name = (request.params as { name?: unknown } | undefined)?.name;
    return !(request.method === 'tools/call' && typeof name === 'string' && this.stopTools.has(name));
  }

  /**
   * Cancels request `id` as a notifications/cancelled from its client would (the Server aborts the handler's signal
   * with `reason`), and ends its answer.
   */
  cancel(id: RequestId, reason: string): void {
    if (!this.answering.has(id)) return;
    this.onmessage?.({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason } });
    this.end(id, CANCELLED_CODE, 'Request cancelled');
  }

  /** Ends the answer of request `id` with an error, if it still waits for one (the SDK then closes its HTTP answer). */
  private end(id: RequestId, code: number, message: string): void {
    const transport = this.answering.get(id);
    if (!transport) return;
    this.answering.delete(id);
    this.deliver(transport, errorAnswer(id, code, message)).catch(() => undefined);
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if ('id' in message && !('method' in message)) {
      // An answer: through the transport of its request (none when it was cancelled or its session closed).
      const transport = message.id === undefined ? undefined : this.answering.get(message.id);
      if (!transport || message.id === undefined) return Promise.resolve();
      this.answering.delete(message.id);
      return this.deliver(transport, message);
    }
    const related = options?.relatedRequestId;
    if (related === undefined) return this.stream.send(message);
    const transport = this.answering.get(related);
    // About a request already answered (or cancelled): nothing carries it any more.
    if (!transport) return Promise.resolve();
    if (transport !== this.stream) {
      if ('id' in message) {
        // A request to the client about a call it takes a JSON answer for has no stream to travel on: it fails at once.
        const refusal: JSONRPCMessage = { jsonrpc: '2.0', id: message.id, error: { code: -32600, message: NO_STREAM } };
        queueMicrotask(() => this.onmessage?.(refusal));
      }
      // A notification (progress) about it has nowhere to go either.
      return Promise.resolve();
    }
    return this.stream.send(message, { relatedRequestId: related });
  }

  /** Ends every answer still open: the session ends. */
  private endAll(): void {
    for (const id of [...this.answering.keys()]) this.end(id, -32000, 'Connection closed: the session ended');
  }

  /** Hands an answer to where its request waits: the SDK transport that carried it, or the hand-off. */
  private deliver(to: Answerer, answer: JSONRPCMessage): Promise<void> {
    if (typeof to !== 'function') return to.send(answer);
    to(answer);
    return Promise.resolve();
  }

  /** Closes both transports; the answers still open end with an error first (a JSON answer would wait forever). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.endAll();
    await this.json.close();
    await this.stream.close();
    this.onclose?.();
  }
}

/** True when a POST body is (or holds) an initialize request. */
function isInitialize(body: unknown): boolean {
  return (Array.isArray(body) ? body : [body]).some(
    (message) =>
      typeof message === 'object' && message !== null && (message as { method?: unknown }).method === 'initialize',
  );
}

/** The last auth info made for each principal, with the stop count it carries (frozen: shared by the calls). */
const authInfos = new WeakMap<Principal, AuthInfo>();

/**
 * Who sent the request, as the SDK hands it to handlers (`extra.authInfo`): the principal the
 * app's authentication found (name and role) under `extra.principal`, and the stop count at the
 * HTTP request's arrival (`extra.arrivedAtStop`). The token itself is never put here (`token` is empty).
 * Made once per principal and stop count (frozen), not at every call.
 */
export function authInfoOf(call: Arrival): AuthInfo {
  const principal = call.caller;
  // The stop count at the HTTP request's arrival: a tool call that arrived before a stop cannot move after it.
  const arrivedAtStop = call.arrivedAtStop;
  const known = authInfos.get(principal);
  if (known !== undefined && known.extra?.arrivedAtStop === arrivedAtStop) return known;
  const made: AuthInfo = Object.freeze({
    token: '',
    clientId: principal.name,
    scopes: Object.freeze([principal.role]) as string[],
    extra: Object.freeze(arrivedAtStop === undefined ? { principal } : { principal, arrivedAtStop }),
  });
  authInfos.set(principal, made);
  return made;
}

/** A request's HTTP facts as the SDK hands them to a Server: its headers and URL, each made only if a handler looks. */
class LazyRequestInfo {
  readonly #request: Request;
  #headers: Record<string, string> | undefined;
  #url: URL | undefined;

  constructor(request: Request) {
    this.#request = request;
  }

  get headers(): Record<string, string> {
    this.#headers ??= Object.fromEntries(this.#request.headers.entries());
    return this.#headers;
  }

  get url(): URL {
    this.#url ??= new URL(this.#request.url);
    return this.#url;
  }
}

/** What the SDK's transport hands a Server with a request (who sent it, its HTTP facts), for the hand-off. */
export function lazyRequestInfo(
  request: Request,
  call: Arrival,
): Required<Pick<MessageExtraInfo, 'authInfo' | 'requestInfo'>> {
  return { authInfo: authInfoOf(call), requestInfo: new LazyRequestInfo(request) };
}
