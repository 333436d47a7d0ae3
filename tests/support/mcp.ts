import {
  StreamableHTTPClientTransport,
  type StreamableHTTPClientTransportOptions,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Target } from './live.ts';

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
