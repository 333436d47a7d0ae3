/**
 * Raw HTTP/1.1 over node:net, for what fetch cannot send: an absolute-form or asterisk-form request target, a body
 * trickled a byte at a time, a client that goes away mid-body.
 */
import net from 'node:net';
import WebSocket from 'ws';

/** A parsed response: status, headers (lower-case names) and body text. */
export interface RawResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** The port of a server URL such as http://127.0.0.1:43211. */
export const portOf = (url: string) => Number(new URL(url).port);

/** Parses the first complete response in `text`, or undefined while it is incomplete. */
export function parseResponse(text: string): RawResponse | undefined {
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const [statusLine = '', ...lines] = text.slice(0, end).split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 0);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const rest = text.slice(end + 4);
  const length = headers['content-length'];
  if (length !== undefined) {
    if (Buffer.byteLength(rest) < Number(length)) return undefined;
    return { status, headers, body: rest.slice(0, Number(length)) };
  }
  if (headers['transfer-encoding'] === 'chunked') {
    if (!rest.includes('\r\n0\r\n\r\n') && !rest.startsWith('0\r\n\r\n')) return undefined;
    let body = '';
    let at = 0;
    for (;;) {
      const eol = rest.indexOf('\r\n', at);
      const size = Number.parseInt(rest.slice(at, eol), 16);
      if (!size) break;
      body += rest.slice(eol + 2, eol + 2 + size);
      at = eol + 2 + size + 2;
    }
    return { status, headers, body };
  }
  return { status, headers, body: rest };
}

/** An open connection: write raw bytes, await the next response, or see it closed. */
export interface RawConnection {
  readonly socket: net.Socket;
  write(text: string | Uint8Array): void;
  /** The next complete response (rejects when the connection closes first or after `timeoutMs`). */
  response(timeoutMs?: number): Promise<RawResponse>;
  /** Resolves when the server closes the connection. */
  readonly closed: Promise<void>;
  /** Everything received so far. */
  received(): string;
  destroy(): void;
}

/** Connects to 127.0.0.1:`port` (from `localAddress` when given: any 127.x.y.z is a different client address). */
export function connect(port: number, localAddress?: string): Promise<RawConnection> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: '127.0.0.1', ...(localAddress ? { localAddress } : {}) });
    let text = '';
    let consumed = 0;
    const waiters: (() => void)[] = [];
    const wake = () => {
      for (const w of waiters.splice(0)) w();
    };
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      text += chunk;
      wake();
    });
    const closed = new Promise<void>((done) =>
      socket.on('close', () => {
        wake();
        done();
      }),
    );
    socket.on('error', () => {});
    socket.once('connect', () =>
      resolve({
        socket,
        write: (data) => socket.write(data),
        received: () => text,
        closed,
        destroy: () => socket.destroy(),
        response(timeoutMs = 10_000) {
          return new Promise((done, fail) => {
            const timer = setTimeout(() => fail(new Error(`no response within ${timeoutMs} ms: ${text}`)), timeoutMs);
            const check = () => {
              const parsed = parseResponse(text.slice(consumed));
              if (parsed) {
                clearTimeout(timer);
                const head = text.indexOf('\r\n\r\n', consumed) + 4;
                consumed = head + Buffer.byteLength(parsed.body);
                done(parsed);
              } else if (socket.destroyed || socket.readableEnded) {
                clearTimeout(timer);
                fail(new Error(`connection closed before a complete response: '${text.slice(consumed)}'`));
              } else waiters.push(check);
            };
            check();
          });
        },
      }),
    );
    socket.once('error', reject);
  });
}

/** Sends one raw request on a fresh connection and returns the response (the connection is closed after). */
export async function rawRequest(port: number, text: string): Promise<RawResponse> {
  const c = await connect(port);
  try {
    c.write(text);
    return await c.response();
  } finally {
    c.destroy();
  }
}

/**
 * The answer to a WebSocket upgrade of `url` offering `protocols` with `headers` (a header given as a list is sent as
 * that many lines): 101 when it opened (closed at once), else the refusal's status and body.
 */
export function upgradeAnswer(
  url: string,
  protocols: string[],
  headers: Record<string, string | string[]> = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, protocols, { headers: headers as Record<string, string> });
    ws.on('open', () => {
      ws.close();
      resolve({ status: 101, body: '' });
    });
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => {
        body += chunk.toString();
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    ws.on('error', reject);
  });
}
