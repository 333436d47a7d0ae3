/**
 * Who may call what: roles per token, the role an operation needs, and the caller of one call.
 * One rule for both faces (lib/ops/rest.ts and lib/mcp/tools.ts check it before run).
 */
import type { ApiError } from '../http/errors.ts';
import type { AnyOperation, Face } from './operation.ts';

/** The roles, weakest first: read (reads, stop), operate (also motion), admin (everything). */
export const ROLES = ['read', 'operate', 'admin'] as const;
/** A role of a token. */
export type Role = (typeof ROLES)[number];

/** An authenticated party: the token's name (never the token) and its role. */
export interface Principal {
  readonly name: string;
  readonly role: Role;
}

/** Who calls an operation, through which face. */
export interface Caller extends Principal {
  readonly face: Face;
}

/** Without any token every caller is this one (loopback only, see the start-up rule). */
export const ANONYMOUS: Principal = { name: 'anonymous', role: 'admin' };

/**
 * The role an operation needs: `op.role` when it is marked (admin-only operations), otherwise
 * from its effect: reads and the stop need `read` (every authenticated role), motions `operate`.
 */
export function roleNeeded(op: AnyOperation): Role {
  if (op.role) return op.role;
  return op.effect === 'motion' ? 'operate' : 'read';
}

/** True when `role` is at least `needed`. */
export function roleAllows(role: Role, needed: Role): boolean {
  return ROLES.indexOf(role) >= ROLES.indexOf(needed);
}

/** The 403 of a caller whose role is too weak for `op`, naming the role needed; undefined when allowed. */
export function refusal(op: AnyOperation, caller: Principal, opName: string): ApiError | undefined {
  const needed = roleNeeded(op);
  if (roleAllows(caller.role, needed)) return undefined;
  return {
    kind: 'forbidden',
    detail: `${opName} needs the role '${needed}'; the token '${caller.name}' has the role '${caller.role}'`,
  };
}

const principals = new WeakMap<Request, Principal>();

/** Remembers who sent a request (the app's authentication step). */
export function setRequestPrincipal(request: Request, principal: Principal): void {
  principals.set(request, principal);
}

/**
 * Who sent a request: the principal authentication found, or {@link ANONYMOUS} for a request that
 * did not pass through the app (a handler called directly in a test).
 */
export function requestPrincipal(request: Request): Principal {
  return principals.get(request) ?? ANONYMOUS;
}
