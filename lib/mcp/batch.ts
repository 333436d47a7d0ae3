/**
 * What a POST body to the MCP endpoint holds, as far as routing needs to know (initialize, the request ids, the
 * cancellations, a stop tool's call, progress asked for, the one request the hand-off can take), and tools/call
 * arguments made what the SDK's schema wants. The SDK's transport and the Server validate the rest.
 */
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
    const invalid = (detail: string) =>
      new PonyfillResponse(
        JSON.stringify({
          jsonrpc: '2.0',
          id: typeof id === 'string' || typeof id === 'number' ? id : null,
          error: { code: -32602, message: `Invalid params: ${detail}` },
        }),
        { status: 200, headers: { 'content-type': 'application/json' } },
      );
    if (!isRecord(params)) return invalid(`params must be an object with the tool's name (got ${kindOf(params)})`);
    if (typeof params.name !== 'string') return invalid(`name must be a string (got ${kindOf(params.name)})`);
    const args = params.arguments;
    if (args === null || (args !== undefined && !isRecord(args) && stopTools.has(params.name))) delete params.arguments;
    else if (args !== undefined && !isRecord(args)) return invalid(`arguments must be an object (got ${kindOf(args)})`);
  }
  return undefined;
}
