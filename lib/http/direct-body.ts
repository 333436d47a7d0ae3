/**
 * A response body that writes itself on Node's response, for the server that has one (lib/server/request.ts):
 * the event stream writes its frames on the socket directly rather than through a stream piped into the response
 * (docs/events-and-live-page.md). The Response still carries an ordinary body for any other way it is served (the
 * app in memory, the fetch adapter).
 */
import type { ServerResponse } from 'node:http';

/** What writes a body on Node's response once its head is written (status and headers from the Response). */
export interface DirectBody {
  writeTo(res: ServerResponse): void;
}

const DIRECT_BODY = Symbol('armgate.directBody');

/** `response`, marked as written by `body` where the server can hand it Node's response. */
export function withDirectBody(response: Response, body: DirectBody): Response {
  Object.defineProperty(response, DIRECT_BODY, { value: body });
  return response;
}

/** The direct writer of `response`, if it has one. */
export function directBodyOf(response: Response): DirectBody | undefined {
  return (response as Response & { [DIRECT_BODY]?: DirectBody })[DIRECT_BODY];
}
