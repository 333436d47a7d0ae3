/**
 * The route table: every route armgate serves, as data, built once at start-up from the catalog's handler files and
 * the routes mounted beside them (the MCP endpoint, the event stream, the live page's files, WebSockets). Everything
 * that needs to know a route reads it here: the router and its 405 answer and the fast exact-path lookup
 * (lib/http/app.ts), the listener's rules (stops are never refused by a cap, REST reads take the light way, an event
 * stream holds its connection: lib/server/listener.ts), the turn queue's rule (what runs at once:
 * lib/server/start.ts) and the MCP endpoint's (the tools that stop).
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { HandlerFile, RestOperation } from '../core/operation.ts';
import type { Arrival } from '../core/roles.ts';
import type { RestHandler } from './rest.ts';

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

/**
 * Carries out the stops a request to a mounted route holds (the MCP endpoint: a stop tool's call), for a request past
 * its address's guess limit, once the app has answered it 429 (lib/http/app.ts): with `call`, a right token's (its
 * principal, for the stop only); without, a wrong one's, whose body is read all the same (the same work either way)
 * and nothing is carried out.
 */
export type StopsPastGuesses = (request: Request, call: Arrival | undefined) => Promise<void>;

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

/** The route table (see the module comment), with the lookups the request path makes. */
export class RouteTable {
  /** Every route, operations first (in the catalog's order), then mounts, then WebSockets. */
  readonly routes: readonly Route[];
  /** Routes by method, then exact path (a mount of every method under `*`): one lookup per request. */
  readonly #byMethod = new Map<string, Map<string, Route>>();
  /** The methods of the operations' routes by path, for a 405's Allow. */
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
      if ('operation' in route)
        this.#methodsByPath.set(route.path, [...(this.#methodsByPath.get(route.path) ?? []), route.method]);
  }

  /** The route of a request line with an exact path (no parameter, no wildcard): found with one or two lookups. */
  find(method: string, path: string): Route | undefined {
    return this.#byMethod.get(method)?.get(path) ?? this.#byMethod.get('*')?.get(path);
  }

  /** The operation route of a request line with an exact path (the app's fast path). */
  operationAt(method: string, path: string): OperationRoute | undefined {
    const route = this.#byMethod.get(method)?.get(path);
    return route && 'operation' in route ? route : undefined;
  }

  /** True when the request line is a stop's (no cap refuses it, no queue holds it). */
  isStop(method: string, path: string): boolean {
    return this.#byMethod.get(method)?.get(path)?.kind === 'stop';
  }

  /** True when the request line is a REST read of an exact path (GET): the listener hands it as a light view. */
  isRestRead(method: string, path: string): boolean {
    return method === 'GET' && this.#byMethod.get(method)?.get(path)?.kind === 'read';
  }

  /** True when a GET there holds an event stream. */
  isStream(method: string, path: string): boolean {
    return method === 'GET' && this.find(method, path)?.kind === 'stream';
  }

  /** True when the request runs at once rather than in the turn queue: a stop, or a route that schedules its own work. */
  runsAtOnce(method: string, path: string): boolean {
    const route = this.find(method, path);
    return route !== undefined && (route.kind === 'stop' || ('ownTurns' in route && route.ownTurns === true));
  }

  /** The WebSocket route of a path, for the listener's 'upgrade' dispatcher. */
  upgradeAt(path: string): WebSocketRoute | undefined {
    const route = this.#byMethod.get('GET')?.get(path);
    return route?.kind === 'websocket' ? route : undefined;
  }

  /** The methods the operations answer on a path (a 405's Allow); undefined: no operation there. */
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
