/**
 * The front door: who may send a request, decided before anything else of it is read. Two checks, in this order:
 * - admission, against browsers turned on the arm: a Host the server does not serve (DNS rebinding) and a
 *   state-changing request from a foreign origin (a cross-site "simple" request) are refused; named front ends
 *   (web.cors_origins) get CORS. Pure: plain data in, a decision out.
 * - authentication: Bearer tokens checked in constant time, wrong ones slowed per client address (the guess limiter,
 *   lib/auth/guesses.ts), and what a request that did not pass is answered (401, or 429 while its address guesses, a
 *   stop it holds carried out all the same), on the audit trail's summary of refusals.
 * Every face applies them: the HTTP app (lib/http/routes.ts), the MCP endpoint's SDK transport (its allow-lists), the
 * WebSockets (lib/http/websocket.ts, lib/foxglove).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { AuditTrail } from '../audit/trail.ts';
import type { GuessLimiter } from '../auth/guesses.ts';
import { type ApiError, statusOf } from '../core/errors.ts';
import type { Principal, Role } from '../core/roles.ts';
import { DEFAULT_PORT, type HostPort, normalizeOrigin, parseHost, parseOrigin } from '../net/address.ts';
import { err, ok, type Result } from '../result.ts';

export type { HostPort };

// Admission: where the request comes from (its Host, its Origin), before who sends it.

/** Who may call: host names served on any port, exact host:port pairs, and the CORS origins. */
export interface AdmissionPolicy {
  /** Lowercase names (IPv6 in brackets) admitted on any port. */
  readonly names: ReadonlySet<string>;
  /** `name:port` values admitted on that port only. */
  readonly hostPorts: ReadonlySet<string>;
  /** Exact origins (`scheme://host[:port]`, lowercase, no default port) of admitted front ends. */
  readonly corsOrigins: ReadonlySet<string>;
}

/** The settings the policy is built from. */
export interface AdmissionSettings {
  /** web.host: the listen address. */
  readonly host: string;
  /** web.allowed_hosts: names, optionally `name:port`. */
  readonly allowedHosts: readonly string[];
  /** web.cors_origins: exact origins. */
  readonly corsOrigins: readonly string[];
}

/** The request headers admission looks at (null when absent). */
export interface RequestFacts {
  readonly method: string;
  /** The Host header (or the URL's host when the header is absent). */
  readonly host: string;
  readonly origin: string | null;
  readonly secFetchSite: string | null;
  /** Access-Control-Request-Method: present on a CORS preflight. */
  readonly preflightMethod: string | null;
}

/** What to do with a request: serve it (with CORS headers for `corsOrigin`), answer a preflight, or refuse. */
export type Admission =
  | { readonly kind: 'admit'; readonly corsOrigin: string | undefined }
  | { readonly kind: 'preflight'; readonly origin: string }
  | { readonly kind: 'refuse'; readonly error: ApiError };

/** Loopback names served on any port whatever the settings. */
export const LOOPBACK_NAMES: readonly string[] = ['localhost', '127.0.0.1', '[::1]'];
/** Methods that change state: a foreign Origin is refused on these. */
const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** Request headers a CORS front end may send (preflight answer). */
export const CORS_ALLOW_HEADERS = 'authorization, content-type, mcp-session-id, mcp-protocol-version, last-event-id';
/** Response headers a CORS front end may read. */
export const CORS_EXPOSE_HEADERS = 'Mcp-Session-Id';
/** Methods answered to a CORS preflight. */
export const CORS_ALLOW_METHODS = 'GET, POST, PUT, DELETE';

/** True for a listen address that stands for every interface (no name to serve). */
function isWildcard(host: string): boolean {
  return ['0.0.0.0', '::', '[::]', '0:0:0:0:0:0:0:0'].includes(host.toLowerCase());
}

/** The policy for the settings: loopback names, web.host when concrete, web.allowed_hosts, web.cors_origins. */
export function admissionPolicy(settings: AdmissionSettings): AdmissionPolicy {
  const names = new Set(LOOPBACK_NAMES);
  const hostPorts = new Set<string>();
  if (!isWildcard(settings.host)) {
    const listen = settings.host.includes(':') && !settings.host.startsWith('[') ? `[${settings.host}]` : settings.host;
    const parsed = parseHost(listen);
    if (parsed) names.add(parsed.name);
  }
  for (const entry of settings.allowedHosts) {
    const parsed = parseHost(entry);
    if (!parsed) continue;
    if (parsed.port === undefined) names.add(parsed.name);
    else hostPorts.add(`${parsed.name}:${parsed.port}`);
  }
  const corsOrigins = new Set<string>();
  for (const origin of settings.corsOrigins) {
    const normalized = normalizeOrigin(origin);
    if (normalized) corsOrigins.add(normalized);
  }
  return { names, hostPorts, corsOrigins };
}

/** Most Host values a policy keeps parsed; past them it starts again (a client sending many costs no memory). */
const HOSTS_KEPT = 64;

/** The Host values each policy has parsed, as sent: a client sends the same one with every request. */
const parsedHosts = new WeakMap<AdmissionPolicy, Map<string, HostPort | undefined>>();

/** A Host header parsed (undefined: malformed), once per value a policy sees. */
function hostOf(policy: AdmissionPolicy, value: string): HostPort | undefined {
  let parsed = parsedHosts.get(policy);
  if (!parsed) {
    parsed = new Map();
    parsedHosts.set(policy, parsed);
  }
  if (parsed.has(value)) return parsed.get(value);
  if (parsed.size >= HOSTS_KEPT) parsed.clear();
  const host = parseHost(value);
  parsed.set(value, host);
  return host;
}

/** True when the policy serves this Host. */
export function hostAdmitted(policy: AdmissionPolicy, host: HostPort): boolean {
  return policy.names.has(host.name) || (host.port !== undefined && policy.hostPorts.has(`${host.name}:${host.port}`));
}

/** True when the origin's host and port are the request's Host (default ports of the origin's scheme applied to both). */
export function sameOrigin(origin: string, host: HostPort): boolean {
  const o = parseOrigin(origin);
  if (!o || o.host.name !== host.name) return false;
  const fallback = DEFAULT_PORT[o.scheme];
  return (o.host.port ?? fallback) === (host.port ?? fallback);
}

/** A header value for a message: bounded and printable. */
function quoted(value: string): string {
  const shown = value.length > 100 ? `${value.slice(0, 100)}...` : value;
  return `'${shown.replace(/[^\x20-\x7e]/g, '?')}'`;
}

const forbidden = (detail: string): Admission => ({ kind: 'refuse', error: { kind: 'forbidden', detail } });

/**
 * Decides on a request: its Host must be one the server serves; a CORS preflight is answered for
 * the origins of web.cors_origins only; a state-changing request must come from the same origin, a
 * web.cors_origins origin, or carry no Origin (not a browser, unless Sec-Fetch-Site says cross-site).
 */
export function admit(policy: AdmissionPolicy, facts: RequestFacts): Admission {
  const host = hostOf(policy, facts.host);
  if (!host || !hostAdmitted(policy, host)) {
    return forbidden(
      `Host ${quoted(facts.host)} is not served here (a guard against DNS rebinding); ` +
        'if clients reach this server by that name, add it to web.allowed_hosts in the settings',
    );
  }
  const origin = facts.origin;
  const corsOrigin = origin !== null && policy.corsOrigins.has(origin) ? origin : undefined;
  const foreignOrigin = () =>
    forbidden(
      `Origin ${quoted(origin ?? '')} may not send ${facts.method} requests here (a guard against cross-site requests); ` +
        'to admit a web front end, add its origin (scheme://host:port) to web.cors_origins in the settings',
    );
  if (facts.method === 'OPTIONS' && origin !== null && facts.preflightMethod !== null) {
    if (corsOrigin) return { kind: 'preflight', origin: corsOrigin };
    if (!sameOrigin(origin, host)) return foreignOrigin();
  }
  if (STATE_CHANGING.has(facts.method)) {
    if (origin !== null && !corsOrigin && !sameOrigin(origin, host)) return foreignOrigin();
    if (origin === null && facts.secFetchSite?.toLowerCase() === 'cross-site') {
      return forbidden(
        `a cross-site ${facts.method} request (Sec-Fetch-Site: cross-site) is refused; ` +
          'to admit a web front end, add its origin to web.cors_origins in the settings',
      );
    }
  }
  return { kind: 'admit', corsOrigin };
}

/**
 * The exact Host and Origin values for the MCP SDK's DNS-rebinding protection, which compares
 * whole header values: every name the policy serves, bare and with the port of `requestHost` (the
 * Host the session began with), the exact host:port entries, and their http/https origins plus the
 * CORS origins.
 */
export function sdkAllowLists(
  policy: AdmissionPolicy,
  requestHost: string,
): { allowedHosts: string[]; allowedOrigins: string[] } {
  const port = parseHost(requestHost)?.port;
  const hosts = new Set<string>(policy.hostPorts);
  for (const name of policy.names) {
    hosts.add(name);
    if (port !== undefined) hosts.add(`${name}:${port}`);
  }
  const allowedHosts = [...hosts];
  const allowedOrigins = [...policy.corsOrigins, ...allowedHosts.flatMap((h) => [`http://${h}`, `https://${h}`])];
  return { allowedHosts, allowedOrigins };
}

// Authentication: who sends the request (after admission: a refused Host or Origin is never authenticated).

/** A token the server accepts: its name (what logs and the audit trail show), the secret and its role. */
export interface TokenEntry {
  readonly name: string;
  readonly token: string;
  readonly role: Role;
}

/**
 * Who every request is when the server has no token at all (loopback only, see the start-up rule): authentication
 * answers it explicitly; a call that did not pass authentication has no caller and is refused.
 */
export const ANONYMOUS: Principal = { name: 'anonymous', role: 'admin' };

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/** The words of a stop's 429 while its address guesses (the same whether its token was right or not). */
export const STOP_DESPITE_GUESSES =
  'a stop with a valid token is carried out all the same; this answer cannot say whether it was';

/**
 * What authentication answers: the principal, or the refusal. A refusal past the guess limit (429) of a token that was
 * right carries `stopOnly`, its principal, which a face may use for one thing only: to carry out a stop the request
 * holds, while it answers the same 429 as for a wrong token ({@link requestCaller} for REST and MCP,
 * lib/foxglove/server.ts). It is never shown: the answer cannot tell a right token from a wrong one.
 */
export type Authentication = Result<Principal, ApiError> & { readonly stopOnly?: Principal };

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

/** Who a token's digest belongs to: every known digest compared with timingSafeEqual, no early exit. */
function digestOwner(entries: readonly TokenEntry[]): (given: Buffer) => Principal | undefined {
  const known = entries.map((entry) => ({
    digest: digest(entry.token),
    principal: { name: entry.name, role: entry.role },
  }));
  return (given) => {
    let found: Principal | undefined;
    for (const entry of known) if (timingSafeEqual(given, entry.digest) && !found) found = entry.principal;
    return found;
  };
}

/**
 * Bearer authentication against a list of tokens, answering who the caller is. The given token
 * and every known one are hashed to equal-length digests and all of them compared with
 * timingSafeEqual (no early exit), so the time taken tells nothing about any token. Tokens are
 * never logged. With no tokens at all, every request is {@link ANONYMOUS}.
 *
 * With a {@link GuessLimiter}, wrong tokens are counted per client address (`address`, the socket's peer; '' in
 * memory): an address past its burst of wrong tokens gets 429 with Retry-After for any token but those already served
 * to it, which are served at once (lib/auth/guesses.ts says why); a right token's 429 carries `stopOnly`
 * ({@link Authentication}), so that a stop is never kept from it. A client again, with the token last served to it from
 * its address, is served without asking the limiter, whose answer could not differ (its token is compared all the
 * same).
 */
export function principalAuth(
  entries: readonly TokenEntry[],
  limiter?: GuessLimiter,
): (request: Request, address?: string) => Authentication {
  const check = authorizationAuth(entries, limiter);
  return (request, address) => check(request.headers.get('authorization') ?? '', address);
}

/**
 * The name of a header a request carries on more than one line where it may carry one, as a refusal names it (400);
 * undefined when none. Host: RFC 9112, 3.2; Authorization: two credentials would be two callers, and which one the
 * request is would be a guess. Node keeps the first line of each in its headers, so a second would otherwise go unseen
 * by admission and authentication: the listener asks it of every request and WebSocket upgrade, Foxglove's server of
 * its upgrades. Names are compared by length first: most lines are neither, and are not lower-cased.
 */
export function repeatedHeader(rawHeaders: readonly string[]): 'Host' | 'Authorization' | undefined {
  let host = false;
  let authorization = false;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] ?? '';
    if (name.length === 4 && name.toLowerCase() === 'host') {
      if (host) return 'Host';
      host = true;
    } else if (name.length === 13 && name.toLowerCase() === 'authorization') {
      if (authorization) return 'Authorization';
      authorization = true;
    }
  }
  return undefined;
}

/** The values of every line of header `name` (lower case) a request carries, in order (Node keeps only the first). */
export function headerLines(rawHeaders: readonly string[], name: string): string[] {
  const values: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2)
    if ((rawHeaders[i] ?? '').toLowerCase() === name) values.push(rawHeaders[i + 1] ?? '');
  return values;
}

/**
 * The Authorization of a WebSocket upgrade for {@link authorizationAuth}: its header's value, or the token it sends
 * elsewhere (`token`, from `where`: the jog socket's subprotocol, Foxglove's `?token=`) as a Bearer; '' with neither.
 * Both, naming different tokens, is a refusal (400) naming the two: which caller the upgrade is would be a guess. The
 * two are compared as digests, in constant time.
 */
export function upgradeAuthorization(
  header: string | undefined,
  token: string | undefined,
  where: string,
): Result<string, string> {
  if (token === undefined) return ok(header ?? '');
  if (header === undefined) return ok(`Bearer ${token}`);
  const inHeader = BEARER.exec(header)?.[1] ?? '';
  if (timingSafeEqual(digest(inHeader), digest(token))) return ok(header);
  return err(`the Authorization header and ${where} name different tokens: send the token once`);
}

/**
 * {@link principalAuth} on the value of an Authorization header ('' when there is none): for a face that is not a
 * fetch handler (the Foxglove WebSocket server checks its upgrade request's header, or its `?token=` as a Bearer).
 */
export function authorizationAuth(
  entries: readonly TokenEntry[],
  limiter?: GuessLimiter,
): (header: string, address?: string) => Authentication {
  if (entries.length === 0) return () => ok(ANONYMOUS);
  const lookUp = digestOwner(entries);
  const served = limiter ? servedTokens(limiter) : undefined;
  return (header, address = '') => {
    const match = BEARER.exec(header);
    if (!match) {
      return err({
        kind: 'unauthorized',
        detail: header
          ? 'Authorization header must be "Bearer <token>"'
          : 'Not authenticated: send "Authorization: Bearer <token>"',
      });
    }
    const given = digest(match[1] ?? '');
    if (!limiter || !served) {
      const found = lookUp(given);
      return found ? ok(found) : err({ kind: 'unauthorized', detail: 'Invalid token' });
    }
    // A client again, its token already served from its address: compared as every token is, and served without the
    // limiter, whose answer could not differ (a token served here is served whatever the bucket holds; remembering it
    // again changes nothing).
    if (served.has(address, given)) {
      const found = lookUp(given);
      if (found) return ok(found);
    }
    const decision = limiter.decide(address);
    if (decision.kind === 'served_only' && !limiter.servedHere(address, given)) {
      const refused = err({
        kind: 'too_many_requests',
        detail: `too many wrong tokens from this address; try again in ${decision.retryAfterS} s`,
        retryAfterS: decision.retryAfterS,
      } as const);
      // Compared all the same (every token, constant time, not counted): a right one may still stop the arm.
      const stopOnly = lookUp(given);
      return stopOnly ? { ...refused, stopOnly } : refused;
    }
    const found = lookUp(given);
    if (!found) {
      limiter.wrong(address);
      return err({ kind: 'unauthorized', detail: 'Invalid token' });
    }
    limiter.right(address, given);
    served.add(address, given);
    return ok(found);
  };
}

/** Raw addresses remembered with the token last served to each, at most (past them, the memory starts again). */
const SERVED_ADDRESSES_MAX = 4096;

/**
 * The token last served to each client address (as the socket gives it), as the limiter keeps it served there: only
 * while it does (the limiter says when it may have forgotten one: all of them are let go of then).
 */
function servedTokens(limiter: GuessLimiter): {
  has(address: string, given: Buffer): boolean;
  add(address: string, given: Buffer): void;
} {
  const last = new Map<string, Buffer>();
  limiter.onForget(() => last.clear());
  return {
    has: (address, given) => {
      const known = last.get(address);
      return known !== undefined && timingSafeEqual(known, given);
    },
    add: (address, given) => {
      if (last.size >= SERVED_ADDRESSES_MAX && !last.has(address)) last.clear();
      last.set(address, given);
    },
  };
}

/** A single admin token check (the original one-token form); undefined: no authentication. */
export function bearerAuth(token: string | undefined): (request: Request) => ApiError | undefined {
  const check = principalAuth(token === undefined ? [] : [{ name: 'web.token', token, role: 'admin' }]);
  return (request) => {
    const result = check(request);
    return result.ok ? undefined : result.error;
  };
}

/** Paths answered without authentication: the docs pages and the OpenAPI document. */
const PUBLIC_PATH = /^\/(docs|redoc)(\/assets\/[\w.-]+)?$|^\/docs\/guide\/[\w.-]+\.md$|^\/openapi\.json$/;

/** Carries out, once its 429 is on its way, the stop a request past the guess limit holds ({@link requestCaller}). */
export type StopDespiteGuesses = (
  request: Request,
  stopOnly: Principal | undefined,
  arrivedAtStop: number | undefined,
) => void;

/** What the HTTP face's authentication needs: the tokens, the limiter, the trail, and the routes' stops. */
export interface RequestCallerOptions {
  readonly tokens: readonly TokenEntry[];
  readonly guesses: GuessLimiter | undefined;
  readonly audit: AuditTrail | undefined;
  /** How a request to `method path` past the guess limit may still stop the arm; undefined: its route holds no stop. */
  readonly stopsPastGuesses: (method: string, path: string) => StopDespiteGuesses | undefined;
}

/**
 * Who sends a request to the HTTP face: its principal; undefined for the public pages (docs, the OpenAPI document),
 * which need none; or the 401 (429 while its address guesses) of a request without a valid token: counted on the
 * audit trail's summary of refusals, per address and reason (never the token). Past the guess limit, the stop a
 * request holds is carried out for a right token (`stopOnly`), answered with the same 429 as a wrong one's.
 */
export function requestCaller(
  options: RequestCallerOptions,
): (
  request: Request,
  path: string,
  address: string,
  arrivedAtStop: number | undefined,
) => { readonly caller: Principal | undefined } | { readonly refused: ApiError } {
  const authenticate = principalAuth(options.tokens, options.guesses);
  return (request, path, address, arrivedAtStop) => {
    if (PUBLIC_PATH.test(path)) return { caller: undefined };
    const caller = authenticate(request, address);
    if (caller.ok) return { caller: caller.value };
    const error = caller.error;
    const detail = 'detail' in error ? error.detail : 'refused';
    const reason = error.kind === 'too_many_requests' ? 'too many wrong tokens' : detail;
    const face = path.startsWith('/mcp/') ? 'mcp' : 'rest';
    options.audit?.recordRefusal(face, address, request.method, path, statusOf(error), reason);
    const stops = error.kind === 'too_many_requests' ? options.stopsPastGuesses(request.method, path) : undefined;
    if (stops && error.kind === 'too_many_requests') {
      stops(request, caller.stopOnly, arrivedAtStop);
      return { refused: { ...error, detail: `${error.detail}; ${STOP_DESPITE_GUESSES}` } };
    }
    return { refused: error };
  };
}
