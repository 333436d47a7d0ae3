/**
 * The four forms of an HTTP/1.1 request target (RFC 9112, 3.2) brought to the one the app routes: origin-form
 * (`/path?query`). The fetch adapter builds a request's URL as `http://` + Host + target, which is right for
 * origin-form only; the other forms are rewritten or answered here, before the adapter sees them.
 */

/** What to do with a request target. */
export type RequestTarget =
  /** Serve `path` (origin-form, query included); `authority` replaces Host when the target carried one. */
  | { readonly kind: 'serve'; readonly path: string; readonly authority?: string }
  /** `OPTIONS *`: a question about the server as a whole. */
  | { readonly kind: 'server_options' }
  /** A target that no route can serve: a 400 with this detail. */
  | { readonly kind: 'refuse'; readonly detail: string };

/** Longest request target quoted in a refusal. */
const QUOTED = 80;

const quote = (target: string) =>
  `'${target.slice(0, QUOTED).replace(/[^\x20-\x7e]/g, '?')}${target.length > QUOTED ? '...' : ''}'`;

/**
 * Reads a request target: origin-form is served as it is; absolute-form (`http://host:port/path?q`, as proxies send)
 * is served at its path, its authority taking the place of Host (RFC 9112, 3.2.2: the server ignores Host then);
 * asterisk-form is `OPTIONS *`. Anything else (another scheme, authority-form outside CONNECT, a `*` with another
 * method) is refused.
 */
export function readRequestTarget(method: string, target: string): RequestTarget {
  if (target.startsWith('/')) return { kind: 'serve', path: target };
  if (target === '*') {
    return method === 'OPTIONS'
      ? { kind: 'server_options' }
      : { kind: 'refuse', detail: `the request target '*' is for OPTIONS only (got ${method.slice(0, 16)} *)` };
  }
  const absolute = /^(https?):\/\/([^/?#]*)([^#]*)$/i.exec(target);
  if (absolute) {
    const [, , authority = '', rest = ''] = absolute;
    let url: URL;
    try {
      url = new URL(`http://${authority}/`);
    } catch {
      return { kind: 'refuse', detail: `malformed absolute request target ${quote(target)}` };
    }
    if (authority === '' || url.username !== '' || url.password !== '')
      return { kind: 'refuse', detail: `the request target ${quote(target)} needs a host and no user information` };
    // The path and query as sent (not re-encoded), '/' when the target has none.
    const path = rest.startsWith('/') ? rest : `/${rest}`;
    return { kind: 'serve', path, authority: url.host };
  }
  return {
    kind: 'refuse',
    detail: `unsupported request target ${quote(target)}: expected a path such as /stop, or an absolute http:// URL`,
  };
}
