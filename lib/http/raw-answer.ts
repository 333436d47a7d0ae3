/**
 * An HTTP answer written on a raw socket, where no ServerResponse is at hand: an upgrade refused (a WebSocket route,
 * the Foxglove face) or a request the listener answers itself (a parser's refusal, a cap's 503, CONNECT). Always a JSON
 * body `{"detail": ...}` and `Connection: close`; the reason phrase is node:http's for the status.
 */
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { ValidationIssue } from '../core/errors.ts';

/** Headers besides Content-Type, Connection and Content-Length (Retry-After, Allow, WWW-Authenticate). */
export type RawHeaders = Readonly<Record<string, string | number>>;

/**
 * The whole answer as it goes on the wire: status line, headers and the JSON body saying `detail` (a 422's issues, as
 * lib/http/errors.ts writes them).
 */
export function rawAnswer(
  status: number,
  detail: string | readonly ValidationIssue[],
  headers: RawHeaders = {},
): string {
  const body = JSON.stringify({ detail });
  let head = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\nContent-Type: application/json\r\nConnection: close\r\n`;
  for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
  return `${head}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

/** Refuses an HTTP upgrade: the answer written on its socket, the socket ended. Returns undefined (nothing served). */
export function refuseUpgrade(
  socket: Duplex,
  status: number,
  detail: string | readonly ValidationIssue[],
  headers: RawHeaders = {},
): undefined {
  socket.end(rawAnswer(status, detail, headers));
  return undefined;
}
