/**
 * What a POST body to the MCP endpoint holds, as far as routing needs to know (initialize, the request ids, the
 * cancellations, a stop tool's call, progress asked for, the one request the hand-off can take), and tools/call
 * arguments made what the SDK's schema wants. The SDK's transport and the Server validate the rest.
 */
import { MAX_BATCH_SIZE } from '@modelcontextprotocol/sdk/server/requestBody.js';
import { isJSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import { Response as PonyfillResponse } from '@whatwg-node/fetch';
import type { JsonRpcRequest, RequestId } from './session-transport.ts';
import { isRecord } from './wire.ts';

/** What a parsed POST body holds, as far as routing needs to know. */
export interface Batch {
  readonly isInitialize: boolean;
  /** Ids of the requests in it (a notification-only body has none). */
  readonly requestIds: RequestId[];
  /** Request ids that notifications/cancelled in it name. */
  readonly cancelled: RequestId[];
  /**
   * The body when it is one request whose envelope the SDK's transport takes as it is (not initialize): what the
   * hand-off to the Server may take (lib/mcp/server.ts).
   */
  readonly single: JsonRpcRequest | undefined;
  /** True when a request in it sends a progressToken (its answer must stream to carry progress). */
  readonly wantsProgress: boolean;
  /** True when it holds a tools/call (which may ask the client something first: mcp.confirm_motion). */
  readonly callsTool: boolean;
  /** True when it calls a stop tool or cancels a request (which stops a motion): it is not scheduled, it runs now. */
  readonly urgent: boolean;
}

export const isId = (value: unknown): value is RequestId => typeof value === 'string' || typeof value === 'number';

/** True when a request's params carry `_meta.progressToken`. */
const asksProgress = (params: unknown): boolean =>
  isRecord(params) && isRecord(params._meta) && params._meta.progressToken !== undefined;

/** Reads what routing needs from a JSON-RPC message or batch (the SDK and the Server validate the rest). */
export function inspect(body: unknown, stopTools: ReadonlySet<string>): Batch {
  const requestIds: RequestId[] = [];
  const cancelled: RequestId[] = [];
  let isInitialize = false;
  let wantsProgress = false;
  let callsTool = false;
  let stops = false;
  for (const message of Array.isArray(body) ? body : [body]) {
    if (!isRecord(message) || typeof message.method !== 'string') continue;
    if (isId(message.id)) {
      requestIds.push(message.id);
      if (message.method === 'initialize') isInitialize = true;
      if (asksProgress(message.params)) wantsProgress = true;
      if (message.method === 'tools/call') {
        callsTool = true;
        if (isRecord(message.params) && stopTools.has(message.params.name as string)) stops = true;
      }
    } else if (message.method === 'notifications/cancelled' && isRecord(message.params)) {
      const id = message.params.requestId;
      if (isId(id)) cancelled.push(id);
    }
  }
  const single =
    // The SDK's own check of a request's envelope: the hand-off never runs a call its transport would refuse.
    isRecord(body) && requestIds.length === 1 && !isInitialize && isJSONRPCRequest(body)
      ? (body as unknown as JsonRpcRequest)
      : undefined;
  return {
    isInitialize,
    requestIds,
    cancelled,
    single,
    wantsProgress,
    callsTool,
    urgent: stops || cancelled.length > 0,
  };
}

/** True when the initialize in a POST body declares the client's elicitation capability (mcp.confirm_motion asks it). */
export function declaresElicitation(body: unknown): boolean {
  for (const message of Array.isArray(body) ? body : [body])
    if (isRecord(message) && message.method === 'initialize' && isRecord(message.params))
      return isRecord(message.params.capabilities) && isRecord(message.params.capabilities.elicitation);
  return false;
}

/** What a JSON value is, said in an error. */
const kindOf = (value: unknown): string => (Array.isArray(value) ? 'an array' : value === null ? 'null' : typeof value);

/**
 * Most messages in a batch: the SDK's transport refuses more (its MAX_BATCH_SIZE), and the endpoint refuses them as it
 * does, before any work per message (lib/mcp/server.ts).
 */
export const MAX_MCP_BATCH = MAX_BATCH_SIZE;

/** The refusal of a batch of more than {@link MAX_MCP_BATCH} messages: the SDK transport's own, word for word. */
export const BATCH_TOO_LARGE = `Invalid Request: Batch must not exceed ${MAX_MCP_BATCH} messages`;

/**
 * Most keys an object of a message may have, down to the objects its params (or result, or error) hold: a message,
 * its params, their `_meta` and `arguments`. The SDK's schemas copy every key of those (twice for a call's arguments:
 * a 4 MiB batch of 100 calls whose arguments had 4,000 keys each held the event loop 300 to 550 ms); no message this
 * server takes has as many (no tool takes more than 12 arguments).
 */
export const MAX_MESSAGE_KEYS = 64;

/** True when `value` has more than {@link MAX_MESSAGE_KEYS} own keys (counted no further). */
function tooWide(value: Record<string, unknown>): boolean {
  let keys = 0;
  for (const key in value) if (Object.hasOwn(value, key) && ++keys > MAX_MESSAGE_KEYS) return true;
  return false;
}

/** Where in `message` (`''` the message itself, else the path) an object of its first two levels is too wide. */
function widePath(message: Record<string, unknown>): string | undefined {
  if (tooWide(message)) return '';
  for (const name in message) {
    const part = message[name];
    if (!isRecord(part)) continue;
    if (tooWide(part)) return name;
    for (const inner in part) {
      const value = part[inner];
      if (isRecord(value) && tooWide(value)) return `${name}.${inner.slice(0, 64)}`;
    }
  }
  return undefined;
}

/** A JSON-RPC error answering the message `id` (null when it is not a request's), with the HTTP `status`. */
const invalidMessage = (id: unknown, code: number, message: string, status = 200): Response =>
  new PonyfillResponse(JSON.stringify({ jsonrpc: '2.0', id: isId(id) ? id : null, error: { code, message } }), {
    status,
    headers: { 'content-type': 'application/json' },
  });

/** The members a JSON-RPC message may have: the SDK's schema refuses a message with any other. */
const MEMBERS = new Set(['jsonrpc', 'id', 'method', 'params', 'result', 'error']);

/**
 * The refusal of a body holding a message with an object wider than {@link MAX_MESSAGE_KEYS} keys where the SDK's
 * schemas copy every key (see it), found before the SDK sees the body; each object is counted once and no further than
 * the limit. A message the SDK refuses whatever its width (the message itself that wide, or a member JSON-RPC has not)
 * gets its refusal, word for word (400, -32700); a request's params (or an object in them): 200 with -32602 Invalid
 * params naming it, as a call's bad arguments; a notification's params or a response's result or error: 400 with
 * -32600 Invalid Request naming it.
 */
export function refuseWide(body: unknown): Response | undefined {
  for (const message of Array.isArray(body) ? body : [body]) {
    if (!isRecord(message)) continue;
    const path = widePath(message);
    if (path === undefined) continue;
    const member = path.split('.', 1)[0] ?? '';
    if (path === '' || !MEMBERS.has(member))
      return invalidMessage(null, -32700, 'Parse error: Invalid JSON-RPC message', 400);
    const said = `${path} has more than ${MAX_MESSAGE_KEYS} keys (no message this server takes has as many)`;
    const request = typeof message.method === 'string' && isId(message.id);
    return request && member === 'params'
      ? invalidMessage(message.id, -32602, `Invalid params: ${said}`)
      : invalidMessage(null, -32600, `Invalid Request: ${said}`, 400);
  }
  return undefined;
}

/**
 * tools/call params as the SDK's schema wants them: `arguments: null` means none (some clients send it); params that
 * are not an object, a name that is not a string, or arguments that are not an object are a JSON-RPC invalid-params
 * answer naming the field, instead of the SDK's raw schema dump (an internal error, -32603). A stop tool (`stopTools`)
 * acts whatever it is sent with: arguments of it that are not an object (`"{}"`, a string) are dropped, not refused.
 */
export function normalizeToolCalls(body: unknown, stopTools: ReadonlySet<string>): Response | undefined {
  for (const message of Array.isArray(body) ? body : [body]) {
    if (typeof message !== 'object' || message === null) continue;
    const { method, params, id } = message as { method?: unknown; params?: unknown; id?: unknown };
    if (method !== 'tools/call') continue;
    const invalid = (detail: string) => invalidMessage(id, -32602, `Invalid params: ${detail}`);
    if (!isRecord(params)) return invalid(`params must be an object with the tool's name (got ${kindOf(params)})`);
    if (typeof params.name !== 'string') return invalid(`name must be a string (got ${kindOf(params.name)})`);
    const args = params.arguments;
    if (args === null || (args !== undefined && !isRecord(args) && stopTools.has(params.name))) delete params.arguments;
    else if (args !== undefined && !isRecord(args)) return invalid(`arguments must be an object (got ${kindOf(args)})`);
  }
  return undefined;
}
