/**
 * A request's way through the server: read off the socket by the listener, handed to the app in its turn, and the app's
 * answer written back.
 *
 * The target: the four forms of an HTTP/1.1 request target (RFC 9112, 3.2) brought to the one the app routes,
 * origin-form (`/path?query`). The fetch adapter builds a request's URL as `http://` + Host + target, which is right for
 * origin-form only; the other forms are rewritten or answered before the adapter sees them.
 *
 * The direct way for requests without a body: the app sees a light view of Node's request instead of the fetch
 * Request that @whatwg-node/server builds (a Request, its Headers, an AbortController wired to three listeners of the
 * response), and its Response is written to Node's response in one writeHead and one end. The same app runs (the same
 * admission, authentication, roles, router, operation and log line); only the objects around the request are
 * lighter. Used for the REST reads (GET without path parameters), the requests a poller sends hundreds of times a
 * second: 13 % more of them per second (docs/benchmarks.md). Everything else goes through the adapter.
 *
 * The order requests run in ({@link inOrder}, below): a stop at once, the rest a few per turn of the event loop; the app
 * as the server serves it, on a socket or in memory.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { directBodyOf } from '../http/direct-body.ts';
import { type App, type BeyondCaps, isStop, type RouteMatch, type RouteTable, runsAtOnce } from '../http/routes.ts';

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

/** True when a request announces a body (Content-Length above 0, or chunked). */
export function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return (length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined;
}

/** Node's request headers seen as the fetch API's Headers (read only; names are lower case in Node). */
class HeadersView implements Headers {
  readonly #raw: IncomingMessage['headers'];

  constructor(raw: IncomingMessage['headers']) {
    this.#raw = raw;
  }

  get(name: string): string | null {
    // Names are asked for in lower case almost always: looked up as given first, without making a new string.
    const value = this.#raw[name] ?? this.#raw[name.toLowerCase()];
    if (value === undefined) return null;
    return Array.isArray(value) ? value.join(', ') : value;
  }

  has(name: string): boolean {
    return (this.#raw[name] ?? this.#raw[name.toLowerCase()]) !== undefined;
  }

  getSetCookie(): string[] {
    return [];
  }

  forEach(callback: (value: string, key: string, parent: Headers) => void): void {
    for (const [key, value] of this.entries()) callback(value, key, this);
  }

  *entries(): HeadersIterator<[string, string]> {
    for (const key of Object.keys(this.#raw).sort()) {
      const value = this.get(key);
      if (value !== null) yield [key, value];
    }
  }

  *keys(): HeadersIterator<string> {
    for (const [key] of this.entries()) yield key;
  }

  *values(): HeadersIterator<string> {
    for (const [, value] of this.entries()) yield value;
  }

  [Symbol.iterator](): HeadersIterator<[string, string]> {
    return this.entries();
  }

  append(): void {
    throw new TypeError('the request headers are read only');
  }

  delete(): void {
    throw new TypeError('the request headers are read only');
  }

  set(): void {
    throw new TypeError('the request headers are read only');
  }
}

/** The signal of a request whose answer is not written (see {@link BodylessRequest}): never aborted. */
const UNANSWERED = new AbortController().signal;

/**
 * A request without a body as the app reads it: method, absolute URL, headers and a signal that aborts when the
 * client goes before its answer was written (made on first use). Its body is empty. Without a response (`res`
 * undefined) it is a request whose answer is not written to its client (a stop carried out behind a refusal,
 * lib/server/unanswered-stops.ts): its signal never aborts, and `headers` may stand in for the request's own.
 */
export class BodylessRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: Headers;
  readonly body = null;
  readonly bodyUsed = false;
  readonly #req: IncomingMessage;
  readonly #res: ServerResponse | undefined;
  #signal: AbortSignal | undefined;

  constructor(
    method: string,
    url: string,
    req: IncomingMessage,
    res: ServerResponse | undefined,
    headers: IncomingMessage['headers'] = req.headers,
  ) {
    this.method = method;
    this.url = url;
    this.#req = req;
    this.#res = res;
    this.headers = new HeadersView(headers);
  }

  get signal(): AbortSignal {
    if (this.#signal === undefined) {
      const res = this.#res;
      if (res === undefined) return UNANSWERED;
      const controller = new AbortController();
      const gone = () => {
        if (!res.writableFinished) controller.abort(new Error('the client closed the request'));
      };
      if (this.#req.destroyed || res.destroyed) gone();
      else res.once('close', gone);
      this.#signal = controller.signal;
    }
    return this.#signal;
  }

  async text(): Promise<string> {
    return '';
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    return new ArrayBuffer(0);
  }
}

/** The absolute URL of an origin-form request target, as the adapter builds it (http, the Host header). */
export function absoluteUrl(req: IncomingMessage, target: string): string {
  return `http://${req.headers.host ?? 'localhost'}${target}`;
}

/**
 * Writes a fetch Response to Node's response: its status and headers at once, then its body whole. The fetch ponyfill's
 * string body is taken where @whatwg-node/server's own writer takes it (`bodyType`, `bodyInit`), without a promise;
 * any other body is read through the fetch API.
 */
export function writeResponse(res: ServerResponse, response: Response, stream: boolean): void | Promise<void> {
  // Only an event stream's answer may write itself (the route table says which requests are one).
  const direct = stream ? directBodyOf(response) : undefined;
  if (direct) {
    // A body that writes itself (the event stream): the head now, then the body on the socket as it comes.
    if (res.destroyed || res.writableEnded) return;
    res.writeHead(response.status, headersOf(response));
    return direct.writeTo(res);
  }
  const ponyfill = response as Response & { readonly bodyType?: unknown; readonly bodyInit?: unknown };
  if (ponyfill.bodyType === 'String' && typeof ponyfill.bodyInit === 'string')
    return writeWhole(res, response, ponyfill.bodyInit);
  const type = response.headers.get('content-type') ?? '';
  // JSON and text as a string (Node writes the head and a string body in one piece), anything else as bytes.
  return type.startsWith('application/json') || type.startsWith('text/')
    ? response.text().then((body) => writeWhole(res, response, body))
    : response.arrayBuffer().then((body) => writeWhole(res, response, Buffer.from(body)));
}

/** The headers of a fetch Response as Node's writeHead takes them. */
function headersOf(response: Response): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, key) => {
    headers[key] = value;
  });
  const cookies = response.headers.getSetCookie?.() ?? [];
  if (cookies.length > 0) headers['set-cookie'] = cookies;
  return headers;
}

function writeWhole(res: ServerResponse, response: Response, body: string | Buffer): void {
  if (res.destroyed || res.writableEnded) return;
  const headers = headersOf(response);
  headers['content-length'] = String(typeof body === 'string' ? Buffer.byteLength(body) : body.length);
  res.writeHead(response.status, headers);
  res.end(body);
}

// The order requests run in. Request handling in small batches per turn of the event loop, so that the loop polls for
// I/O between batches: under hundreds of concurrent readers a turn stays short, and a request that must win (POST /stop)
// is read and answered within a batch's time instead of after every pending read of the turn. Urgent requests are not
// queued at all; each request carries the arbiter's count of stops when it arrived (its stamp, taken by the listener as
// its head is parsed).

/** Handlers started per turn of the event loop. */
export const HANDLERS_PER_TURN = 8;

/** A queue of request handlers run {@link HANDLERS_PER_TURN} at a time, one batch per turn. */
export function createTurnQueue(perTurn = HANDLERS_PER_TURN): <T>(task: () => Promise<T>) => Promise<T> {
  let queue: (() => void)[] = [];
  let head = 0;
  let scheduled = false;
  const drain = () => {
    const end = Math.min(head + perTurn, queue.length);
    while (head < end) {
      const task = queue[head] as () => void;
      queue[head++] = noop;
      task();
    }
    if (head < queue.length) setImmediate(drain);
    else {
      queue = [];
      head = 0;
      scheduled = false;
    }
  };
  return (task) =>
    new Promise((resolve, reject) => {
      queue.push(() => {
        task().then(resolve, reject);
      });
      if (!scheduled) {
        scheduled = true;
        setImmediate(drain);
      }
    });
}

function noop(): void {}

/** What the order of requests reads besides the app and its turn queue. */
export interface RequestOrder {
  /** The route table: a request's route, for one the listener did not find it for (which are stops, which run at once). */
  readonly routes: Pick<RouteTable, 'match'>;
  /** The arbiter: its count of stops, read when a request arrives. */
  readonly arbiter: { readonly stopCount: number };
  /** The event hub: held while a stop is answered, so that its answer is written before its events. */
  readonly events: { hold(): () => void };
}

/**
 * The app as the server serves it, in order: each request stamped with the arbiter's count of stops on arrival (one
 * that arrived before a stop cannot move after it); a stop answered at once, its answer written before its events
 * (and the joint states meanwhile) are fanned out; a route that schedules its own work let in at once (the MCP
 * endpoint's POST, once its body is read); everything else a few per turn (`inTurn`).
 */
export function inOrder(
  app: App,
  inTurn: <T>(task: () => Promise<T>) => Promise<T>,
  { routes, arbiter, events }: RequestOrder,
): (
  request: Request,
  address?: string,
  arrivedAtStop?: number,
  beyond?: BeyondCaps,
  match?: RouteMatch,
) => Promise<Response> {
  // The listener stamps a request as its head is parsed (lib/server/listener.ts) and finds its route; one it did not
  // is stamped now, and its route found here (once: the app is handed it).
  return (request, address = '', arrivedAtStop = arbiter.stopCount, beyond, match) => {
    const matched = match ?? routes.match(request.method, request.url);
    if (isStop(matched)) {
      const release = events.hold();
      return app(request, arrivedAtStop, address, undefined, matched).finally(release);
    }
    // One beyond a cap is answered 503 once its body is read (only the stops it holds run): never queued behind others.
    return beyond || runsAtOnce(matched)
      ? app(request, arrivedAtStop, address, beyond, matched)
      : inTurn(() => app(request, arrivedAtStop, address, undefined, matched));
  };
}
