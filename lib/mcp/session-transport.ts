/**
 * A session's transport: the SDK's web-standard transport for everything, plus the direct path (one request answered
 * with plain JSON: through the Server, or for tools/call by the face's own function without it).
 */
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import { type JSONRPCMessage, type MessageExtraInfo, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { Arrival } from '../core/roles.ts';
import type { ToolCaller } from './face.ts';
import type { CallExtra } from './tools.ts';

/** Why a request to the client (elicitation) fails during a call answered in plain JSON. */
const NO_STREAM = 'the client accepts only a JSON answer, so no request can reach it during this call';
/** JSON-RPC "request cancelled" (the code the SDK uses for a cancelled request). */
export const CANCELLED_CODE = -32800;

/** A JSON-RPC request id. */
export type RequestId = string | number;

/** A JSON-RPC request as the fast path takes it (the Server validates its params). */
export interface JsonRpcRequest {
  readonly jsonrpc: '2.0';
  readonly id: RequestId;
  readonly method: string;
  readonly params?: Record<string, unknown>;
}

/** A JSON-RPC error answer to a request. */
export const errorAnswer = (id: RequestId, code: number, message: string): JSONRPCMessage => ({
  jsonrpc: '2.0',
  id,
  error: { code, message },
});

/**
 * The transport a session's Server is connected to: the SDK's web-standard transport for
 * everything (initialize, session and protocol checks, SSE streams, DELETE), plus a direct path for
 * the common case, one request answered with plain JSON. A direct request goes to the Server
 * without the SDK transport's per-request work (header copy, URL parse, a second schema parse of
 * the envelope, a stream per request) and its answer comes back as one object.
 */
export class SessionTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: ((message: JSONRPCMessage, extra?: MessageExtraInfo) => void) | undefined;
  readonly sdk: WebStandardStreamableHTTPServerTransport;
  /** Direct requests waiting for their answer, by JSON-RPC id. */
  private readonly direct = new Map<RequestId, (answer: JSONRPCMessage) => void>();
  /** Requests of the SDK path whose answers are collected into one JSON answer (the client takes no stream). */
  readonly collected = new Set<RequestId>();
  /** The signals of tool calls answered without the Server: aborted when the session closes, as the Server's are. */
  private readonly ownCalls = new Set<LazyAbort>();

  constructor(sdk: WebStandardStreamableHTTPServerTransport) {
    this.sdk = sdk;
    sdk.onmessage = (message, extra) => this.onmessage?.(message, extra);
    sdk.onerror = (error) => this.onerror?.(error);
    sdk.onclose = () => {
      for (const [id, answer] of this.direct) answer(errorAnswer(id, -32000, 'Connection closed: the session ended'));
      this.direct.clear();
      for (const call of this.ownCalls) call.abort('the session ended');
      this.ownCalls.clear();
      this.onclose?.();
    };
  }

  get sessionId(): string | undefined {
    return this.sdk.sessionId;
  }

  start(): Promise<void> {
    return this.sdk.start();
  }

  close(): Promise<void> {
    return this.sdk.close();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const related = options?.relatedRequestId;
    if ('method' in message && 'id' in message && related !== undefined && this.answersInJson(related)) {
      // A request to a client about a call it takes a JSON answer for has no stream to travel on: it fails at once.
      const refusal: JSONRPCMessage = { jsonrpc: '2.0', id: message.id, error: { code: -32600, message: NO_STREAM } };
      queueMicrotask(() => this.onmessage?.(refusal));
      return Promise.resolve();
    }
    const answerTo = 'id' in message && !('method' in message) ? message.id : undefined;
    const id = answerTo ?? options?.relatedRequestId;
    const waiting = id === undefined ? undefined : this.direct.get(id);
    if (!waiting) {
      return this.sdk.send(message, related === undefined ? undefined : { relatedRequestId: related });
    }
    // A notification about a direct request has no stream to travel on: the client asked for JSON.
    if (answerTo !== undefined) {
      this.direct.delete(answerTo);
      waiting(message);
    }
    return Promise.resolve();
  }

  /** True when the request is answered in plain JSON (direct or collected): nothing else can reach the client. */
  private answersInJson(id: RequestId): boolean {
    return this.direct.has(id) || this.collected.has(id);
  }

  /** Hands one request to the Server and resolves with its answer (or with `cancelled` when `stop` runs). */
  call(request: JsonRpcRequest, extra: MessageExtraInfo): { answer: Promise<JSONRPCMessage>; stop: () => void } {
    let stop = () => {};
    const answer = new Promise<JSONRPCMessage>((resolve) => {
      this.direct.set(request.id, resolve);
      stop = () => {
        if (this.direct.delete(request.id)) resolve(errorAnswer(request.id, CANCELLED_CODE, 'Request cancelled'));
      };
    });
    this.onmessage?.(request as JSONRPCMessage, extra);
    return { answer, stop };
  }

  /**
   * A tools/call answered by the face's own function, without the Server (the SDK Protocol's schema parses of the
   * message, the params and the result cost more than reading the arm): its answer and a stop that cancels it
   * (notifications/cancelled) by aborting the call's signal, as the Protocol would. The answer is plain JSON, so
   * progress has nowhere to go and a request to the client (elicitation) fails at once; a client that takes a stream
   * gets those through the Server.
   */
  callTool(
    callTool: ToolCaller,
    request: Request,
    from: Arrival,
    call: JsonRpcRequest & { params: Record<string, unknown> },
  ): { answer: Promise<JSONRPCMessage>; stop: (reason?: string) => void } {
    const abort = new LazyAbort();
    this.ownCalls.add(abort);
    const info = lazyRequestInfo(request, from);
    const extra = new DirectCallExtra(abort, this.sessionId, call.id, info);
    let settle: (answer: JSONRPCMessage) => void = () => {};
    const answer = new Promise<JSONRPCMessage>((resolve) => {
      settle = resolve;
    });
    callTool(call.params, extra)
      .then(
        (result) => settle({ jsonrpc: '2.0', id: call.id, result }),
        (error: unknown) => settle(thrownAnswer(call.id, error)),
      )
      .finally(() => this.ownCalls.delete(abort));
    const stop = (reason = 'cancelled by the client') => {
      abort.abort(reason);
      settle(errorAnswer(call.id, CANCELLED_CODE, 'Request cancelled'));
    };
    return { answer, stop };
  }
}

/**
 * What a direct tool call hands the tool: its signal (made only when looked at), session, request id and the request's
 * facts; notifications and requests to the client go nowhere. A class: an object literal with a getter was a slow
 * object made anew at every call.
 */
class DirectCallExtra implements CallExtra {
  readonly sessionId?: string;
  readonly requestId: RequestId;
  readonly authInfo?: NonNullable<CallExtra['authInfo']>;
  readonly requestInfo?: NonNullable<CallExtra['requestInfo']>;
  readonly sendNotification = NO_NOTIFICATIONS;
  readonly sendRequest = NO_REQUESTS;
  readonly #abort: LazyAbort;

  constructor(
    abort: LazyAbort,
    sessionId: string | undefined,
    requestId: RequestId,
    info: Pick<CallExtra, 'authInfo' | 'requestInfo'>,
  ) {
    this.#abort = abort;
    if (sessionId !== undefined) this.sessionId = sessionId;
    this.requestId = requestId;
    if (info.authInfo !== undefined) this.authInfo = info.authInfo;
    if (info.requestInfo !== undefined) this.requestInfo = info.requestInfo;
  }

  get signal(): AbortSignal {
    return this.#abort.signal;
  }
}

/** An AbortSignal made only when first asked for: most tool calls (reads) never look, and making one costs ~10 us. */
class LazyAbort {
  private controller: AbortController | undefined;
  private reason: unknown;
  private aborted = false;

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.controller?.abort(reason);
  }
}

/** A direct tool call's notifications (progress): its answer is plain JSON, so they have nowhere to go. */
const NO_NOTIFICATIONS: CallExtra['sendNotification'] = async () => {};

/** A direct tool call's requests to the client (elicitation): none can reach a client that takes only JSON. */
const NO_REQUESTS: CallExtra['sendRequest'] = async () => {
  throw new McpError(-32600, NO_STREAM);
};

/** The JSON-RPC error answer of a handler that threw, as the SDK's Protocol makes it. */
function thrownAnswer(id: RequestId, error: unknown): JSONRPCMessage {
  const { code, message, data } = (error ?? {}) as { code?: unknown; message?: unknown; data?: unknown };
  return {
    jsonrpc: '2.0',
    id,
    error: {
      code: Number.isSafeInteger(code) ? (code as number) : -32603,
      message: typeof message === 'string' ? message : 'Internal error',
      ...(data !== undefined ? { data } : {}),
    },
  };
}

/**
 * Who sent the request, as the SDK hands it to handlers (`extra.authInfo`): the principal the
 * app's authentication found (name and role) under `extra.principal`, and the stop count at the
 * HTTP request's arrival (`extra.arrivedAtStop`). The token itself is never put here (`token` is empty).
 */
export function authInfoOf(call: Arrival): AuthInfo {
  const principal = call.caller;
  // The stop count at the HTTP request's arrival: a tool call that arrived before a stop cannot move after it.
  const arrivedAtStop = call.arrivedAtStop;
  return {
    token: '',
    clientId: principal.name,
    scopes: [principal.role],
    extra: arrivedAtStop === undefined ? { principal } : { principal, arrivedAtStop },
  };
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

/** What the SDK hands a Server as the request's HTTP facts, built only if a handler looks. */
export function lazyRequestInfo(
  request: Request,
  call: Arrival,
): Required<Pick<MessageExtraInfo, 'authInfo' | 'requestInfo'>> {
  return { authInfo: authInfoOf(call), requestInfo: new LazyRequestInfo(request) };
}
