// The walk of a request: the files of lib/ and handlers/ whose functions run to serve it, measured, not counted by hand.
// It starts armgate in this process on the simulator (its clock stepped: nothing runs between requests), warms the
// request up, then takes V8's precise coverage with call counts (node:inspector) around one request over a real
// socket, and lists the files whose functions ran for it (a count above 0 since the counts were reset), with the
// functions. `npm run house -- --walk 'GET /robot/joint_states'` prints it; tests/walk.test.ts holds the target.
//
// Two ways of counting, both measured: `new`, the request on a connection of its own (as curl sends one: connect, send,
// read the answer, close), so the work done per connection (accepting it, the caps' count of it, its close) counts;
// `kept`, the request on a connection kept alive (an earlier request on it already answered), as a poller sends it.
// A window of the same length without a request is measured too: what runs in it (background) is named apart.
import { Buffer } from 'node:buffer';
import { Session } from 'node:inspector/promises';
import { connect, type Socket } from 'node:net';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ROOT_URL = pathToFileURL(ROOT).href;

/** The token the walk's server takes (a deployment has one: authentication is on the walk). */
const TOKEN = 'walk-token-0123456789abcdef';

/** What the MCP walk's client sends as the SDK client does (its protocol version). */
const MCP_PROTOCOL_VERSION = '2025-11-25';

/** A request to walk: an HTTP request (method, path, JSON bodies used in turn), or an MCP tool call. */
export type WalkRequest =
  | { readonly kind: 'http'; readonly method: string; readonly path: string; readonly bodies: readonly unknown[] }
  | { readonly kind: 'mcp'; readonly tool: string; readonly args: readonly unknown[] };

/** Bodies used when a walk names none: a move alternates between two poses so that each one moves. */
const PRESET_BODIES: Readonly<Record<string, readonly unknown[]>> = {
  'POST /robot/move/joints': [
    { joints: [0.3, 0.2, 0, -1.4, 0, 1.5, 0], speed: 0.5 },
    { joints: [0, 0.3, 0, -1.6, 0, 1.3, 0], speed: 0.5 },
  ],
};

/**
 * Reads a walk: `METHOD /path [JSON body]` (a POST without a body: the preset bodies of its path, or none), or
 * `MCP tool [JSON arguments]` (a tools/call over the MCP endpoint, as the SDK client sends it).
 */
export function parseWalk(spec: string): WalkRequest {
  const match = /^\s*(\S+)\s+(\S+)\s*(.*)$/s.exec(spec);
  if (!match) throw new Error(`a walk is 'METHOD /path [JSON body]' or 'MCP tool [JSON arguments]': got '${spec}'`);
  const [, first = '', second = '', rest = ''] = match;
  const given = rest.trim() === '' ? undefined : JSON.parse(rest);
  if (first.toUpperCase() === 'MCP') return { kind: 'mcp', tool: second, args: [given ?? {}] };
  const method = first.toUpperCase();
  const bodies = given !== undefined ? [given] : (PRESET_BODIES[`${method} ${second}`] ?? []);
  return { kind: 'http', method, path: second, bodies };
}

/** A function that ran, and how many times. */
export interface FunctionRun {
  readonly name: string;
  readonly count: number;
}

/** A file of the walk: the project path and the functions of it that ran. */
export interface WalkFile {
  readonly file: string;
  readonly functions: readonly FunctionRun[];
}

/** One request walked one way: its answer's status, the files of lib/ and handlers/ it ran, and what else ran. */
export interface Walked {
  readonly connection: 'new' | 'kept';
  readonly status: number;
  readonly files: readonly WalkFile[];
  /** The packages (node_modules) whose functions ran, by name. */
  readonly packages: readonly string[];
}

export interface WalkReport {
  readonly request: string;
  readonly walks: readonly Walked[];
  /** The files whose functions ran in a window as long without a request (none: nothing ran but the request). */
  readonly background: readonly WalkFile[];
}

/** An answer read off the socket. */
interface Answer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** A client connection reading HTTP/1.1 answers (Content-Length or chunked), as curl reads one. */
class Connection {
  readonly #socket: Socket;
  #buffer = Buffer.alloc(0);
  #waiting: (() => void) | undefined;
  #closed = false;

  private constructor(socket: Socket) {
    this.#socket = socket;
    socket.on('data', (chunk: Buffer) => {
      this.#buffer = Buffer.concat([this.#buffer, chunk]);
      this.#waiting?.();
    });
    socket.on('close', () => {
      this.#closed = true;
      this.#waiting?.();
    });
    socket.on('error', () => {});
  }

  static open(port: number): Promise<Connection> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => resolve(new Connection(socket)));
      socket.once('error', reject);
    });
  }

  /** Sends a request and reads its answer; `meanwhile` runs while the answer has not come (the clock's steps). */
  async request(text: string, meanwhile?: () => Promise<void>): Promise<Answer> {
    this.#socket.write(text);
    for (;;) {
      const answer = this.#take();
      if (answer) return answer;
      if (this.#closed) throw new Error(`the connection closed before a whole answer: ${this.#buffer.toString()}`);
      const more = new Promise<void>((resolve) => {
        this.#waiting = resolve;
      });
      await (meanwhile ? Promise.race([more, meanwhile()]) : more);
      this.#waiting = undefined;
    }
  }

  /** A whole answer off the buffer, or undefined while it is not whole. */
  #take(): Answer | undefined {
    const buffer = this.#buffer;
    const headEnd = buffer.indexOf('\r\n\r\n');
    if (headEnd < 0) return undefined;
    const [statusLine = '', ...lines] = buffer.subarray(0, headEnd).toString('latin1').split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const status = Number(statusLine.split(' ')[1]);
    let at = headEnd + 4;
    let body: Buffer;
    if (headers['transfer-encoding']?.includes('chunked')) {
      const parts: Buffer[] = [];
      for (;;) {
        const lineEnd = buffer.indexOf('\r\n', at);
        if (lineEnd < 0) return undefined;
        const size = Number.parseInt(buffer.subarray(at, lineEnd).toString('latin1'), 16);
        if (buffer.length < lineEnd + 2 + size + 2) return undefined;
        parts.push(buffer.subarray(lineEnd + 2, lineEnd + 2 + size));
        at = lineEnd + 2 + size + 2;
        if (size === 0) break;
      }
      body = Buffer.concat(parts);
    } else {
      const length = Number(headers['content-length'] ?? 0);
      if (buffer.length < at + length) return undefined;
      body = buffer.subarray(at, at + length);
      at += length;
    }
    this.#buffer = buffer.subarray(at);
    return { status, headers, body: body.toString('utf8') };
  }

  /** Closes the connection as curl does once it has its answer (the server sees the client's FIN). */
  close(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    return new Promise((resolve) => {
      this.#socket.once('close', () => resolve());
      this.#socket.destroy();
    });
  }
}

/** A request's text, with Host and the token as curl sends them. */
function requestText(method: string, target: string, port: number, body?: unknown, extra: string[] = []): string {
  const text = body === undefined ? '' : JSON.stringify(body);
  const head = [
    `${method} ${target} HTTP/1.1`,
    `Host: 127.0.0.1:${port}`,
    'User-Agent: curl/8.5.0',
    `Authorization: Bearer ${TOKEN}`,
    ...extra,
    ...(body === undefined ? [] : ['Content-Type: application/json', `Content-Length: ${Buffer.byteLength(text)}`]),
  ];
  return `${head.join('\r\n')}\r\n\r\n${text}`;
}

/** The file of a script's URL relative to the project; undefined for what is not the project's own code. */
function projectFile(url: string): string | undefined {
  if (!url.startsWith(`${ROOT_URL}/`)) return undefined;
  const file = decodeURIComponent(url.slice(ROOT_URL.length + 1).replace(/\?.*$/, ''));
  return file.startsWith('lib/') || file.startsWith('handlers/') ? file : undefined;
}

/** The package a node_modules script belongs to (`@scope/name` or `name`). */
function packageOf(url: string): string | undefined {
  const at = url.lastIndexOf('/node_modules/');
  if (at < 0) return undefined;
  const parts = url.slice(at + '/node_modules/'.length).split('/');
  return parts[0]?.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
}

interface Coverage {
  readonly files: WalkFile[];
  readonly packages: string[];
}

/** What ran since the counts were last reset (taking precise coverage resets them). */
async function ranSince(session: Session): Promise<Coverage> {
  const { result } = await session.post('Profiler.takePreciseCoverage');
  const files = new Map<string, FunctionRun[]>();
  const packages = new Set<string>();
  for (const script of result) {
    // `__name`: the helper tsx's compiler adds to each module to keep names; it runs only inside the module's own code.
    const ran = script.functions.filter((fn) => (fn.ranges[0]?.count ?? 0) > 0 && fn.functionName !== '__name');
    if (ran.length === 0) continue;
    const file = projectFile(script.url);
    if (file === undefined) {
      const pkg = packageOf(script.url);
      if (pkg) packages.add(pkg);
      continue;
    }
    const runs = files.get(file) ?? [];
    for (const fn of ran)
      runs.push({
        name: fn.functionName || (fn.ranges[0]?.startOffset === 0 ? '(module)' : '(anonymous)'),
        count: fn.ranges[0]?.count ?? 0,
      });
    files.set(file, runs);
  }
  return {
    files: [...files].map(([file, functions]) => ({ file, functions })).sort((a, b) => a.file.localeCompare(b.file)),
    packages: [...packages].sort(),
  };
}

/** The period of the simulator's joint-state topic in the walk's settings (100 Hz), ms. */
const JOINT_STATE_PERIOD_MS = 10;

/** Lets work queued behind an answer run (log lines flushed, a connection's close handled): machine time, ms. */
const AFTERMATH_MS = 40;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Requests sent to warm each walk up before it is measured (a move's are slower: the clock runs it through). */
const WARM_UPS = { read: 5, move: 3 };

/**
 * Walks each request: starts armgate in this process on the simulator, warms each request up, and measures one of it
 * on a new connection and one on a connection kept alive, and a window without a request. One app per process: call
 * it where no other armgate app runs.
 */
export async function walk(requests: readonly WalkRequest[]): Promise<WalkReport[]> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  // Started before the app's modules load, so that every one of its functions is counted from its first call.
  await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
  // The app's log lines go to stdout (lib/logs/line.ts: the default sink, as `npm start` writes them): kept off the
  // terminal while the walk runs; anything else written meanwhile (a test runner's reports) goes through.
  const write = process.stdout.write;
  process.stdout.write = ((chunk: unknown, ...rest: unknown[]) =>
    typeof chunk === 'string' && chunk.startsWith('{"time":')
      ? true
      : (write as (...args: unknown[]) => boolean).call(process.stdout, chunk, ...rest)) as typeof process.stdout.write;
  try {
    const { SteppedClock } = await import('../lib/clock.ts');
    const { SimContext } = await import('../lib/sim/context.ts');
    const { startServer } = await import('../lib/server/start.ts');
    const { catalog } = await import('../handlers/index.ts');
    const { testConfig, withOwnPositionsFile } = await import('../tests/support/server.ts');
    const clock = new SteppedClock(0, Date.now());
    const own = await withOwnPositionsFile(await testConfig({ web: { token: TOKEN } }));
    const context = await SimContext.create(own.config, clock);
    const server = await startServer(own.config, catalog, { context, clock });
    const port = Number(new URL(server.url).port);
    /** Steps the clock by `ms` (the simulator runs a move on it) and lets what a step started run. */
    const step = async (ms = 2) => {
      await clock.advance(ms);
      await new Promise<void>((resolve) => setImmediate(resolve));
    };
    await clock.advance(50);
    try {
      const reports: WalkReport[] = [];
      for (const request of requests)
        reports.push(await walkOne(request, port, step, () => ranSince(session), server.server));
      return reports;
    } finally {
      await server.close();
      await own.cleanup();
    }
  } finally {
    process.stdout.write = write;
    await session.post('Profiler.stopPreciseCoverage');
    session.disconnect();
  }
}

/** Resolves once the server holds no connection (a closed one's close handled). */
async function noConnections(server: import('node:http').Server): Promise<void> {
  for (;;) {
    const count = await new Promise<number>((resolve) => server.getConnections((_e, n) => resolve(n)));
    if (count === 0) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

async function walkOne(
  request: WalkRequest,
  port: number,
  step: (ms?: number) => Promise<void>,
  ran: () => Promise<Coverage>,
  server: import('node:http').Server,
): Promise<WalkReport> {
  let turn = 0;
  /** The next request's text on a connection (an MCP call: in the session `sessionId` opened). */
  let sessionId: string | undefined;
  const next = (): string => {
    turn++;
    if (request.kind === 'http') {
      const body = request.bodies.length > 0 ? request.bodies[turn % request.bodies.length] : undefined;
      return requestText(request.method, request.path, port, body);
    }
    const args = request.args[turn % request.args.length];
    return requestText(
      'POST',
      '/mcp/mcp',
      port,
      { jsonrpc: '2.0', id: turn, method: 'tools/call', params: { name: request.tool, arguments: args } },
      mcpHeaders(sessionId),
    );
  };
  const moves = request.kind === 'http' && request.method !== 'GET';
  const meanwhile = moves ? () => step() : undefined;
  // Before each request, a new joint state (a period of the simulator's 100 Hz topic): a request finds the state it
  // answers new, as one does in service (a client reads at most as often as the topic publishes, curl far less).
  const newState = () => step(JOINT_STATE_PERIOD_MS);
  if (request.kind === 'mcp') sessionId = await openMcpSession(port);
  const send = async (connection: Connection) => {
    await newState();
    const answer = await connection.request(next(), meanwhile);
    if (answer.status >= 400) throw new Error(`${describe(request)} answered ${answer.status}: ${answer.body}`);
    return answer;
  };
  /** The measured request: its new joint state came before the window. */
  const measured = async (connection: Connection) => {
    const answer = await connection.request(next(), meanwhile);
    if (answer.status >= 400) throw new Error(`${describe(request)} answered ${answer.status}: ${answer.body}`);
    return answer;
  };
  // Warm-up: both ways, so that nothing done once (a lazy import, a cache filled) is on the walk.
  const kept = await Connection.open(port);
  for (let k = 0; k < (moves ? WARM_UPS.move : WARM_UPS.read); k++) {
    await send(kept);
    const fresh = await Connection.open(port);
    await send(fresh);
    await fresh.close();
  }
  await kept.close();
  await noConnections(server);
  await sleep(AFTERMATH_MS);
  // Background: a window as long as a request's, with nothing sent.
  await ran();
  await sleep(AFTERMATH_MS);
  const background = (await ran()).files;
  // A new connection, as curl sends a request: connect, send, read, close.
  const walks: Walked[] = [];
  {
    await newState();
    await ran();
    const connection = await Connection.open(port);
    const answer = await measured(connection);
    await connection.close();
    await noConnections(server);
    await sleep(AFTERMATH_MS);
    walks.push({ connection: 'new', status: answer.status, ...(await ran()) });
  }
  // A connection kept alive: an answered request on it before.
  {
    const connection = await Connection.open(port);
    await send(connection);
    await newState();
    await sleep(AFTERMATH_MS);
    await ran();
    const answer = await measured(connection);
    await sleep(AFTERMATH_MS);
    walks.push({ connection: 'kept', status: answer.status, ...(await ran()) });
    await connection.close();
  }
  return { request: describe(request), walks, background };
}

function mcpHeaders(sessionId: string | undefined): string[] {
  return [
    'Accept: application/json, text/event-stream',
    `mcp-protocol-version: ${MCP_PROTOCOL_VERSION}`,
    ...(sessionId ? [`mcp-session-id: ${sessionId}`] : []),
  ];
}

/** Opens an MCP session as the SDK client does (initialize, then the initialized notification); its id. */
async function openMcpSession(port: number): Promise<string> {
  const connection = await Connection.open(port);
  const init = await connection.request(
    requestText(
      'POST',
      '/mcp/mcp',
      port,
      {
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: {
          protocolVersion: MCP_PROTOCOL_VERSION,
          capabilities: {},
          clientInfo: { name: 'walk', version: '1' },
        },
      },
      mcpHeaders(undefined),
    ),
  );
  const id = init.headers['mcp-session-id'];
  if (init.status !== 200 || !id) throw new Error(`MCP initialize answered ${init.status}: ${init.body}`);
  const initialized = await connection.request(
    requestText('POST', '/mcp/mcp', port, { jsonrpc: '2.0', method: 'notifications/initialized' }, mcpHeaders(id)),
  );
  if (initialized.status !== 202) throw new Error(`MCP initialized answered ${initialized.status}`);
  await connection.close();
  return id;
}

function describe(request: WalkRequest): string {
  return request.kind === 'http' ? `${request.method} ${request.path}` : `MCP tools/call ${request.tool}`;
}

/** The walk as text: each way's files with the functions that ran (name x count), and the packages. */
export function formatWalk(report: WalkReport, withFunctions = true): string {
  const lines: string[] = [];
  for (const walked of report.walks) {
    const how = walked.connection === 'new' ? 'on a new connection (as curl)' : 'on a connection kept alive';
    lines.push(`${report.request} ${how}: ${walked.status}, ${walked.files.length} files of lib/ and handlers/`);
    for (const { file, functions } of walked.files)
      lines.push(
        withFunctions
          ? `  ${file}: ${functions.map((f) => (f.count > 1 ? `${f.name} x${f.count}` : f.name)).join(', ')}`
          : `  ${file}`,
      );
    lines.push(`  packages: ${walked.packages.join(', ') || 'none'}`);
  }
  lines.push(
    report.background.length === 0
      ? '  background (a window as long, no request): nothing of lib/ or handlers/ ran'
      : `  background (a window as long, no request): ${report.background.map((f) => f.file).join(', ')}`,
  );
  return lines.join('\n');
}

/**
 * `--walk SPEC` (repeatable) from the command line; `--files-only`: the files without their functions; `--json`: the
 * reports as one line of JSON.
 */
export async function walkMain(argv: readonly string[]): Promise<number> {
  const specs: string[] = [];
  for (let k = 0; k < argv.length; k++)
    if (argv[k] === '--walk' && argv[k + 1] !== undefined) specs.push(argv[++k] as string);
  if (specs.length === 0) specs.push('GET /robot/joint_states');
  const reports = await walk(specs.map(parseWalk));
  if (argv.includes('--json')) console.log(JSON.stringify(reports));
  else for (const report of reports) console.log(formatWalk(report, !argv.includes('--files-only')));
  return 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url))
  process.exitCode = await walkMain(process.argv.slice(2));
