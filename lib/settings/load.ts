import { readFile, stat } from 'node:fs/promises';
import { isIP } from 'node:net';
import path from 'node:path';
import * as v from 'valibot';
import { parse as parseYaml } from 'yaml';
import { normalizeOrigin } from '../net/address.ts';
import { findLimitViolation, type JointLimits, parseJointLimits } from '../robot/limits.ts';
import { type GroupState, parseGroupStates } from '../robot/srdf.ts';
import { parsePositionsFile, type TaughtPosition } from '../positions/taught.ts';
import { type EndpointsFile, EndpointsFileSchema, resolveEndpoints } from './endpoints.ts';
import { isOriginalEndpoints, type RouteSwitch, readOriginalEndpoints } from './endpoints-original.ts';
import { err, ok, type Result } from '../result.ts';
import { type FoxgloveConfig, foxgloveConfig } from './foxglove.ts';
import { describeIssue } from '../describe-issue.ts';
import { resolveFileRef } from './resolve.ts';
import { armgateSettings, type ArmgateSettings, SettingsFileSchema } from './schema.ts';

/** web.limits: what clients may hold of the service (docs/safe-deployment.md). */
export interface WebLimits {
  /** Open connections in all; beyond it only POST /stop is served (503 with Retry-After). */
  readonly maxConnections: number;
  /** Open connections from one client address; beyond it only POST /stop is served. */
  readonly maxConnectionsPerClient: number;
  /** Open /events streams. */
  readonly maxEventClients: number;
  /** How long an /events stream may take no byte while bytes wait for it (ms); then it is ended (lib/http/sse.ts). */
  readonly eventStallMs: number;
  /** Multipart uploads being received at once. */
  readonly maxUploads: number;
  /** Time for a request's headers to arrive (ms). */
  readonly headersTimeoutMs: number;
  /** Time for a whole request (headers and body) to arrive (ms). */
  readonly requestTimeoutMs: number;
  /** Time a body may take before its rate is checked (ms). */
  readonly bodyGraceMs: number;
  /** Slowest average rate of a body after the grace (bytes/s); slower is cut with 408. */
  readonly bodyMinBytesPerS: number;
  /** Retry-After of a 503 at a cap (s). */
  readonly retryAfterS: number;
  /** Longest a refused request's connection is drained after its 503 (ms; lib/server/own-answers.ts). */
  readonly lingeringTimeMs: number;
  /** Longest wait for the next bytes of a refused request's body while draining it (ms). */
  readonly lingeringTimeoutMs: number;
  /** Wrong tokens one client address may send before it is slowed (lib/auth/guesses.ts). */
  readonly tokenGuessBurst: number;
  /** Seconds per further wrong token once the burst is spent. */
  readonly tokenGuessRefillS: number;
}

/** A token the server accepts (web.token, ARMGATE_TOKEN, web.tokens): its name, the secret and its role. */
export interface TokenEntry {
  readonly name: string;
  readonly token: string;
  readonly role: 'read' | 'operate' | 'admin';
}

/** Everything start-up needs, validated: settings plus the files they reference. */
export interface Config {
  readonly settingsFile: string;
  readonly web: {
    readonly host: string;
    readonly port: number;
    /** undefined: no authentication. */
    readonly token: string | undefined;
    /** web.allowed_hosts: further Host names (optionally name:port) the server answers to. */
    readonly allowedHosts: readonly string[];
    /** web.cors_origins: origins of web front ends admitted cross-origin (normalized as browsers send them). */
    readonly corsOrigins: readonly string[];
    /** Every accepted token with its name and role: the admin token ('web.token', also from ARMGATE_TOKEN) and web.tokens. */
    readonly tokens: readonly TokenEntry[];
    /** web.limits: connection, stream and upload caps and the request timeouts. */
    readonly limits: WebLimits;
  };
  /** The safety envelope and the life of a plan (armgate.safety). */
  readonly safety: ArmgateSettings['safety'];
  /** The audit trail (armgate.audit; path resolved against the settings file's folder, '' for none). */
  readonly audit: { readonly path: string; readonly maxBytes: number; readonly reads: boolean };
  readonly robot: { readonly backend: 'sim' | 'ros2'; readonly positionDescriptions: Readonly<Record<string, string>> };
  readonly sim: ArmgateSettings['sim'];
  /** The jog's speeds and dead-man (armgate.jog). */
  readonly jog: ArmgateSettings['jog'];
  readonly sequences: { readonly bagRoot: string };
  /**
   * armgate.mcp: `toolNames` original names the tools as the stack's MCP server did (robot_joint_states_get, ...);
   * `confirmMotion` asks the person through MCP elicitation before a motion tool runs.
   */
  readonly mcp: { readonly toolNames: 'armgate' | 'original'; readonly confirmMotion: boolean };
  /** Routes the endpoints file switches on or off (the stack's list format); absent: all served. */
  readonly routes: readonly RouteSwitch[];
  /** Lines start-up prints for the operator (what of the stack's files armgate does not use, and why). */
  readonly notices: readonly string[];
  readonly endpoints: EndpointsFile;
  readonly limits: JointLimits;
  /** URDF text of the robot description. */
  readonly robotDescriptionXml: string;
  /** Group states read from the SRDF file, or undefined when the SRDF comes from a node parameter. */
  readonly groupStates: readonly GroupState[] | undefined;
  /** The Foxglove WebSocket server (the stack's `foxglove` block, `enabled: true`); undefined: not served. */
  readonly foxglove?: FoxgloveConfig | undefined;
  /** The taught positions (armgate.positions_file, resolved) and what the file held at start-up. */
  readonly positions: { readonly file: string; readonly taught: readonly TaughtPosition[] };
}

/** The default of armgate.positions_file, beside the settings file. */
export const DEFAULT_POSITIONS_FILE = 'positions.yaml';

/**
 * The taught positions of armgate.positions_file: none when the file does not exist yet; any other problem (it cannot
 * be read, malformed YAML, a bad entry) refuses start-up, since saving over it would lose what it held.
 */
async function readTaughtPositions(file: string, limits: JointLimits): Promise<Result<TaughtPosition[], string>> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return ok([]);
    return err(`armgate.positions_file: cannot read '${file}' (${code ?? 'error'})`);
  }
  const parsed = parsePositionsFile(text, limits);
  if (!parsed.ok)
    return err(
      `armgate.positions_file: '${file}' is not a valid positions file (${parsed.error}); armgate does not start over it, so that no taught position is lost: fix the file, or move it away to start with none`,
    );
  return parsed;
}

/** What start-up should do: serve with a config, or say the web server is disabled. */
export type LoadOutcome = { readonly kind: 'serve'; readonly config: Config } | { readonly kind: 'disabled' };

export interface LoadOptions {
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** `--port` on the command line. */
  readonly portOverride?: number;
  /** `--backend` on the command line: the settings' robot.backend (armgate.backend) replaced. */
  readonly backendOverride?: 'sim' | 'ros2';
}

/** True when the URDF text declares a link of that name. */
function hasLink(urdf: string, link: string): boolean {
  return new RegExp(`<link\\s+name\\s*=\\s*["']${link.replace(/[^\w-]/g, '\\$&')}["']`).test(urdf);
}

/** Fewest characters of a token (web.tokens entries; web.token and ARMGATE_TOKEN off loopback). */
export const MIN_TOKEN_LENGTH = 16;
/** Most characters of a token. */
export const MAX_TOKEN_LENGTH = 4096;

/** True for `localhost`, any 127.0.0.0/8 address and ::1. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost') return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  if (isIP(h) === 6) return h === '::1' || h === '0:0:0:0:0:0:0:1';
  return false;
}

async function readText(file: string, key: string): Promise<Result<string, string>> {
  try {
    return ok(await readFile(file, 'utf8'));
  } catch (e) {
    return err(`${key}: cannot read '${file}' (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}

/** How many parsed YAML texts are kept (the last used): a start reads three; tests load the same ones again and again. */
const PARSED_KEPT = 16;
/** YAML documents by their text: the same text parses to the same document (each caller gets its own copy). */
const parsedTexts = new Map<string, unknown>();

/** The document of a YAML text, from the memo when this text was parsed already; throws on malformed YAML. */
function parsedYaml(text: string): unknown {
  if (parsedTexts.has(text)) {
    const known = parsedTexts.get(text);
    parsedTexts.delete(text);
    parsedTexts.set(text, known);
    return structuredClone(known);
  }
  const doc: unknown = parseYaml(text, { prettyErrors: true });
  parsedTexts.set(text, doc);
  for (const oldest of parsedTexts.keys()) {
    if (parsedTexts.size <= PARSED_KEPT) break;
    parsedTexts.delete(oldest);
  }
  return structuredClone(doc);
}

function parseYamlText(text: string, key: string, file: string): Result<unknown, string> {
  try {
    const doc: unknown = parsedYaml(text) ?? {};
    if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
      return err(`${key}: expected a mapping of keys to values in '${file}'`);
    return ok(doc);
  } catch (e) {
    return err(`${key}: malformed YAML in '${file}': ${(e as Error).message.split('\n')[0]?.replace(/:$/, '')}`);
  }
}

async function loadRef(
  ref: string,
  key: string,
  baseDir: string,
  env: LoadOptions['env'],
): Promise<Result<{ file: string; text: string }, string>> {
  const resolved = await resolveFileRef(ref, baseDir, env?.AMENT_PREFIX_PATH);
  if (!resolved.ok) return err(`${key}: ${resolved.error}`);
  const text = await readText(resolved.value, key);
  return text.ok ? ok({ file: resolved.value, text: text.value }) : text;
}

/**
 * Reads and validates the root settings file and every file it references. Any problem comes
 * back as one message naming the settings key and the reason.
 */
export async function loadConfig(
  settingsFile: string,
  options: LoadOptions = {},
): Promise<Result<LoadOutcome, string>> {
  const env = options.env ?? process.env;
  const file = path.resolve(settingsFile);
  const dir = path.dirname(file);
  const text = await readText(file, 'settings');
  if (!text.ok) return text;
  const doc = parseYamlText(text.value, 'settings', file);
  if (!doc.ok) return doc;
  const parsed = v.safeParse(SettingsFileSchema, doc.value);
  if (!parsed.success) return err(describeIssue('', parsed.issues));
  const s = parsed.output;
  if (!s.web.enabled) return ok({ kind: 'disabled' });
  const own = armgateSettings(s);
  if (!own.ok) return err(own.error);
  const a = { ...own.value, backend: options.backendOverride ?? own.value.backend };
  const notices: string[] = [];

  const port = options.portOverride ?? s.web.port;
  const envToken = env.ARMGATE_TOKEN;
  const token = envToken !== undefined && envToken !== '' ? envToken : (s.web.token ?? '');
  if (token === '' && s.web.tokens.length === 0 && !isLoopbackHost(s.web.host)) {
    return err(
      `web.token: required when web.host is '${s.web.host}' (not a loopback address); set web.token (or web.tokens) or ARMGATE_TOKEN`,
    );
  }
  if (/\s/.test(token)) return err('web.token: must not contain whitespace');
  // The rule of web.tokens entries: an admin token off loopback has at least 16 characters (a short one is guessable).
  const tokenKey = envToken !== undefined && envToken !== '' ? 'ARMGATE_TOKEN' : 'web.token';
  if (token.length > MAX_TOKEN_LENGTH) return err(`${tokenKey}: at most ${MAX_TOKEN_LENGTH} characters`);
  if (token !== '' && token.length < MIN_TOKEN_LENGTH) {
    if (!isLoopbackHost(s.web.host))
      return err(
        `${tokenKey}: expected at least ${MIN_TOKEN_LENGTH} characters when web.host is '${s.web.host}' (not a loopback address), as every web.tokens entry; got ${token.length}`,
      );
    notices.push(
      `${tokenKey} has ${token.length} characters; it is accepted on loopback only (off loopback, as every web.tokens entry, at least ${MIN_TOKEN_LENGTH})`,
    );
  }
  const tokens: TokenEntry[] = token === '' ? [] : [{ name: 'web.token', token, role: 'admin' }];
  for (const [i, entry] of s.web.tokens.entries()) {
    if (tokens.some((t) => t.name === entry.name))
      return err(`web.tokens.${i}.name: '${entry.name}' is used twice; token names must be unique`);
    // Compared at start-up only, never per request; the message names the entries, never a token.
    if (tokens.some((t) => t.token === entry.token))
      return err(`web.tokens.${i}.token: the same token as another entry; every token must be different`);
    tokens.push({ name: entry.name, token: entry.token, role: entry.role });
  }

  const foxglove = foxgloveConfig(
    (doc.value as Record<string, unknown>).foxglove,
    a.foxglove,
    (f) => path.resolve(dir, f),
    notices,
  );
  if (!foxglove.ok) return foxglove;
  if (foxglove.value && tokens.length === 0 && !isLoopbackHost(foxglove.value.host))
    return err(
      `foxglove.address: '${foxglove.value.host}' is not a loopback address; set web.token (or web.tokens) or ARMGATE_TOKEN: the Foxglove server takes the same tokens`,
    );

  const endpointsRef = await loadRef(s.web.endpoints, 'web.endpoints', dir, env);
  if (!endpointsRef.ok) return endpointsRef;
  const endpointsDoc = parseYamlText(endpointsRef.value.text, 'web.endpoints', endpointsRef.value.file);
  if (!endpointsDoc.ok) return endpointsDoc;
  // Either armgate's endpoints map or the stack's list of routes (read into the same map).
  let endpointsMap = endpointsDoc.value as Record<string, unknown>;
  let routes: readonly RouteSwitch[] = [];
  const original = isOriginalEndpoints(endpointsMap);
  if (original) {
    const read = readOriginalEndpoints(endpointsMap, 'web.endpoints');
    if (!read.ok) return read;
    endpointsMap = read.value.map;
    routes = read.value.routes;
    notices.push(...read.value.notices);
  }
  const endpointsParsed = v.safeParse(EndpointsFileSchema, endpointsMap);
  if (!endpointsParsed.success) return err(describeIssue('web.endpoints', endpointsParsed.issues));
  // What the endpoints file leaves out, the stack's planning and controller blocks say; then the backend's defaults.
  const said = (key: string) => key in endpointsMap;
  const stack = {
    ...(!said('planning_group') && s.planning?.planning_group ? { planning_group: s.planning.planning_group } : {}),
    ...(!said('planning_frame') && s.planning?.default_frame ? { planning_frame: s.planning.default_frame } : {}),
    ...(!said('tcp_link') && s.planning?.pose_link ? { tcp_link: s.planning.pose_link } : {}),
  };
  const stackSrdf = !said('srdf') ? s.controller?.moveit?.srdf : undefined;
  let endpoints = resolveEndpoints({ ...endpointsParsed.output, ...stack }, a.backend);
  const endpointsDir = path.dirname(endpointsRef.value.file);

  const limitsRef = await loadRef(s.web.joint_limits, 'web.joint_limits', dir, env);
  if (!limitsRef.ok) return limitsRef;
  const limitsDoc = parseYamlText(limitsRef.value.text, 'web.joint_limits', limitsRef.value.file);
  if (!limitsDoc.ok) return limitsDoc;
  const limits = parseJointLimits(limitsDoc.value, endpoints.joint_names);
  if (!limits.ok) return err(`web.joint_limits: ${limits.error.replace(/^\.?/, '')}`);

  const urdf = await loadRef(endpoints.robot_description, 'web.endpoints.robot_description', endpointsDir, env);
  if (!urdf.ok) return urdf;
  // The simulator's model is the bundled URDF: a TCP link the stack names (its `tcp`) that the model does not have
  // leaves the model's own link, and the operator is told (armgate.sim.tool_offset places a tool).
  if (a.backend === 'sim' && (original || stack.tcp_link) && !hasLink(urdf.value.text, endpoints.tcp_link)) {
    const fallback = resolveEndpoints({ ...endpointsParsed.output, ...stack, tcp_link: undefined }, 'sim').tcp_link;
    notices.push(
      `${stack.tcp_link ? 'planning.pose_link' : 'web.endpoints (/robot/pose child_frame)'}: '${endpoints.tcp_link}' is not a link of the simulated model; the pose is the '${fallback}' link's (set armgate.sim.tool_offset for a tool)`,
    );
    endpoints = { ...endpoints, tcp_link: fallback };
  }

  let groupStates: GroupState[] | undefined;
  const srdfRef = stackSrdf
    ? { ref: stackSrdf, key: 'controller.moveit.srdf', base: dir }
    : 'file' in endpoints.srdf
      ? { ref: endpoints.srdf.file, key: 'web.endpoints.srdf.file', base: endpointsDir }
      : undefined;
  if (srdfRef) {
    const srdf = await loadRef(srdfRef.ref, srdfRef.key, srdfRef.base, env);
    if (!srdf.ok) return srdf;
    const states = parseGroupStates(srdf.value.text, endpoints.planning_group, endpoints.joint_names);
    if (!states.ok) return err(`${srdfRef.key}: ${states.error}`);
    groupStates = states.value;
    endpoints = { ...endpoints, srdf: { file: srdf.value.file } };
  }

  const positionsFile = path.resolve(dir, a.positions_file ?? DEFAULT_POSITIONS_FILE);
  const taught = await readTaughtPositions(positionsFile, limits.value);
  if (!taught.ok) return taught;
  // A folder that is not there is not an error until something is taught: the operator is told now.
  const positionsDir = path.dirname(positionsFile);
  if (
    !(await stat(positionsDir).then(
      (st) => st.isDirectory(),
      () => false,
    ))
  )
    notices.push(
      `armgate.positions_file: the folder '${positionsDir}' does not exist; saving a taught position fails until it does`,
    );

  const initial = a.sim.initial_position;
  if (a.backend === 'sim') {
    if (typeof initial === 'string') {
      const known = groupStates?.map((g) => g.name) ?? [];
      if (!known.includes(initial))
        return err(`sim.initial_position: unknown named position '${initial}' (known: ${known.join(', ')})`);
    } else {
      const outside = findLimitViolation(limits.value, initial);
      if (outside)
        return err(`sim.initial_position: joint ${outside.index + 1} value ${outside.value} is outside its limits`);
    }
  }

  // The whole request includes its headers (Node refuses to start a server otherwise, with a RangeError).
  const { headers_timeout_s: headersS, request_timeout_s: requestS } = s.web.limits;
  if (requestS < headersS)
    return err(
      `web.limits.request_timeout_s: ${requestS} s is shorter than web.limits.headers_timeout_s (${headersS} s); the whole request includes its headers`,
    );

  return ok({
    kind: 'serve',
    config: {
      settingsFile: file,
      web: {
        host: s.web.host,
        port,
        token: token === '' ? undefined : token,
        allowedHosts: s.web.allowed_hosts.map((h) => h.toLowerCase()),
        corsOrigins: s.web.cors_origins.map((o) => normalizeOrigin(o) ?? o),
        tokens,
        limits: {
          maxConnections: s.web.limits.max_connections,
          maxConnectionsPerClient: s.web.limits.max_connections_per_client,
          maxEventClients: s.web.limits.max_event_clients,
          eventStallMs: s.web.limits.event_stall_s * 1000,
          maxUploads: s.web.limits.max_uploads,
          headersTimeoutMs: s.web.limits.headers_timeout_s * 1000,
          requestTimeoutMs: s.web.limits.request_timeout_s * 1000,
          bodyGraceMs: s.web.limits.body_grace_s * 1000,
          bodyMinBytesPerS: s.web.limits.body_min_bytes_per_s,
          retryAfterS: s.web.limits.retry_after_s,
          lingeringTimeMs: s.web.limits.lingering_time_s * 1000,
          lingeringTimeoutMs: s.web.limits.lingering_timeout_s * 1000,
          tokenGuessBurst: s.web.limits.token_guess_burst,
          tokenGuessRefillS: s.web.limits.token_guess_refill_s,
        },
      },
      safety: a.safety,
      audit: {
        path: a.audit.path === '' ? '' : path.resolve(dir, a.audit.path),
        maxBytes: a.audit.max_bytes,
        reads: a.audit.reads,
      },
      robot: { backend: a.backend, positionDescriptions: a.position_descriptions },
      sim: a.sim,
      jog: a.jog,
      sequences: { bagRoot: path.resolve(dir, a.sequences.bag_root) },
      mcp: { toolNames: a.mcp.tool_names, confirmMotion: a.mcp.confirm_motion },
      routes,
      notices,
      endpoints,
      limits: limits.value,
      robotDescriptionXml: urdf.value.text,
      groupStates,
      foxglove: foxglove.value,
      positions: { file: positionsFile, taught: taught.value },
    },
  });
}
