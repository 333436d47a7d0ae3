import type { Server } from 'node:http';
import { Request as PonyfillRequest } from '@whatwg-node/fetch';
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { type AnyOperation, type AppState, type Catalog, hasRest, type RestOperation } from '../core/operation.ts';
import { type BeyondCaps, createApp, kindOf, type RouteMatch, type RouteTable, routeTable } from '../http/routes.ts';
import { docsAssetsOnDemand } from '../http/docs.ts';
import { openWebSocket } from '../http/websocket.ts';
import { admissionPolicy } from '../admission/front-door.ts';
import { createMcpFace } from '../mcp/face.ts';
import { namedTools } from '../mcp/names.ts';
import { mcpStopsPastGuesses, stopsOfBody } from '../mcp/past-guesses.ts';
import { createMcpEndpoint, MCP_METHODS, OAUTH_DISCOVERY_PATH, oauthDiscoveryResponse } from '../mcp/server.ts';
import { createTurnQueue, inOrder } from './request.ts';
import { createListener } from './listener.ts';
import { logLine } from '../logs/line.ts';
import { buildOpenApiDocument } from '../openapi/document.ts';
import { composeOptionsFor, composeServices } from '../app/compose.ts';
import type { Services } from '../app/services.ts';
import type { RobotContext } from '../ros/context.ts';
import type { Config } from '../settings/load.ts';
import { closeTrajectoryWorker, configureTrajectoryWorker } from '../trajectory/worker-pool.ts';
import { EVENTS_OPENAPI } from '../http/events-openapi.ts';
import { EVENTS_PATH, eventsHandler, type MakeEventRoom } from '../http/sse.ts';
import { UI_PUBLIC_PATH, uiRoutes } from '../ui/assets.ts';
import { safetyStateFor } from '../safety/store.ts';
import type { FoxgloveFace } from '../foxglove/start.ts';
import type { Clock } from '../clock.ts';

/** What a motion cancelled by shutdown answers. */
export const SHUTDOWN_REASON = 'the service is shutting down';
/** How long requests in flight get to be answered when the server closes. */
const IN_FLIGHT_GRACE_MS = 2000;

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/**
 * One armgate app: everything but the socket. `fetch` is what the HTTP server serves (each request stamped with the
 * arbiter's stop count on arrival, stops answered at once, the rest a few per turn of the event loop); `request`
 * answers a path in memory through the same `fetch`, as hono's `app.request()` does, so tests need no socket.
 */
export interface Armgate {
  /**
   * Serves a request; `address`: the client's (the socket's peer), '' in memory; `arrivedAtStop`: the listener's stamp;
   * `beyond`: the cap the listener found its connection beyond (it is answered 503; only the stops it holds run);
   * `match`: its route as the listener found it (found here when not given).
   */
  readonly fetch: (
    request: Request,
    address?: string,
    arrivedAtStop?: number,
    beyond?: BeyondCaps,
    match?: RouteMatch,
  ) => Promise<Response>;
  /** A request in memory: a path (or absolute URL, or Request) with fetch's init; Host is the configured address. */
  request(input: string | URL | Request, init?: RequestInit): Promise<Response>;
  readonly context: RobotContext;
  readonly services: Services;
  /** Cancels motions in flight, ends every runner and session, and closes the context. */
  close(): Promise<void>;
}

/** A running armgate server: the app and its listening socket. */
export interface RunningServer extends Armgate {
  readonly url: string;
  readonly server: Server;
  /** The Foxglove WebSocket server (settings' foxglove.enabled), on its own port; undefined when off. */
  readonly foxglove: FoxgloveFace | undefined;
  /** Closes connections, the listener, then the app. */
  close(): Promise<void>;
}

export interface StartOptions {
  /** Per-request log sink; defaults to stdout. */
  readonly log?: (fields: Record<string, string | number>) => void;
  /** A context built by the caller (tests: the rclnodejs context over its stand-in); it is closed with the server. */
  readonly context?: RobotContext;
  /** Variables added to the sequence runner's environment. */
  readonly runnerEnv?: Readonly<Record<string, string>>;
  /** The clock the app runs on (the simulator built here and a motion's progress); default the process clock. */
  readonly clock?: Clock;
}

async function createContext(config: Config, clock: Clock | undefined): Promise<RobotContext> {
  if (config.robot.backend === 'sim') {
    const { SimContext } = await import('../sim/context.ts');
    return SimContext.create(config, clock);
  }
  const { loadRclnodejs } = await import('../ros/rcl-load.ts');
  const rcl = await loadRclnodejs(process.env);
  if (!rcl.ok) throw new Error(rcl.error);
  const { RclContext } = await import('../ros/rcl-context.ts');
  return RclContext.create(config, rcl.value);
}

let appInProcess = false;

/** The order methods are listed in (RFC 9110's order of definition). */
const METHOD_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE'];

/**
 * Every method some route serves, for `OPTIONS *`: the active operations' methods, the MCP endpoint's, GET (the docs,
 * the event stream, the live page) and OPTIONS (CORS preflights).
 */
export function methodsServed(active: readonly RestOperation[]): string[] {
  const served = new Set<string>(['GET', 'OPTIONS', ...MCP_METHODS, ...active.map((op) => op.rest.method)]);
  return METHOD_ORDER.filter((method) => served.has(method));
}

/** The operations of the routes the endpoints file leaves enabled (an entry with `enabled: false` removes its route). */
export function activeOperations(
  config: Pick<Config, 'routes'>,
  operations: readonly RestOperation[],
): readonly RestOperation[] {
  return activeFiles(
    config,
    operations.map((operation) => ({ operation })),
  ).map((file) => file.operation);
}

/** The handler files of the routes the endpoints file leaves enabled. */
function activeFiles<F extends { readonly operation: RestOperation }>(
  config: Pick<Config, 'routes'>,
  files: readonly F[],
): readonly F[] {
  const off = new Set(config.routes.filter((r) => !r.enabled).map((r) => `${r.method} ${r.path}`));
  return files.filter(({ operation: { rest } }) => !off.has(`${rest.method} ${rest.path}`));
}

/** The MCP tools of the active operations, named as armgate.mcp.tool_names says. */
function activeTools(config: Pick<Config, 'routes' | 'mcp'>, active: readonly RestOperation[], stop: AnyOperation) {
  // The stack's server had a tool for its POST /robot/stop: with its names, that is one more name of stop.
  const robotStop = active.find((op) => op.rest.path === '/robot/stop');
  return namedTools(active, config.mcp.toolNames, robotStop ? [{ method: 'POST', path: '/robot/stop', op: stop }] : []);
}

/** Builds the context, the services and the app serving `catalog` (no socket); close it with `close()`. */
export async function createArmgate(config: Config, catalog: Catalog, options: StartOptions = {}): Promise<Armgate> {
  const {
    quiesce,
    release,
    routes: _routes,
    startFoxglove: _startFoxglove,
    methods: _methods,
    makeEventRoom: _makeEventRoom,
    ...app
  } = await assemble(config, catalog, options);
  let closing: Promise<void> | undefined;
  return {
    ...app,
    close() {
      closing ??= quiesce().then(release);
      return closing;
    },
  };
}

/** An app in two steps of closing: `quiesce` ends the work (motions, runners, sessions), `release` frees the rest. */
interface Assembled extends Omit<Armgate, 'close'> {
  /** The route table: what the listener reads of each request line (stops, event streams, REST reads). */
  readonly routes: RouteTable;
  /** Starts the Foxglove face when the settings enable it (a server of its own port: startServer calls it). */
  readonly startFoxglove: () => Promise<FoxgloveFace | undefined>;
  /** Every method some route serves (`OPTIONS *`). */
  readonly methods: readonly string[];
  /** At web.limits.max_event_clients, ends the /events stream stalled longest to make room (lib/http/sse.ts). */
  readonly makeEventRoom: MakeEventRoom;
  quiesce(): Promise<void>;
  release(): Promise<void>;
}

async function assemble(config: Config, catalog: Catalog, options: StartOptions): Promise<Assembled> {
  // The ROS context is the one singleton of the process (the design card), made here once and handed to the faces in
  // every call's context: one app per process.
  if (appInProcess)
    throw new Error(
      'an armgate server is already running in this process (one app per process: the ROS context is shared); close it before starting another',
    );
  appInProcess = true;
  let safety = safetyStateFor(config);
  if (!safety.ok && config.robot.backend === 'sim') {
    appInProcess = false;
    throw new Error(safety.error);
  }
  let context: RobotContext;
  try {
    context = options.context ?? (await createContext(config, options.clock));
  } catch (e) {
    appInProcess = false;
    throw e;
  }
  if (!safety.ok) {
    // On ros2 the envelope's TCP chain may be in the stack's URDF only (its `tcp` link): read robot_description.
    const stackUrdf = await context.robotDescription?.();
    if (stackUrdf?.ok) safety = safetyStateFor({ ...config, robotDescriptionXml: stackUrdf.value });
    if (safety.ok) context.useSafety?.(safety.value);
    else {
      await context.close();
      appInProcess = false;
      throw new Error(
        `${safety.error}${stackUrdf && !stackUrdf.ok ? `; the stack's robot_description could not be read either: ${stackUrdf.error.message}` : ''}`,
      );
    }
  }
  // The checker takes as many CSV uploads as the listener receives at once.
  configureTrajectoryWorker(config.web.limits);
  const composed = composeServices(
    context,
    composeOptionsFor(config, safety.value, {
      ...(options.runnerEnv ? { runnerEnv: options.runnerEnv } : {}),
      ...(options.clock ? { clock: options.clock } : {}),
    }),
  );
  const { services } = composed;
  const { arbiter, events, sequences } = services;
  /** Undoes the module state above and closes the context; the process may start an app again. */
  const release = async () => {
    try {
      await composed.close();
      await closeTrajectoryWorker();
      await context.close();
    } finally {
      appInProcess = false;
    }
  };
  const admission = admissionPolicy(config.web);
  const files = activeFiles(config, catalog.files);
  const active = files.map((file) => file.operation);
  // What every call's context carries besides the call's own facts: the faces build the rest.
  const state: AppState = { services, ros: context };
  const tools = activeTools(config, active, catalog.stop);
  const confirmMotion = config.mcp.confirmMotion;
  // Stop wins: POST /stop is handled the moment its request is read; other requests run a few per turn of the
  // event loop (lib/server/request.ts), so the loop polls for it between batches however many readers there are.
  // MCP requests queue themselves once their body is read, so that the stop tool and cancellations run at once too.
  const inTurn = createTurnQueue();
  const mcp = createMcpEndpoint(admission, {
    createServer: () => createMcpFace({ state, tools, resources: catalog.resources, confirmMotion }),
    streamToolCalls: confirmMotion,
    schedule: inTurn,
    // The sessions' idleness on the app's clock (a stepped one in tests).
    ...(options.clock ? { clock: options.clock } : {}),
    // The tools that stop run at once too: those whose operation's route is of the kind 'stop' (lib/http/routes.ts).
    stopTools: new Set(tools.filter((tool) => hasRest(tool.op) && kindOf(tool.op) === 'stop').map((tool) => tool.name)),
    // A stop tool's call in a POST refused for its form or its session is carried out all the same (stop wins).
    refusedStops: stopsOfBody(tools, state),
  });
  // The live page draws the stack's own URDF when the context can read it (ros2), else the endpoints file's.
  const ui = await uiRoutes(config.robotDescriptionXml, context.robotDescription?.bind(context));
  const log = options.log ?? logLine;
  // The WebSocket routes of the catalog whose operation is served (GET /robot/jog with POST /robot/jog).
  const eventStreams = eventsHandler(events, { stallMs: config.web.limits.eventStallMs, log, clock: options.clock });
  const sockets = (catalog.websockets ?? [])
    .filter((file) => active.includes(file.operation))
    .map((file) => ({ path: file.path, ...openWebSocket(file, { state, admission, tokens: config.web.tokens, log }) }));
  // The one route table: the handler files' routes, then the routes mounted beside them (the MCP endpoint's POST
  // schedules its own work once its body is read, so that a stop tool and a cancellation run at once), then the
  // WebSocket routes (the listener's upgrade dispatcher reads them).
  const routes = routeTable(
    files,
    [
      // Past the guess limit, a right token's stop tool call is carried out all the same (lib/mcp/past-guesses.ts).
      {
        path: '/mcp/mcp',
        handler: mcp.handler,
        ownTurns: ['POST'],
        stopsPastGuesses: mcpStopsPastGuesses(tools, state),
      },
      {
        path: EVENTS_PATH,
        handler: eventStreams,
        kind: 'stream',
      },
      { path: '/ui/robot.urdf', handler: ui.robotDescription },
      { path: '/ui/package/*', handler: ui.packageFile },
    ],
    sockets,
  );
  const app = createApp({
    routes,
    state,
    token: config.web.token,
    tokens: config.web.tokens,
    ...(state.services.guesses ? { guesses: state.services.guesses } : {}),
    admission,
    docs: docsAssetsOnDemand(),
    openApiDocument: () => buildOpenApiDocument(active, config.limits, EVENTS_OPENAPI),
    // OAuth discovery answers 404 without a token: a 401 there makes clients such as mcp-remote start OAuth registration.
    open: [
      { path: OAUTH_DISCOVERY_PATH, respond: oauthDiscoveryResponse },
      // The live page's shell and modules need no token (its data does), as /docs.
      { path: UI_PUBLIC_PATH, respond: ui.shell },
    ],
    ...(options.log ? { log: options.log } : {}),
  });
  // Each request stamped with the arbiter's count of stops on arrival, stops at once, the rest in turns (lib/server/request.ts).
  const fetch = inOrder(app, inTurn, { routes, arbiter, events });
  const origin = `http://${config.web.host.includes(':') ? `[${config.web.host}]` : config.web.host}:${config.web.port || DEFAULT_PORT}`;
  const startFoxglove = async (): Promise<FoxgloveFace | undefined> => {
    if (!config.foxglove) return undefined;
    const { startFoxgloveFace } = await import('../foxglove/start.ts');
    return startFoxgloveFace(config, state, active, log);
  };
  return {
    fetch,
    routes,
    startFoxglove,
    methods: methodsServed(active),
    makeEventRoom: eventStreams.makeRoom,
    request: (input, init) => fetch(inMemoryRequest(origin, input, init)),
    context,
    services,
    async quiesce() {
      // WebSocket connections end first (a jog socket closing brakes its jog).
      for (const socket of sockets) socket.close();
      // A move in flight is cancelled (its answer: success false, "the service is shutting down") and every runner ended.
      arbiter.revoke(SHUTDOWN_REASON);
      // Event streams end first: an open stream would keep its connection busy until the grace period ends.
      events.close();
      // Not waiting for a stop service that is not there (a ros2 stack absent): SIGTERM would take server_wait_s.
      await context.callStop({ waitForServer: false });
      await sequences.stop();
      await mcp.close();
    },
    release,
  };
}

/** The port an app answers on in memory when its settings ask for an ephemeral one (0). */
const DEFAULT_PORT = 8007;

/**
 * A Request as a client sends one: absolute URL (a path is taken relative to `origin`) and a Host header. The platform's
 * Request encodes a body (a FormData above all) exactly as its fetch would on a socket; a text body is taken by the
 * Request the server's adapter makes of a request with a body (@whatwg-node/fetch's), as on a socket, which holds
 * the text as it is where the platform's made a stream of it (~30 us a request).
 */
function inMemoryRequest(origin: string, input: string | URL | Request, init?: RequestInit): Request {
  const url = typeof input === 'string' && input.startsWith('/') ? `${origin}${input}` : input;
  const request =
    input instanceof Request && init === undefined
      ? input
      : typeof init?.body === 'string' && !(url instanceof Request)
        ? (new PonyfillRequest(url, init) as Request)
        : new Request(url, init);
  if (!request.headers.has('host')) request.headers.set('host', new URL(request.url).host);
  return request;
}

/**
 * The old generation may grow to twice what the last full collection left alive, no more. V8 otherwise picks a factor
 * of up to 4 from its measured speeds and keeps what it grew: under steady work (100,000 mixed requests) the server's
 * RSS rose 34-47 MB after the first 10,000 though the live heap stayed ~35 MB; with a factor of 2 it rose 2-10 MB, at
 * about the same CPU per request (docs/benchmarks.md, memory under work). V8 reads the factor at each collection; a
 * process serving armgate sets it when it starts listening (a setting of the whole process, as the server is).
 */
export const HEAP_GROWING_PERCENT = 100;

/** Builds the app serving `catalog` and listens on the configured host and port. */
export async function startServer(
  config: Config,
  catalog: Catalog,
  options: StartOptions = {},
): Promise<RunningServer> {
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  const { quiesce, release, routes, startFoxglove, methods, makeEventRoom, ...app } = await assemble(
    config,
    catalog,
    options,
  );
  const listener = createListener({
    fetch: app.fetch,
    arbiter: app.services.arbiter,
    log: options.log ?? logLine,
    limits: config.web.limits,
    routes,
    methods,
    makeEventRoom,
  });
  const server = listener.server;
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.web.port, config.web.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (e) {
    // Could not listen (port in use, address not available): release what start-up created.
    await quiesce();
    await release();
    throw e;
  }
  let foxglove: FoxgloveFace | undefined;
  try {
    foxglove = await startFoxglove();
  } catch (e) {
    server.close();
    listener.close();
    await quiesce();
    await release();
    throw new Error(`foxglove: ${(e as Error).message}`);
  }
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  let closing: Promise<void> | undefined;
  return {
    ...app,
    url: `http://${host}:${address.port}`,
    server,
    foxglove,
    close() {
      closing ??= (async () => {
        // The Foxglove connections end first (a motion one of them started is stopped with the rest below).
        await foxglove?.close();
        // WebSockets, motions, runners and sessions end first; requests in flight are answered before the connections close.
        await quiesce();
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        // A keep-alive connection whose answer ends during the grace period (an event stream the bus ended) goes at once.
        const sweep = setInterval(() => server.closeIdleConnections(), 20);
        await Promise.race([closed, delay(IN_FLIGHT_GRACE_MS)]);
        clearInterval(sweep);
        server.closeAllConnections();
        await closed;
        listener.close();
        await release();
      })();
      return closing;
    },
  };
}
