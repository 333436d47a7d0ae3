/**
 * A server that does nothing: bare node:http answering armgate's own bytes, canned. GET /robot/joint_states gets the
 * REST body; a POST to /mcp gets the MCP answer a Streamable HTTP client expects (initialize with a session id, 202 for
 * a notification, the canned result for any other call, its id echoed). Measured beside armgate with the same clients,
 * it is the floor of the ratio between the two clients: what no server can go below, however little it does.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The bytes the floor server answers with: armgate's, taken from a live armgate before measuring. */
export interface FloorAnswers {
  /** GET /robot/joint_states's body. */
  readonly rest: string;
  /** The `result` of the MCP call (JSON text). */
  readonly toolResult: string;
  /** The protocol version to answer initialize with. */
  readonly protocolVersion: string;
}

/** A running floor server. */
export interface FloorServer {
  /** Its base URL; the MCP endpoint is `${url}/mcp`. */
  readonly url: string;
  close(): Promise<void>;
}

const SESSION = 'floor';

function answer(res: ServerResponse, status: number, body: string, session = false): void {
  const headers: Record<string, string | number> = {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
  };
  if (session) headers['mcp-session-id'] = SESSION;
  res.writeHead(status, headers).end(body);
}

/** Answers one MCP POST body: the JSON-RPC message's id read, everything else canned. */
function mcpAnswer(res: ServerResponse, body: string, answers: FloorAnswers): void {
  const message = JSON.parse(body) as { id?: number | string; method?: string };
  if (message.id === undefined) {
    res.writeHead(202).end();
    return;
  }
  const result =
    message.method === 'initialize'
      ? JSON.stringify({
          protocolVersion: answers.protocolVersion,
          capabilities: { tools: {} },
          serverInfo: { name: 'floor', version: '1' },
        })
      : answers.toolResult;
  answer(res, 200, `{"result":${result},"jsonrpc":"2.0","id":${JSON.stringify(message.id)}}`, true);
}

/** Starts a floor server on 127.0.0.1 (a free port). */
export async function startFloorServer(answers: FloorAnswers): Promise<FloorServer> {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.method === 'GET' && req.url === '/robot/joint_states') return answer(res, 200, answers.rest);
    if (req.url !== '/mcp') return answer(res, 404, '{}');
    // The SDK client opens a GET stream for server messages after initialize; 405 says there is none.
    if (req.method !== 'POST') return answer(res, 405, '{}');
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => mcpAnswer(res, Buffer.concat(chunks).toString('utf8'), answers));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
