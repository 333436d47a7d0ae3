import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { createServerAdapter } from '@whatwg-node/server';
import { readRequestTarget } from './request-target.ts';

/** Writes one structured log line (the app's sink). */
export type LogSink = (fields: Record<string, string | number>) => void;

export interface ListenerOptions {
  /** The app: what a request in origin-form is handed to. */
  readonly fetch: (request: Request) => Promise<Response>;
  readonly log: LogSink;
}

/** The methods the server answers on some route, for `OPTIONS *`. */
const SERVER_METHODS = 'GET, POST, OPTIONS';

/** Answers a request on the socket directly (the app never sees it) and logs it as the app logs a request. */
function answer(
  res: ServerResponse,
  log: LogSink,
  req: IncomingMessage,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = body === undefined ? '' : JSON.stringify(body);
  res.writeHead(status, {
    ...(text === '' ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }),
    ...headers,
  });
  res.end(text);
  log({ level: 'info', msg: 'request', method: req.method ?? '', path: (req.url ?? '').slice(0, 200), status, ms: 0 });
}

/** The status, reason phrase and detail for a request Node's HTTP parser refused. */
function clientErrorAnswer(error: NodeJS.ErrnoException): [number, string, string] {
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return [408, 'Request Timeout', 'the request did not arrive in time'];
    case 'HPE_HEADER_OVERFLOW':
      return [431, 'Request Header Fields Too Large', 'the request headers are too large'];
    default:
      return [400, 'Bad Request', `malformed HTTP request (${error.code ?? 'parse error'})`];
  }
}

/**
 * The HTTP server in front of the app: every request form HTTP/1.1 allows reaches the app in origin-form, or is
 * answered here (`OPTIONS *`: 204 with Allow; a target no route can serve, and CONNECT: 4xx).
 */
export function createListener(options: ListenerOptions): Server {
  const adapter = createServerAdapter(options.fetch);
  const server = createServer((req, res) => {
    const target = readRequestTarget(req.method ?? '', req.url ?? '');
    if (target.kind === 'server_options')
      return answer(res, options.log, req, 204, undefined, { allow: SERVER_METHODS });
    if (target.kind === 'refuse') return answer(res, options.log, req, 400, { detail: target.detail });
    if (target.authority !== undefined) {
      req.url = target.path;
      req.headers.host = target.authority;
    }
    void adapter(req, res);
  });
  // What Node's parser refuses (a malformed request line or header, headers too large, a request too slow) is
  // answered with a JSON 4xx saying what, logged once at info level: it is the client's doing.
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    const [status, reason, detail] = clientErrorAnswer(error);
    options.log({ level: 'info', msg: 'request refused by the HTTP parser', status, code: error.code ?? '' });
    if (!socket.writable) return void socket.destroy();
    const body = JSON.stringify({ detail });
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nConnection: close\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  });
  // CONNECT (authority-form) asks for a tunnel: armgate is no proxy.
  server.on('connect', (req: IncomingMessage, socket: Duplex) => {
    socket.end(
      'HTTP/1.1 405 Method Not Allowed\r\nAllow: GET, POST, OPTIONS\r\nContent-Type: application/json\r\n' +
        'Connection: close\r\nContent-Length: 46\r\n\r\n{"detail":"CONNECT is not served: no tunnels"}',
    );
    options.log({ level: 'info', msg: 'request', method: 'CONNECT', path: '', status: 405, ms: 0 });
    void req;
  });
  return server;
}
