import { randomUUID } from 'node:crypto';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { type AdmissionPolicy, sdkAllowLists } from '../http/origin.ts';
import { createMcpServer } from './face.ts';

/** Sessions idle longer than this are closed (ms). */
export const SESSION_IDLE_MS = 10 * 60 * 1000;
/** Most sessions kept at once; the least recently used goes first. */
export const MAX_SESSIONS = 256;

interface Session {
  readonly server: Server;
  readonly transport: WebStandardStreamableHTTPServerTransport;
  lastUsedMs: number;
}

const jsonRpcError = (status: number, code: number, message: string) =>
  new Response(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }), {
    status,
    headers: { 'content-type': 'application/json' },
  });

/** The /mcp/mcp endpoint and its sessions. */
export interface McpEndpoint {
  readonly handler: (request: Request) => Promise<Response>;
  /** Number of open sessions. */
  sessionCount(): number;
  /** Closes every session (server shutdown). */
  close(): Promise<void>;
}

/**
 * The /mcp/mcp fetch handler around the SDK's web-standard streamable HTTP transport, with
 * sessions: an initialize request creates a server and transport for the client (JSON responses),
 * later requests carrying its Mcp-Session-Id reuse them, DELETE ends the session, and sessions idle
 * for 10 minutes (or beyond 256) are closed. An unknown session id is a 404, after which clients
 * initialize again. The SDK's DNS-rebinding protection is on, with the hosts and origins of
 * `admission` (the same policy the app checks first), for the port the session began on.
 */
export function createMcpEndpoint(admission: AdmissionPolicy): McpEndpoint {
  const sessions = new Map<string, Session>();
  const closeSession = async (id: string) => {
    const session = sessions.get(id);
    if (!session) return;
    sessions.delete(id);
    await session.transport.close();
    await session.server.close();
  };
  const sweep = setInterval(() => {
    const now = performance.now();
    for (const [id, session] of sessions) if (now - session.lastUsedMs > SESSION_IDLE_MS) void closeSession(id);
  }, 60_000);
  sweep.unref();

  const handler = async (request: Request): Promise<Response> => {
    const id = request.headers.get('mcp-session-id');
    if (id) {
      const session = sessions.get(id);
      if (!session) return jsonRpcError(404, -32001, 'Session not found: initialize a new session');
      session.lastUsedMs = performance.now();
      return session.transport.handleRequest(request);
    }
    const server = createMcpServer();
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: true,
      enableDnsRebindingProtection: true,
      ...sdkAllowLists(admission, request.headers.get('host') ?? ''),
      onsessioninitialized: (sessionId) => {
        sessions.set(sessionId, { server, transport, lastUsedMs: performance.now() });
        if (sessions.size > MAX_SESSIONS) {
          const oldest = [...sessions.entries()].sort((a, b) => a[1].lastUsedMs - b[1].lastUsedMs)[0];
          if (oldest) void closeSession(oldest[0]);
        }
      },
      onsessionclosed: (sessionId) => {
        sessions.delete(sessionId);
      },
    });
    await server.connect(transport);
    const response = await transport.handleRequest(request);
    if (!transport.sessionId || !sessions.has(transport.sessionId)) {
      // Not an initialize request: nothing to keep.
      await transport.close();
      await server.close();
    }
    return response;
  };

  return {
    handler,
    sessionCount: () => sessions.size,
    async close() {
      clearInterval(sweep);
      await Promise.all([...sessions.keys()].map(closeSession));
    },
  };
}
