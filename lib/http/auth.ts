/**
 * Who sends a request: Bearer tokens checked in constant time, wrong ones slowed per client address (the guess limiter,
 * lib/auth/guesses.ts), and the HTTP face's answer to a request that did not pass (401, or 429 while its address
 * guesses, a stop it holds carried out all the same), on the audit trail's summary of refusals.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { AuditTrail } from '../audit/trail.ts';
import type { Principal, Role } from '../core/roles.ts';
import { err, ok, type Result } from '../result.ts';
import { type ApiError, statusOf } from '../core/errors.ts';
import type { GuessLimiter } from '../auth/guesses.ts';
import { errorResponse } from './errors.ts';

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
 * holds, while it answers the same 429 as for a wrong token ({@link requestCaller} for REST and MCP, lib/foxglove/server.ts).
 * It is never shown: the answer cannot tell a right token from a wrong one.
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
 * its address, is served without asking the limiter, whose answer could not differ (its token is compared all the same).
 */
export function principalAuth(
  entries: readonly TokenEntry[],
  limiter?: GuessLimiter,
): (request: Request, address?: string) => Authentication {
  const check = authorizationAuth(entries, limiter);
  return (request, address) => check(request.headers.get('authorization') ?? '', address);
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

/** Carries out, once its 429 is on its way, the stop a request past the guess limit holds (see {@link requestCaller}). */
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
) => { readonly caller: Principal | undefined } | { readonly refused: Response } {
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
      return { refused: errorResponse({ ...error, detail: `${error.detail}; ${STOP_DESPITE_GUESSES}` }) };
    }
    return { refused: errorResponse(error) };
  };
}
