import { Response } from '@whatwg-node/fetch';
import { boundedIssues, type ApiError, statusOf } from '../core/errors.ts';

/**
 * A JSON response with the given status. It is the fetch ponyfill's Response, which the server
 * adapter writes to the socket directly from its string body (the native one goes through web
 * streams: a third of the throughput).
 */
export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  });
}

/** The response for an error: `{"detail": [...]}` for validation, `{"detail": "..."}` otherwise. */
export function errorResponse(error: ApiError): Response {
  const status = statusOf(error);
  switch (error.kind) {
    case 'validation':
      return json({ detail: boundedIssues(error.issues) }, status);
    case 'unauthorized':
      return json({ detail: error.detail }, status, { 'www-authenticate': 'Bearer' });
    case 'method_not_allowed':
      return json({ detail: error.detail }, status, { allow: error.allow.join(', ') });
    case 'busy':
      // Retry-After counts whole seconds (RFC 9110): the time left, rounded up; the detail says it exactly.
      return error.retryAfterS === undefined
        ? json({ detail: error.detail }, status)
        : json({ detail: error.detail }, status, { 'retry-after': String(Math.max(1, Math.ceil(error.retryAfterS))) });
    case 'too_many_requests':
      return json({ detail: error.detail }, status, {
        'retry-after': String(Math.max(1, Math.ceil(error.retryAfterS))),
      });
    default:
      return json({ detail: error.detail }, status);
  }
}

/**
 * The answer to a GET of a WebSocket's path without the upgrade: 426 Upgrade Required with `Upgrade: websocket` (RFC
 * 9110 15.5.22), saying to open a WebSocket there, and naming the path's other methods (`methods`, its 405's Allow).
 */
export function upgradeRequired(path: string, methods: readonly string[]): Response {
  const others = methods.filter((method) => method !== 'GET').map((method) => `${method} ${path}`);
  const detail = `GET ${path} is a WebSocket: open one there (Upgrade: websocket)${others.length ? `, or use ${others.join(' or ')}` : ''}`;
  return json({ detail }, 426, { upgrade: 'websocket', connection: 'Upgrade' });
}
