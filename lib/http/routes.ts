/**
 * The route table and the app that serves it. The table: every route armgate serves, as data, built once at start-up
 * from the catalog's handler files and the routes mounted beside them (the MCP endpoint, the event stream, the live
 * page's files, WebSockets). Everything that needs to know a route reads it here: the app's router, its 405 answer
 * and its fast exact-path lookup ({@link createApp}), the listener's rules (stops are never refused by a cap, nor an
 * MCP POST that may hold one in its body: the app answers it 503 and carries out only its stops; REST reads take the
 * light way, an event stream holds its connection: lib/server/listener.ts), the turn queue's rule
 * (what runs at once: `inOrder` in lib/server/request.ts) and the MCP endpoint's (the tools that stop).
 * A request's route is found once ({@link RouteTable.match}, as the listener reads its head) and handed on with it:
 * the rules ({@link isStop} and the others), the turn queue and the app read that match rather than look again.
 */
import { Response } from '@whatwg-node/fetch';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { type IRequest, Router } from 'itty-router';
import { type AdmissionPolicy, admit, requestCaller, type TokenEntry } from '../admission/front-door.ts';
import type { GuessLimiter } from '../auth/guesses.ts';
import type { ApiError } from '../core/errors.ts';
import type { AppState, HandlerFile, RestOperation } from '../core/operation.ts';
import type { Arrival } from '../core/roles.ts';
import { logLine, logRequestLine } from '../logs/line.ts';
import { BodyTimeoutError, CLIENT_CLOSED_STATUS, isClientAbort } from './body.ts';
import { preflightResponse, withCors } from './cors.ts';
import { type DocsAssets, docsResponse } from './docs.ts';
import { errorResponse, json, upgradeRequired } from './errors.ts';
import { type BeyondCaps, beyondAnswer, refusedStops, type StopsPastGuesses } from './refused-stops.ts';
import type { RestCall, RestHandler } from './rest.ts';

export type { BeyondCaps, StopRunner, StopsPastGuesses } from './refused-stops.ts';

/**
 * What a route does, for the rules that read the table: `read` changes nothing, `stop` stops (never refused, never
 * queued), `motion` moves or changes state, `upload` takes a multipart form, `stream` holds an event stream, `mount`
 * is any other route mounted beside the REST face, `websocket` is answered by an HTTP upgrade.
 */
export type RouteKind = 'read' | 'stop' | 'motion' | 'upload' | 'stream' | 'mount' | 'websocket';

/** A route mounted beside the REST face (the MCP endpoint, the event stream): any method, after authentication. */
export type MountHandler = (request: Request, call: Arrival) => Promise<Response>;

/** Takes over an HTTP upgrade (a WebSocket): the request, its socket and the bytes read past its head. */
export type UpgradeHandler = (request: IncomingMessage, socket: Duplex, head: Buffer) => void;

/** A route of an operation: its handler file's own `handler` answers it. */
export interface OperationRoute {
  readonly kind: 'read' | 'stop' | 'motion' | 'upload';
  readonly method: string;
  /** The path, path parameters written the OpenAPI way (`/robot/plans/{id}/execute`). */
  readonly path: string;
  readonly operation: RestOperation;
  readonly handler: RestHandler;
  /** True when the path has no parameter: the route is found by one lookup of the exact path. */
  readonly exact: boolean;
}

/** A route mounted beside the REST face. */
export interface MountRoute {
  readonly kind: 'stream' | 'mount';
  /** `*`: every method. */
  readonly method: string;
  /** The path; a trailing `/*` matches everything below it (the router's pattern). */
  readonly path: string;
  readonly handler: MountHandler;
  /** It schedules its own work once it has read its body (the MCP endpoint's POST): the turn queue lets it in at once. */
  readonly ownTurns?: boolean;
  /** The stops its requests may hold, carried out past the guess limit (see {@link StopsPastGuesses}). */
  readonly stopsPastGuesses?: StopsPastGuesses;
}

/** A route answered by an HTTP upgrade (the listener's 'upgrade' event, dispatched by path). */
export interface WebSocketRoute {
  readonly kind: 'websocket';
  readonly method: 'GET';
  readonly path: string;
  readonly upgrade: UpgradeHandler;
}

export type Route = OperationRoute | MountRoute | WebSocketRoute;

/** A route mounted beside the REST face, as start-up declares it. */
export interface Mount {
  readonly path: string;
  readonly handler: MountHandler;
  /** `stream`: a GET there holds an event stream. Default: `mount`. */
  readonly kind?: 'stream' | 'mount';
  /** The methods whose requests schedule their own work (see {@link MountRoute.ownTurns}). */
  readonly ownTurns?: readonly string[];
  /** See {@link MountRoute.stopsPastGuesses}. */
  readonly stopsPastGuesses?: StopsPastGuesses;
}

/** The kind of an operation's route, from its data: its effect, and a multipart body for an upload. */
export function kindOf(op: RestOperation): OperationRoute['kind'] {
  if (op.effect === 'stop') return 'stop';
  if (op.rest.body === 'multipart') return 'upload';
  return op.effect === 'motion' ? 'motion' : 'read';
}

/**
 * A request's route in the table, found once from its request line ({@link RouteTable.match}): what the rules below,
 * the listener, the turn queue and the app read of it.
 */
export interface RouteMatch {
  readonly method: string;
  /** The path of the request's target, without its query or fragment, as sent (not decoded). */
  readonly path: string;
  /**
   * The route the table holds at exactly that method and path (a mount of every method too); undefined when it holds
   * none there: the router finds a route with path parameters, and answers a trailing slash or a dot segment as it
   * always did, but no rule below counts such a request a stop, a stream or a read.
   */
  readonly route: Route | undefined;
}

/** A stop's request: no cap refuses it, no queue holds it, its answer is written before its events. */
export function isStop(match: RouteMatch): boolean {
  return match.route?.kind === 'stop';
}

/**
 * A stop that takes no input (POST /stop, /robot/stop, /robot/pause): the listener carries it out whatever else its
 * request is (behind a refusal, with two Authorization lines, offered with an upgrade: lib/server/unanswered-stops.ts),
 * without its body. One that takes input (set_override) is served as it came or not at all: without its body it was a
 * 422, written as the answer of the request that had one.
 */
export function isBodilessStop(match: RouteMatch): boolean {
  const route = match.route;
  return route !== undefined && route.kind === 'stop' && route.operation.input === undefined;
}

/** A REST read of an exact path (GET): the listener hands it to the app as a light view. */
export function isRestRead(match: RouteMatch): boolean {
  return match.method === 'GET' && match.route?.kind === 'read';
}

/** A GET that holds an event stream (counted against its cap while it is open). */
export function isStream(match: RouteMatch): boolean {
  return match.method === 'GET' && match.route?.kind === 'stream';
}

/**
 * A request that may hold a stop the route itself reads from its body (a POST to a mount with stopsPastGuesses: the
 * MCP endpoint's tool calls): beyond a cap the listener lets it through to the app, which answers it 503 and carries
 * out only a right token's stops.
 */
export function mayHoldStops({ method, route }: RouteMatch): boolean {
  return (
    method === 'POST' && route !== undefined && 'stopsPastGuesses' in route && route.stopsPastGuesses !== undefined
  );
}

/** A request that runs at once rather than in the turn queue: a stop, or one to a route that schedules its own work. */
export function runsAtOnce({ route }: RouteMatch): boolean {
  return route !== undefined && (route.kind === 'stop' || ('ownTurns' in route && route.ownTurns === true));
}

/** The route table (see the module comment), with the lookups the request path makes. */
export class RouteTable {
  /** Every route, operations first (in the catalog's order), then mounts, then WebSockets. */
  readonly routes: readonly Route[];
  /** Routes by method, then exact path (a mount of every method under `*`): one lookup per request. */
  readonly #byMethod = new Map<string, Map<string, Route>>();
  /** The methods of the operations' and WebSockets' routes by path, for a 405's Allow. */
  readonly #methodsByPath = new Map<string, string[]>();

  constructor(routes: readonly Route[]) {
    this.routes = routes;
    for (const route of routes) {
      if (route.kind !== 'websocket' && route.path.includes('{')) continue;
      if (route.kind === 'mount' && route.path.endsWith('/*')) continue;
      let paths = this.#byMethod.get(route.method);
      if (!paths) {
        paths = new Map();
        this.#byMethod.set(route.method, paths);
      }
      if (!paths.has(route.path)) paths.set(route.path, route);
    }
    for (const route of routes)
      if ('operation' in route || route.kind === 'websocket')
        this.#methodsByPath.set(route.path, [...(this.#methodsByPath.get(route.path) ?? []), route.method]);
  }

  /** The route of a request line with an exact path (no parameter, no wildcard): found with one or two lookups. */
  find(method: string, path: string): Route | undefined {
    return this.#byMethod.get(method)?.get(path) ?? this.#byMethod.get('*')?.get(path);
  }

  /**
   * A request's route, from its method and target (origin-form or an absolute URL): found once per request, by the
   * listener as it reads the head (else by the turn queue or the app), and handed on (see {@link RouteMatch}).
   */
  match(method: string, target: string): RouteMatch {
    const path = pathOf(target);
    const route = this.find(method, path);
    if (route !== undefined) return { method, path, route };
    // A spelling the router serves as a route of the table (a trailing slash, a dot segment) is that route here too, so
    // that the caps and the turn queue count `POST /stop/` as the stop it is answered by.
    const canonical = canonicalPathOf(path);
    const found = canonical === path ? undefined : this.find(method, canonical);
    return found === undefined ? { method, path, route } : { method, path: canonical, route: found };
  }

  /** The operation route of a request line with an exact path (a REST stop past the guess limit, refused-stops.ts). */
  operationAt(method: string, path: string): OperationRoute | undefined {
    const route = this.#byMethod.get(method)?.get(path);
    return route && 'operation' in route ? route : undefined;
  }

  /**
   * The WebSocket route of a path, for the listener's 'upgrade' dispatcher: a spelling the router serves as a route (a
   * trailing slash, a dot segment) is that route here too, as {@link match} reads it (`/robot/jog/` is the jog socket).
   */
  upgradeAt(path: string): WebSocketRoute | undefined {
    const gets = this.#byMethod.get('GET');
    const route = gets?.get(path) ?? gets?.get(canonicalPathOf(path));
    return route?.kind === 'websocket' ? route : undefined;
  }

  /**
   * The methods the operations answer on a path, and GET where a WebSocket is (a 405's Allow); undefined: neither there.
   */
  methodsAt(path: string): readonly string[] | undefined {
    return this.#methodsByPath.get(path);
  }
}

/**
 * The table of the handler files served (each file's own `handler`), the mounts beside them, and the WebSocket routes.
 */
export function routeTable(
  files: readonly HandlerFile[],
  mounts: readonly Mount[] = [],
  websockets: readonly Omit<WebSocketRoute, 'kind' | 'method'>[] = [],
): RouteTable {
  const routes: Route[] = files.map(({ operation, handler }) => ({
    kind: kindOf(operation),
    method: operation.rest.method,
    path: operation.rest.path,
    operation,
    handler: handler as RestHandler,
    exact: !operation.rest.path.includes('{'),
  }));
  for (const mount of mounts) {
    const kind = mount.kind ?? 'mount';
    const stops = mount.stopsPastGuesses ? { stopsPastGuesses: mount.stopsPastGuesses } : {};
    for (const method of mount.ownTurns ?? [])
      routes.push({ kind, method, path: mount.path, handler: mount.handler, ownTurns: true, ...stops });
    routes.push({ kind, method: '*', path: mount.path, handler: mount.handler, ...stops });
  }
  for (const ws of websockets) routes.push({ kind: 'websocket', method: 'GET', ...ws });
  return new RouteTable(routes);
}

/**
 * The app: a fetch handler taking, besides the request, the arbiter's stop count at its arrival (stamped by the server
 * before anything is awaited), the client's address (the socket's peer; '' for a request made in memory), for a
 * request the listener let through on a connection beyond a cap, why ({@link BeyondCaps}: it is answered 503), and
 * the request's route as the listener or the turn queue found it ({@link RouteMatch}; found here when not given).
 */
export type App = (
  request: Request,
  arrivedAtStop?: number,
  address?: string,
  beyond?: BeyondCaps,
  match?: RouteMatch,
) => Promise<Response>;

/** A fetch handler plus the extra (non-REST) routes it mounts. */
export interface AppOptions {
  /** The route table start-up built from the catalog ({@link routeTable}): the operations' routes and the mounts. */
  readonly routes: RouteTable;
  /** The app's services and the ROS context, in every call's context. */
  readonly state: AppState;
  /** undefined: no authentication (unless `tokens` has some). An admin token named 'web.token'. */
  readonly token: string | undefined;
  /** The tokens with their names and roles (web.tokens and the admin token); when given, `token` is not used. */
  readonly tokens?: readonly TokenEntry[];
  /** Which Host, Origin and CORS front ends are admitted (see lib/admission/front-door.ts). */
  readonly admission: AdmissionPolicy;
  /** The docs pages' assets, loaded when a docs path is first asked for (lib/http/docs.ts's docsAssetsOnDemand). */
  readonly docs: () => Promise<DocsAssets>;
  /**
   * Builds the OpenAPI document served at /openapi.json (with the active limits): called on the first request for it,
   * not at start-up (~20 ms of a start under load), and kept.
   */
  readonly openApiDocument: () => unknown;
  /** Routes answered without authentication, by path pattern (e.g. OAuth discovery: 404 saying to use the token). */
  readonly open?: readonly {
    readonly path: RegExp;
    readonly respond: (request: Request) => Response | Promise<Response>;
  }[];
  /** How fast wrong tokens may come from one client address (web.limits.token_guess_*); the defaults otherwise. */
  readonly guesses?: GuessLimiter;
  /** Writes one line per request; defaults to stdout. */
  readonly log?: (fields: Record<string, string | number>) => void;
}

/**
 * The path of a request target in origin-form (`/path?query`) or of an absolute URL, without its query or fragment,
 * as sent (not decoded, no dot segment resolved): found without parsing a URL (hot path).
 */
export function pathOf(target: string): string {
  const start = target.startsWith('/') ? 0 : target.indexOf('/', target.indexOf('//') + 2);
  if (start < 0) return '/';
  const query = target.indexOf('?', start);
  const fragment = target.indexOf('#', start);
  const end = query < 0 ? fragment : fragment < 0 ? query : Math.min(query, fragment);
  return end < 0 ? target.slice(start) : target.slice(start, end);
}

/** A path as the router reads it: dot segments resolved and one trailing slash dropped (else as it is, unparsed). */
export function canonicalPathOf(path: string): string {
  if (!path.endsWith('/') && !path.includes('/.')) return path;
  const resolved = new URL(`http://h${path}`).pathname;
  return resolved.length > 1 && resolved.endsWith('/') ? resolved.slice(0, -1) : resolved;
}

/** The host (and port) of an absolute URL. */
function hostOf(url: string): string {
  const start = url.indexOf('//') + 2;
  const end = url.indexOf('/', start);
  return url.slice(start, end < 0 ? undefined : end);
}

/** A mounted route's call: authenticated (a request gets here only with its caller, or it was answered 401). */
function mountCall(handler: MountHandler, request: Request, call: RestCall): Promise<Response> | Response {
  if (!call.caller) return errorResponse({ kind: 'unauthorized', detail: 'Not authenticated' });
  return handler(request, { caller: call.caller, arrivedAtStop: call.arrivedAtStop });
}

/**
 * The HTTP core: admission (Host, Origin and CORS, before anything else), Bearer auth, docs pages,
 * the REST handlers by method and path, 404 and 405, and one structured log line per request.
 * Anything a handler throws is a bug: it is logged and answered with a 500 without a stack trace.
 */
export function createApp(options: AppOptions): App {
  const tokens =
    options.tokens ?? (options.token === undefined ? [] : [{ name: 'web.token', token: options.token, role: 'admin' }]);
  const log = options.log ?? logLine;
  /** One line per request: the fields given to `options.log` when there is one, else written directly to stdout. */
  const logRequest = options.log
    ? (method: string, path: string, status: number, ms: number) =>
        log({ level: 'info', msg: 'request', method, path, status, ms })
    : logRequestLine;
  let openApiBody: string | undefined;
  const { services, ros } = options.state;
  const table = options.routes;
  const router = Router<IRequest, [RestCall]>();
  const stops = refusedStops({
    state: options.state,
    log,
    restStop: (method, path) => {
      const route = table.operationAt(method, path);
      return route && route.operation.effect === 'stop' && route.operation.input === undefined
        ? route.handler
        : undefined;
    },
    mountStops: (method, path) => {
      const mount = table.find(method, path);
      return mount && 'stopsPastGuesses' in mount ? mount.stopsPastGuesses : undefined;
    },
  });
  const stopsPastGuesses = stops.pastGuesses;
  // Who sends each request; wrong tokens are counted per client address: guessing is slowed (lib/auth/guesses.ts).
  const callerOf = requestCaller({ tokens, guesses: options.guesses, audit: services.audit, stopsPastGuesses });
  router.get('/openapi.json', () => {
    openApiBody ??= JSON.stringify(options.openApiDocument());
    return new Response(openApiBody, { headers: { 'content-type': 'application/json' } });
  });
  for (const path of ['/docs', '/redoc', '/docs/assets/:file', '/redoc/assets/:file', '/docs/guide/:file']) {
    router.get(path, async (request: IRequest) => docsResponse(await options.docs(), new URL(request.url).pathname));
  }
  // The router reads the table: each operation's route is its handler file's own handler; a mount takes every method.
  // Routes without path parameters are also found before the router, by one lookup of the table (see below).
  const mounted = new Set<string>();
  for (const route of table.routes) {
    if (route.kind === 'websocket') continue;
    if ('operation' in route) {
      const handler = route.handler;
      // Path parameters are written the OpenAPI way, {name}; the router wants :name.
      router[route.method.toLowerCase()](route.path.replace(/\{(\w+)\}/g, ':$1'), (request: IRequest, call: RestCall) =>
        handler(request as unknown as Request, call),
      );
    } else if (!mounted.has(route.path)) {
      mounted.add(route.path);
      const handler = route.handler;
      router.all(route.path, (request: IRequest, call: RestCall) =>
        mountCall(handler, request as unknown as Request, call),
      );
    }
  }
  // A route with path parameters answers another method with 405 and its methods, as an exact path does below.
  for (const route of table.routes) {
    if (!('operation' in route) || route.exact || route !== table.routes.find((r) => r.path === route.path)) continue;
    const allowed = table.methodsAt(route.path) ?? [];
    router.all(route.path.replace(/\{(\w+)\}/g, ':$1'), (request: IRequest) =>
      errorResponse({
        kind: 'method_not_allowed',
        detail: `Method ${request.method} not allowed on ${new URL(request.url).pathname}; use ${allowed.join(' or ')}`,
        allow: [...allowed],
      }),
    );
  }
  router.all('*', (request: IRequest) => {
    const { pathname } = new URL(request.url);
    const allowed = table.methodsAt(pathname);
    const error: ApiError = allowed
      ? {
          kind: 'method_not_allowed',
          detail: `Method ${request.method} not allowed on ${pathname}; use ${allowed.join(' or ')}`,
          allow: [...allowed],
        }
      : { kind: 'not_found', detail: `Not Found: ${pathname}` };
    return errorResponse(error);
  });

  type OpenRoute = NonNullable<AppOptions['open']>[number];
  const openRoute = (path: string): OpenRoute | undefined => options.open?.find((route) => route.path.test(path));

  return async (
    request: Request,
    arrivedAtStop?: number,
    address = '',
    beyond?: BeyondCaps,
    match?: RouteMatch,
  ): Promise<Response> => {
    const started = performance.now();
    const { path, route } = match ?? table.match(request.method, request.url);
    const headers = request.headers;
    const admission = admit(options.admission, {
      method: request.method,
      host: headers.get('host') ?? hostOf(request.url),
      origin: headers.get('origin'),
      secFetchSite: headers.get('sec-fetch-site'),
      preflightMethod: headers.get('access-control-request-method'),
    });
    let response: Response;
    try {
      if (beyond)
        response =
          admission.kind === 'admit'
            ? await stops.beyondCaps(request, path, address, arrivedAtStop, beyond, callerOf)
            : beyondAnswer(beyond);
      else if (admission.kind === 'refuse') response = errorResponse(admission.error);
      else if (admission.kind === 'preflight') response = preflightResponse(admission.origin);
      else {
        const open = openRoute(path);
        if (open) response = await open.respond(request);
        else {
          const who = callerOf(request, path, address, arrivedAtStop);
          if ('refused' in who) response = errorResponse(who.refused);
          else {
            // The call's facts travel with the request as the router's argument: nothing is kept beside the request.
            const call: RestCall = { services, ros, caller: who.caller, arrivedAtStop };
            // The routes without path parameters or wildcard, by method and path (a mount of every method too): the
            // request's route in the table, found once (by the listener as it read the head), served before the router
            // (whose URL parse, query object and pattern loop are most of a read's routing). A path the table does not
            // hold exactly (a parameter, a trailing slash, a dot segment) goes to the router, which answers as it always did.
            // A GET of a WebSocket's path without the upgrade (the listener's dispatcher takes those): 426, saying so.
            const routed =
              route === undefined
                ? ((await router.fetch(request as unknown as IRequest, call)) as Response | undefined)
                : route.kind === 'websocket'
                  ? upgradeRequired(path, table.methodsAt(path) ?? [])
                  : 'operation' in route
                    ? await route.handler(request, call)
                    : await mountCall(route.handler, request, call);
            response = routed ?? errorResponse({ kind: 'not_found', detail: 'Not Found' });
          }
        }
        if (admission.corsOrigin) response = withCors(response, admission.corsOrigin);
      }
    } catch (e) {
      if (e instanceof BodyTimeoutError) {
        // Cut for arriving too slowly (lib/server/slow-bodies.ts): the client's doing; the 408 is already on its way.
        response = json({ detail: e.message }, 408, { connection: 'close' });
      } else if (isClientAbort(e, request)) {
        // The client went away mid-request (a dropped upload, a closed tab): its doing, not a server fault. The request
        // line below, with this status, is its one log line.
        response = json({ detail: 'the client closed the request' }, CLIENT_CLOSED_STATUS);
      } else {
        log({ level: 'error', msg: 'unhandled error', error: e instanceof Error ? (e.stack ?? e.message) : String(e) });
        response = json({ detail: 'Internal server error' }, 500);
      }
    }
    logRequest(request.method, path, response.status, Math.round((performance.now() - started) * 100) / 100);
    return response;
  };
}
