/** Who may open a Foxglove connection (lib/foxglove/server.ts): an upgrade's token, admission and its refusals. */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Principal } from '../core/roles.ts';
import {
  admit,
  type AdmissionPolicy,
  type Authentication,
  repeatedHeader,
  sameOrigin,
  upgradeAuthorization,
} from '../admission/front-door.ts';
import type { Result } from '../result.ts';
import type { AppState } from '../core/operation.ts';
import { refuseUpgrade as refuse } from '../http/raw-answer.ts';
import { parseHost } from '../net/address.ts';
import { SUBPROTOCOL } from './protocol.ts';

/** The token of an upgrade request: the Authorization header, or `?token=` as a Bearer token; both, differing: a refusal. */
function authorizationOf(request: IncomingMessage): Result<string, string> {
  const query = (request.url ?? '').split('?')[1];
  const token = query ? new URLSearchParams(query).get('token') : null;
  return upgradeAuthorization(request.headers.authorization || undefined, token || undefined, '?token=');
}

/**
 * Who an admitted upgrade is: a principal (the connection has its role), or, from an address past its wrong tokens, a
 * connection for the stop services only, whatever its token (the same for a right one and a wrong one): `stopOnly` is
 * the principal of a right token, for whom a stop is carried out (never shown; lib/admission/front-door.ts).
 */
export type Admitted =
  | { readonly principal: Principal; readonly pastGuesses?: undefined }
  | { readonly pastGuesses: { readonly stopOnly: Principal | undefined; readonly detail: string } };

/**
 * The HTTP face's rules for an upgrade, after the connection cap: Host (403), Origin (403: a WebSocket carries
 * commands), the token (401; past the guesses, a connection for the stop services only, see {@link Admitted}) and the
 * subprotocol (400). Returns who is admitted, or undefined once the socket is answered and closed.
 */
export function screenUpgrade(
  request: IncomingMessage,
  socket: Duplex,
  options: { readonly admission: AdmissionPolicy; readonly state: AppState },
  authenticate: (header: string, address?: string) => Authentication,
): Admitted | undefined {
  const { state } = options;
  const repeated = repeatedHeader(request.rawHeaders);
  if (repeated) return refuse(socket, 400, `more than one ${repeated} header`);
  const host = request.headers.host ?? '';
  const admission = admit(options.admission, {
    method: 'GET',
    host,
    origin: null,
    secFetchSite: null,
    preflightMethod: null,
  });
  if (admission.kind === 'refuse')
    return refuse(socket, 403, admission.error.kind === 'validation' ? '' : admission.error.detail);
  // A WebSocket carries commands: a browser page of another origin is refused as its POST would be.
  const origin = typeof request.headers.origin === 'string' ? request.headers.origin : null;
  const hostPort = parseHost(host);
  if (origin !== null && !options.admission.corsOrigins.has(origin) && !(hostPort && sameOrigin(origin, hostPort)))
    return refuse(
      socket,
      403,
      `Origin '${origin.slice(0, 100).replace(/[^\x20-\x7e]/g, '?')}' may not open a Foxglove connection here (a guard against cross-site requests); to admit it (e.g. https://app.foxglove.dev), add it to web.cors_origins`,
    );
  const address = request.socket.remoteAddress ?? '';
  const authorization = authorizationOf(request);
  if (!authorization.ok) return refuse(socket, 400, authorization.error);
  const principal = authenticate(authorization.value, address);
  let admitted: Admitted | undefined;
  if (!principal.ok) {
    const tooMany = principal.error.kind === 'too_many_requests' ? principal.error : undefined;
    const detail = principal.error.kind === 'validation' ? '' : principal.error.detail;
    const path = (request.url ?? '/').split('?')[0] ?? '/';
    state.services.audit?.recordRefusal('foxglove', address, 'GET', path, tooMany ? 429 : 401, detail);
    // Past the limit a stop is never kept from a right token: the connection offers the stop services only, to every
    // token alike (a Foxglove stop is a call on a connection; a refused upgrade would keep it out).
    if (tooMany) admitted = { pastGuesses: { stopOnly: principal.stopOnly, detail: tooMany.detail } };
    else
      return refuse(
        socket,
        401,
        'Not authenticated: open ws://HOST:PORT/?token=<token> or send "Authorization: Bearer <token>"',
        { 'WWW-Authenticate': 'Bearer' },
      );
  }
  const offered = String(request.headers['sec-websocket-protocol'] ?? '')
    .split(',')
    .map((p) => p.trim());
  if (!offered.includes(SUBPROTOCOL))
    return refuse(socket, 400, `the client must offer the subprotocol ${SUBPROTOCOL}`);
  return admitted ?? (principal.ok ? { principal: principal.value } : undefined);
}
