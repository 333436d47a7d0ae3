/**
 * Who may call what: the roles, the role an operation needs, and the caller of one call. One rule for both faces
 * (lib/http/rest.ts and lib/mcp/tools.ts check it before run). A call reaches an operation only with a caller the
 * face was handed by authentication: there is no default caller.
 */
import type { ApiError } from './errors.ts';

/** The roles, weakest first: read (reads, stop), operate (also motion and teaching), admin (everything). */
export const ROLES = ['read', 'operate', 'admin'] as const;
/** A role of a token. */
export type Role = (typeof ROLES)[number];

/** The two faces an operation is reached through. */
export type Face = 'rest' | 'mcp';

/** An authenticated party: the token's name (never the token) and its role. */
export interface Principal {
  readonly name: string;
  readonly role: Role;
}

/** Who calls an operation, through which face. */
export interface Caller extends Principal {
  readonly face: Face;
}

/**
 * Who sent a request and when it arrived, as the app hands them with the request to a route mounted beside the REST
 * face (the MCP endpoint): the caller authentication found and the arbiter's stop count at the request's arrival.
 */
export interface Arrival {
  readonly caller: Principal;
  /** The stop count when the request arrived (a stop since then refuses its motion); undefined: not stamped. */
  readonly arrivedAtStop: number | undefined;
}

/** What the role rule needs of an operation: its effect and, when stricter, its role. */
export interface RoleRequirement {
  readonly effect: 'read' | 'motion' | 'stop' | 'write';
  readonly role?: Role;
}

/**
 * The role an operation needs: `op.role` when it is marked (admin-only operations), otherwise
 * from its effect: reads and the stop need `read` (every authenticated role), motions and writes (teaching a
 * position) `operate`.
 */
export function roleNeeded(op: RoleRequirement): Role {
  if (op.role) return op.role;
  return op.effect === 'motion' || op.effect === 'write' ? 'operate' : 'read';
}

/** True when `role` is at least `needed`. */
export function roleAllows(role: Role, needed: Role): boolean {
  return ROLES.indexOf(role) >= ROLES.indexOf(needed);
}

/** True when `value` is a principal (a name and a known role). */
export function isPrincipal(value: unknown): value is Principal {
  if (typeof value !== 'object' || value === null) return false;
  const { name, role } = value as { name?: unknown; role?: unknown };
  return typeof name === 'string' && ROLES.includes(role as Role);
}

/** The refusal of a call that reached a face without a caller (it did not pass authentication): never run. */
export const NO_CALLER: ApiError & { readonly kind: 'unauthorized' } = {
  kind: 'unauthorized',
  detail: 'Not authenticated: the call reached the operation without a caller',
};

/**
 * Why `caller` may not call `op` (`opName`: how the face names it): a 401 when there is no caller, a 403 naming the
 * role needed when its role is too weak; undefined when allowed.
 */
export function refusal(op: RoleRequirement, caller: Principal | undefined, opName: string): ApiError | undefined {
  if (!caller) return NO_CALLER;
  const needed = roleNeeded(op);
  if (roleAllows(caller.role, needed)) return undefined;
  return {
    kind: 'forbidden',
    detail: `${opName} needs the role '${needed}'; the token '${caller.name}' has the role '${caller.role}'`,
  };
}
