/**
 * Request admission against browsers turned on the arm: a Host the server does not serve (DNS
 * rebinding) and a state-changing request from a foreign origin (a cross-site "simple" request) are
 * refused; named front ends (web.cors_origins) get CORS. Pure: plain data in, a decision out.
 */
import type { ApiError } from '../core/errors.ts';
import { DEFAULT_PORT, type HostPort, normalizeOrigin, parseHost, parseOrigin } from '../net/address.ts';

export type { HostPort };

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
