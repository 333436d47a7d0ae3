/** Host and origin text as Host headers, Origin headers and the settings carry it: parsed and normalized (pure). */

/** A host as a Host header or a setting carries it: a lowercase name (IPv6 in brackets) and an optional port. */
export interface HostPort {
  readonly name: string;
  readonly port: number | undefined;
}

const HOST = /^(\[[0-9a-f:.]+\]|[a-z0-9_-]+(?:\.[a-z0-9_-]+)*)(?::(\d{1,5}))?$/i;
const ORIGIN = /^(https?):\/\/(\[[0-9a-f:.]+\]|[a-z0-9_-]+(?:\.[a-z0-9_-]+)*)(?::(\d{1,5}))?$/i;
/** The default port of each scheme. */
export const DEFAULT_PORT: Readonly<Record<string, number>> = { http: 80, https: 443 };

function toPort(text: string | undefined): number | undefined | null {
  if (text === undefined) return undefined;
  const port = Number(text);
  return port >= 1 && port <= 65535 ? port : null;
}

/** Parses `name`, `name:port`, `[v6]` or `[v6]:port`; undefined when it is none of these. */
export function parseHost(text: string): HostPort | undefined {
  const m = HOST.exec(text);
  if (!m?.[1]) return undefined;
  const port = toPort(m[2]);
  return port === null ? undefined : { name: m[1].toLowerCase(), port };
}

/** Parses an origin `http(s)://host[:port]` (no path) into its scheme and host; undefined otherwise. */
export function parseOrigin(text: string): { readonly scheme: 'http' | 'https'; readonly host: HostPort } | undefined {
  const m = ORIGIN.exec(text);
  if (!m?.[1] || !m[2]) return undefined;
  const port = toPort(m[3]);
  if (port === null) return undefined;
  return { scheme: m[1].toLowerCase() as 'http' | 'https', host: { name: m[2].toLowerCase(), port } };
}

/** An origin as browsers send it: lowercase, without the scheme's default port. */
export function normalizeOrigin(text: string): string | undefined {
  const o = parseOrigin(text);
  if (!o) return undefined;
  const port = o.host.port === undefined || o.host.port === DEFAULT_PORT[o.scheme] ? '' : `:${o.host.port}`;
  return `${o.scheme}://${o.host.name}${port}`;
}
