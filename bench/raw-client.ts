/**
 * The least a client can do over HTTP/1.1: one keep-alive connection, each request written whole in one write (head
 * and body together), its answer read to its Content-Length. Next to nothing runs on the client's side, so a round trip
 * through it is the server's own time (and the loopback socket's), whatever fetch or an SDK would add.
 */
import { connect, type Socket } from 'node:net';

/** A connection sending requests one at a time. */
export interface RawConnection {
  /** Writes `request` (a whole HTTP/1.1 request) and resolves with the answer's status once its body is read. */
  send(request: Buffer): Promise<number>;
  close(): void;
}

const HEAD_END = Buffer.from('\r\n\r\n');

/** Opens a connection to `url`'s host and port. */
export async function rawConnection(url: string): Promise<RawConnection> {
  const { hostname, port } = new URL(url);
  const socket: Socket = connect(Number(port), hostname.replace(/^\[|\]$/g, ''));
  socket.setNoDelay(true);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  let pending: { resolve: (status: number) => void; reject: (error: Error) => void } | undefined;
  let buffered: Buffer = Buffer.alloc(0);
  const fail = (error: Error) => {
    const waiting = pending;
    pending = undefined;
    waiting?.reject(error);
  };
  socket.on('data', (chunk: Buffer) => {
    buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
    const end = buffered.indexOf(HEAD_END);
    if (end < 0) return;
    const head = buffered.subarray(0, end).toString('latin1');
    const length = /\r\ncontent-length: *(\d+)/i.exec(head);
    if (!length) return fail(new Error(`an answer without Content-Length: ${head.slice(0, 200)}`));
    const whole = end + HEAD_END.length + Number(length[1]);
    if (buffered.length < whole) return;
    buffered = buffered.subarray(whole);
    const waiting = pending;
    pending = undefined;
    waiting?.resolve(Number(head.slice(9, 12)));
  });
  socket.on('error', fail);
  socket.on('close', () => fail(new Error('the server closed the connection')));
  return {
    send(request) {
      return new Promise((resolve, reject) => {
        pending = { resolve, reject };
        socket.write(request);
      });
    },
    close: () => socket.destroy(),
  };
}

/** A whole HTTP/1.1 request: the request line, `headers`, Host and (with a body) Content-Length, and the body. */
export function rawRequest(
  method: string,
  url: string,
  headers: Readonly<Record<string, string>> = {},
  body?: string,
): Buffer {
  const { host, pathname, search } = new URL(url);
  const lines = [`${method} ${pathname}${search} HTTP/1.1`, `host: ${host}`];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  if (body !== undefined) lines.push(`content-length: ${Buffer.byteLength(body)}`);
  return Buffer.from(`${lines.join('\r\n')}\r\n\r\n${body ?? ''}`);
}
