import assert from 'node:assert/strict';
import { Client, type ClientOptions } from '@modelcontextprotocol/sdk/client/index.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { JsonSchemaValidator, jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import {
  StreamableHTTPClientTransport,
  type StreamableHTTPClientTransportOptions,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { send, type Target } from './live.ts';

/**
 * The SDK client's transport to armgate's MCP endpoint: over a socket to a live server's base URL, or in memory to an
 * app (its fetch is the app's `request`, so the client speaks the same HTTP without a socket).
 */
export function mcpTransport(
  target: Target,
  options: StreamableHTTPClientTransportOptions = {},
): StreamableHTTPClientTransport {
  if (typeof target === 'string') return new StreamableHTTPClientTransport(new URL(`${target}/mcp/mcp`), options);
  return new StreamableHTTPClientTransport(new URL('http://127.0.0.1:8007/mcp/mcp'), {
    ...options,
    fetch: (input, init) => target.request(String(input), init),
  });
}

/** The protocol version the tests that speak MCP by hand ask for. */
export const MCP_PROTOCOL = '2025-06-18';

/** An initialize request as a client sends it by hand: the client named `name`, no capabilities unless given. */
export function initializeRequest(
  name = 'test',
  options: { readonly id?: number | string; readonly protocolVersion?: string; readonly capabilities?: object } = {},
) {
  const { id = 0, protocolVersion = MCP_PROTOCOL, capabilities = {} } = options;
  return {
    jsonrpc: '2.0',
    id,
    method: 'initialize',
    params: { protocolVersion, capabilities, clientInfo: { name, version: '1' } },
  };
}

/** An MCP session opened by hand: its id, and the headers of its later requests. */
export interface RawMcpSession {
  readonly id: string;
  /** The initialize's headers (content type, Accept, `headers`) with `mcp-session-id` and `mcp-protocol-version`. */
  readonly headers: Record<string, string>;
}

/**
 * Opens an MCP session by hand, as a client without the SDK does: an initialize POST to /mcp/mcp (answered 200 with a
 * session id), then notifications/initialized (202; left out with `initialized: false`, where a test counts the
 * requests the endpoint handles). `headers` go with both (a token, an Accept other than JSON's).
 */
export async function openMcpSession(
  target: Target,
  options: { readonly name?: string; readonly headers?: Record<string, string>; readonly initialized?: boolean } = {},
): Promise<RawMcpSession> {
  const initHeaders = { 'content-type': 'application/json', accept: 'application/json', ...options.headers };
  const post = (headers: Record<string, string>, body: unknown) =>
    send(target, '/mcp/mcp', { method: 'POST', headers, body: JSON.stringify(body) });
  const init = await post(initHeaders, initializeRequest(options.name));
  assert.equal(init.status, 200, await init.text());
  const id = init.headers.get('mcp-session-id') ?? '';
  assert.notEqual(id, '', 'the initialize opened a session');
  const headers = { ...initHeaders, 'mcp-session-id': id, 'mcp-protocol-version': MCP_PROTOCOL };
  if (options.initialized === false) return { id, headers };
  const initialized = await post(headers, { jsonrpc: '2.0', method: 'notifications/initialized' });
  assert.equal(initialized.status, 202, await initialized.text());
  return { id, headers };
}

/** The validators compiled for the tests' clients, by their schema's JSON text. */
const compiledSchemas = new Map<string, JsonSchemaValidator<unknown>>();
let sharedAjv: AjvJsonSchemaValidator | undefined;

/**
 * The JSON Schema validator of the tests' SDK clients: the SDK's default (Ajv, with its formats), one for the process,
 * compiling each schema once by its text. A Client made its own Ajv (~1 ms) and compiled each tool's output schema
 * again at every tools/list (~15 ms a list); the outputs are checked against the same schemas alike.
 */
export const clientSchemaValidator: jsonSchemaValidator = {
  getValidator<T>(schema: Parameters<jsonSchemaValidator['getValidator']>[0]): JsonSchemaValidator<T> {
    const text = JSON.stringify(schema);
    let validator = compiledSchemas.get(text);
    if (validator === undefined) {
      sharedAjv ??= new AjvJsonSchemaValidator();
      validator = sharedAjv.getValidator(schema);
      compiledSchemas.set(text, validator);
    }
    return validator as JsonSchemaValidator<T>;
  },
};

/** An SDK client named `name` (`options` as the Client takes them), its schemas checked by clientSchemaValidator. */
export function mcpClient(name: string, options: ClientOptions = {}): Client {
  return new Client({ name, version: '1' }, { jsonSchemaValidator: clientSchemaValidator, ...options });
}
