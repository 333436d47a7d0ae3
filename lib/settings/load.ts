import { readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import path from 'node:path';
import * as v from 'valibot';
import { parse as parseYaml } from 'yaml';
import type { TokenEntry } from '../http/auth.ts';
import { normalizeOrigin } from '../http/origin.ts';
import { type JointLimits, parseJointLimits } from '../robot/limits.ts';
import { type GroupState, parseGroupStates } from '../robot/srdf.ts';
import { type EndpointsFile, EndpointsFileSchema, resolveEndpoints } from '../ros/endpoints.ts';
import { err, ok, type Result } from '../result.ts';
import { describeIssue } from './issues.ts';
import { resolveFileRef } from './resolve.ts';
import { type SettingsFile, SettingsFileSchema } from './schema.ts';

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
  };
  /** The safety envelope and the life of a plan (the `safety` block). */
  readonly safety: SettingsFile['safety'];
  /** The audit trail (`audit`; path resolved against the settings file's folder, '' for none). */
  readonly audit: { readonly path: string; readonly maxBytes: number; readonly reads: boolean };
  /** The MCP face's switches. */
  readonly mcp: { readonly confirmMotion: boolean };
  readonly robot: { readonly backend: 'sim' | 'ros2'; readonly positionDescriptions: Readonly<Record<string, string>> };
  readonly sim: SettingsFile['sim'];
  readonly sequences: { readonly bagRoot: string };
  readonly endpoints: EndpointsFile;
  readonly limits: JointLimits;
  /** URDF text of the robot description. */
  readonly robotDescriptionXml: string;
  /** Group states read from the SRDF file, or undefined when the SRDF comes from a node parameter. */
  readonly groupStates: readonly GroupState[] | undefined;
}

/** What start-up should do: serve with a config, or say the web server is disabled. */
export type LoadOutcome = { readonly kind: 'serve'; readonly config: Config } | { readonly kind: 'disabled' };

export interface LoadOptions {
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** `--port` on the command line. */
  readonly portOverride?: number;
}

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

function parseYamlText(text: string, key: string, file: string): Result<unknown, string> {
  try {
    const doc: unknown = parseYaml(text, { prettyErrors: true }) ?? {};
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

  const port = options.portOverride ?? s.web.port;
  const envToken = env.ARMGATE_TOKEN;
  const token = envToken !== undefined && envToken !== '' ? envToken : (s.web.token ?? '');
  if (token === '' && s.web.tokens.length === 0 && !isLoopbackHost(s.web.host)) {
    return err(
      `web.token: required when web.host is '${s.web.host}' (not a loopback address); set web.token (or web.tokens) or ARMGATE_TOKEN`,
    );
  }
  if (/\s/.test(token)) return err('web.token: must not contain whitespace');
  const tokens: TokenEntry[] = token === '' ? [] : [{ name: 'web.token', token, role: 'admin' }];
  for (const [i, entry] of s.web.tokens.entries()) {
    if (tokens.some((t) => t.name === entry.name))
      return err(`web.tokens.${i}.name: '${entry.name}' is used twice; token names must be unique`);
    // Compared at start-up only, never per request; the message names the entries, never a token.
    if (tokens.some((t) => t.token === entry.token))
      return err(`web.tokens.${i}.token: the same token as another entry; every token must be different`);
    tokens.push({ name: entry.name, token: entry.token, role: entry.role });
  }

  const endpointsRef = await loadRef(s.web.endpoints, 'web.endpoints', dir, env);
  if (!endpointsRef.ok) return endpointsRef;
  const endpointsDoc = parseYamlText(endpointsRef.value.text, 'web.endpoints', endpointsRef.value.file);
  if (!endpointsDoc.ok) return endpointsDoc;
  const endpointsParsed = v.safeParse(EndpointsFileSchema, endpointsDoc.value);
  if (!endpointsParsed.success) return err(describeIssue('web.endpoints', endpointsParsed.issues));
  // tcp_link and srdf left out take the backend's defaults (the real stack's `tcp` and move_group's SRDF on ros2).
  const endpoints = resolveEndpoints(endpointsParsed.output, s.robot.backend);
  const endpointsDir = path.dirname(endpointsRef.value.file);

  const limitsRef = await loadRef(s.web.joint_limits, 'web.joint_limits', dir, env);
  if (!limitsRef.ok) return limitsRef;
  const limitsDoc = parseYamlText(limitsRef.value.text, 'web.joint_limits', limitsRef.value.file);
  if (!limitsDoc.ok) return limitsDoc;
  const limits = parseJointLimits(limitsDoc.value, endpoints.joint_names);
  if (!limits.ok) return err(`web.joint_limits: ${limits.error.replace(/^\.?/, '')}`);

  const urdf = await loadRef(endpoints.robot_description, 'web.endpoints.robot_description', endpointsDir, env);
  if (!urdf.ok) return urdf;

  let groupStates: GroupState[] | undefined;
  if ('file' in endpoints.srdf) {
    const srdf = await loadRef(endpoints.srdf.file, 'web.endpoints.srdf.file', endpointsDir, env);
    if (!srdf.ok) return srdf;
    const states = parseGroupStates(srdf.value.text, endpoints.planning_group, endpoints.joint_names);
    if (!states.ok) return err(`web.endpoints.srdf.file: ${states.error}`);
    groupStates = states.value;
  }

  const initial = s.sim.initial_position;
  if (s.robot.backend === 'sim') {
    if (typeof initial === 'string') {
      const known = groupStates?.map((g) => g.name) ?? [];
      if (!known.includes(initial))
        return err(`sim.initial_position: unknown named position '${initial}' (known: ${known.join(', ')})`);
    } else {
      const outside = initial.findIndex(
        (q, i) => q < (limits.value.minRad[i] ?? -Infinity) || q > (limits.value.maxRad[i] ?? Infinity),
      );
      if (outside >= 0)
        return err(`sim.initial_position: joint ${outside + 1} value ${initial[outside]} is outside its limits`);
    }
  }

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
      },
      safety: s.safety,
      audit: {
        path: s.audit.path === '' ? '' : path.resolve(dir, s.audit.path),
        maxBytes: s.audit.max_bytes,
        reads: s.audit.reads,
      },
      mcp: { confirmMotion: s.mcp.confirm_motion },
      robot: { backend: s.robot.backend, positionDescriptions: s.robot.position_descriptions },
      sim: s.sim,
      sequences: { bagRoot: path.resolve(dir, s.sequences.bag_root) },
      endpoints,
      limits: limits.value,
      robotDescriptionXml: urdf.value.text,
      groupStates,
    },
  });
}
