import * as v from 'valibot';
import { normalizeOrigin, parseHost } from '../net/address.ts';
import { between, count, aboveZero, finite, flag, nonEmptyText, port } from './fields.ts';
import { ArmgateFoxgloveSchema } from './foxglove.ts';

// ---- Safe autonomy (issue 15): web.tokens, safety, audit, mcp. All of its settings are declared here. ----

const point3 = (what: string) =>
  v.pipe(v.array(finite(`coordinate in metres`)), v.length(3, `expected ${what} as [x, y, z] in metres`));

/** A box [min, max] with min below max on every axis. */
const boxEntries = { min: point3('the lower corner'), max: point3('the upper corner') };
const orderedBox = <T extends { min: number[]; max: number[] }>(box: T) =>
  box.min.every((m, i) => m < (box.max[i] ?? 0));
const ORDERED_MESSAGE = 'expected min below max on every axis';
/** The name of a keep-out box or an obstacle. */
const boxName = v.pipe(
  v.string('expected a name'),
  v.regex(/^[A-Za-z0-9_.-]{1,64}$/, 'expected 1..64 letters, digits, _ . -'),
);

/** web.tokens: further tokens with a name and a role (web.token and ARMGATE_TOKEN are admin). */
const TokensSchema = v.optional(
  v.pipe(
    v.array(
      v.strictObject({
        name: v.pipe(
          v.string('expected a name'),
          v.regex(/^[A-Za-z0-9_-]{1,64}$/, 'expected 1..64 letters, digits, _ or -'),
        ),
        token: v.pipe(
          v.string('expected a string'),
          v.minLength(16, 'expected at least 16 characters'), // MIN_TOKEN_LENGTH of lib/settings/load.ts
          v.maxLength(4096, 'at most 4096 characters'),
          v.regex(/^\S+$/, 'must not contain whitespace'),
        ),
        role: v.picklist(['read', 'operate', 'admin'], "expected 'read', 'operate' or 'admin'"),
      }),
      'expected a list of {name, token, role}',
    ),
    v.maxLength(256, 'at most 256 tokens'),
  ),
  [],
);

/** safety: the envelope every motion source is held to, and the life of a plan. */
const SafetySchema = v.strictObject({
  workspace: v.optional(v.pipe(v.strictObject(boxEntries), v.check(orderedBox, ORDERED_MESSAGE))),
  keep_out: v.optional(
    v.pipe(
      v.array(
        v.pipe(
          v.strictObject({
            name: boxName,
            ...boxEntries,
          }),
          v.check(orderedBox, ORDERED_MESSAGE),
        ),
      ),
      v.maxLength(64, 'at most 64 keep-out boxes'),
    ),
    [],
  ),
  link_radius_m: between('distance in metres', 0, 0.5, ' m', 0.08),
  plan_ttl_s: between('seconds', 1, 3600, ' s', 60),
  /** Stop a motion whose caller is gone (its HTTP connection closed, an MCP call abandoned); see lib/control/dead-man.ts. */
  dead_man: flag(true),
});

/** audit: the audit trail file (JSON lines); '' means none. */
const AuditSchema = v.strictObject({
  path: v.optional(v.string('expected a file path'), ''),
  max_bytes: v.optional(
    v.pipe(v.number('expected bytes'), v.integer('expected an integer'), v.minValue(4096, 'expected at least 4096')),
    10 * 1024 * 1024,
  ),
  reads: flag(false),
});

/** mcp: the MCP face's own switches. */
/** The blocks of issue 15 (safe autonomy), parts of the armgate block. */
const SAFE_AUTONOMY_BLOCKS = {
  safety: v.optional(SafetySchema, {}),
  audit: v.optional(AuditSchema, {}),
};

// ---- end of the safe autonomy settings ----

const seconds = (min: number, max: number, fallback: number) => between('number of seconds', min, max, ' s', fallback);

/** Uploads being received at once when web.limits.max_uploads is not set. */
export const DEFAULT_MAX_UPLOADS = 16;

/**
 * web.limits: what one client, or all of them, may hold of the service (armgate's keys; docs/safe-deployment.md).
 * Beyond a cap a request is answered 503 with Retry-After before its body is read; POST /stop is always served.
 */
const WebLimitsSchema = v.strictObject({
  max_connections: count('connections', 16, 100_000, 2048),
  max_connections_per_client: count('connections', 4, 100_000, 256),
  max_event_clients: count('event streams', 1, 100_000, 1024),
  event_stall_s: seconds(1, 3600, 30),
  max_uploads: count('uploads', 1, 1024, DEFAULT_MAX_UPLOADS),
  headers_timeout_s: seconds(1, 600, 10),
  request_timeout_s: seconds(1, 3600, 300),
  body_grace_s: seconds(0.1, 600, 5),
  body_min_bytes_per_s: count('bytes per second', 1, 1_000_000_000, 1024),
  retry_after_s: count('seconds', 1, 3600, 2),
  lingering_time_s: seconds(0.1, 600, 10),
  lingering_timeout_s: seconds(0.1, 600, 2),
  token_guess_burst: count('wrong tokens', 1, 100_000, 10),
  token_guess_refill_s: seconds(0.01, 3600, 1),
});

const WebSchema = v.strictObject({
  enabled: flag(true),
  host: v.optional(nonEmptyText('a host name or address'), '127.0.0.1'),
  port: v.optional(port, 8007),
  token: v.optional(v.nullable(v.string('expected a string')), ''),
  tokens: TokensSchema,
  limits: v.optional(WebLimitsSchema, {}),
  endpoints: v.optional(v.string('expected a file reference'), 'pkg://armgate/config/endpoints.yaml'),
  joint_limits: v.optional(v.string('expected a file reference'), 'pkg://armgate/config/joint_limits.yaml'),
  allowed_hosts: v.optional(
    v.array(
      v.pipe(
        v.string('expected a host name'),
        v.check(
          (s) => parseHost(s) !== undefined,
          'expected a host name or address, optionally host:port (IPv6 in brackets; no scheme or path), ' +
            "such as 'robot-cell.local' or 'robot-cell.local:8007'",
        ),
      ),
      'expected a list of host names',
    ),
    [],
  ),
  cors_origins: v.optional(
    v.array(
      v.pipe(
        v.string('expected an origin'),
        v.check(
          (s) => normalizeOrigin(s) !== undefined,
          "expected an origin scheme://host[:port] (http or https, no path or trailing slash), such as 'http://cell-ui.local:3000'",
        ),
      ),
      'expected a list of origins',
    ),
    [],
  ),
  // Keys of the robot stack's own web block (its direct-trajectory admission): accepted so the stack's file works as
  // it is; armgate checks trajectories its own way (docs/trajectories.md) and does not use them.
  trajectory_state_timeout: v.optional(v.pipe(finite('number of seconds'), v.gtValue(0, 'must be > 0'))),
  trajectory_start_tolerance: v.optional(v.pipe(finite('angle in radians'), v.gtValue(0, 'must be > 0'))),
  trajectory_stopped_velocity: v.optional(v.pipe(finite('velocity in rad/s'), v.gtValue(0, 'must be > 0'))),
});

const RobotSchema = v.strictObject({
  backend: v.optional(v.picklist(['sim', 'ros2'], "expected 'sim' or 'ros2'"), 'sim'),
  position_descriptions: v.optional(v.record(v.string(), v.string('expected a sentence')), {}),
});

const PoseOffsetSchema = v.strictObject({
  x: v.optional(finite('number in metres'), 0),
  y: v.optional(finite('number in metres'), 0),
  z: v.optional(finite('number in metres'), 0),
  a: v.optional(finite('angle in radians'), 0),
  b: v.optional(finite('angle in radians'), 0),
  c: v.optional(finite('angle in radians'), 0),
});

const SimSchema = v.strictObject({
  time_scale: between('number', 0.01, 1000, '', 1),
  joint_state_rate_hz: between('rate in Hz', 1, 1000, ' Hz', 100),
  controller_rate_hz: between('rate in Hz', 250, 2000, ' Hz', 500),
  publish_joint_states: flag(true),
  initial_position: v.optional(
    v.union(
      [
        v.pipe(v.string(), v.nonEmpty()),
        v.pipe(v.array(finite('angle in radians')), v.length(7, 'expected 7 joint angles')),
      ],
      'expected a named position or 7 joint angles',
    ),
    'work',
  ),
  tool_offset: v.optional(PoseOffsetSchema, {}),
  collision_margin: between('distance in metres', 0, 0.1, ' m', 0.005),
  obstacles: v.optional(
    v.pipe(
      v.array(
        v.strictObject({
          name: boxName,
          center: v.pipe(v.array(finite('coordinate in metres')), v.length(3, 'expected [x, y, z] in metres')),
          size: v.pipe(
            v.array(v.pipe(finite('edge length in metres'), v.gtValue(0, 'must be > 0'))),
            v.length(3, 'expected [x, y, z] edge lengths in metres'),
          ),
        }),
      ),
      v.maxLength(64, 'at most 64 obstacles'),
    ),
    [],
  ),
  planning_time_s: between('seconds', 0.1, 60, ' s', 5),
});

/** jog: the speeds of a jog at input 1 and its dead-man (lib/motion/jog.ts). */
const JogSchema = v.strictObject({
  joint_speed: aboveZero('fraction', 'fraction', 1, 0.25),
  tcp_speed: aboveZero('speed in m/s', 'm/s', 1, 0.25),
  tcp_angular_speed: aboveZero('speed in rad/s', 'rad/s', 3, 0.5),
  ttl_ms: count('milliseconds', 20, 500, 200),
});

const SequencesSchema = v.strictObject({
  bag_root: v.optional(nonEmptyText('a folder path'), './bags'),
});

const McpSchema = v.strictObject({
  /** Ask the person through MCP elicitation before a motion tool runs (clients that support it). */
  confirm_motion: flag(false),
  tool_names: v.optional(
    v.picklist(
      ['armgate', 'original'],
      "expected 'armgate' (get_joint_states, ...) or 'original' (robot_joint_states_get, ...)",
    ),
    'armgate',
  ),
});

/**
 * armgate's own block: everything that is not the spec's `web` keys. Its own top-level name keeps it clear of the
 * robot stack's blocks (robot, digital_twin, tool, controller, planning, web, foxglove); further armgate settings
 * (safety, audit, ...) belong here too.
 */
const ArmgateSchema = v.strictObject({
  backend: RobotSchema.entries.backend,
  position_descriptions: RobotSchema.entries.position_descriptions,
  sim: v.optional(SimSchema, {}),
  sequences: v.optional(SequencesSchema, {}),
  /** The taught positions' YAML file (relative to the settings file's folder); absent: positions.yaml beside it. */
  positions_file: v.optional(v.pipe(nonEmptyText('a file path'), v.maxLength(4096, 'at most 4096 characters'))),
  jog: v.optional(JogSchema, {}),
  ...SAFE_AUTONOMY_BLOCKS,
  mcp: v.optional(McpSchema, {}),
  /** Caps of the Foxglove server (the stack's `foxglove` block says where and what; lib/settings/foxglove.ts). */
  foxglove: v.optional(ArmgateFoxgloveSchema, {}),
});

/** web.limits as read. */
export type WebLimitSettings = v.InferOutput<typeof WebLimitsSchema>;

/** armgate's block as read. */
export type ArmgateSettings = v.InferOutput<typeof ArmgateSchema>;

/** The stack's `planning` block: the keys armgate uses (others are the stack's). */
const PlanningSchema = v.looseObject({
  pose_link: v.optional(nonEmptyText('a link name')),
  planning_group: v.optional(nonEmptyText('a group name')),
  default_frame: v.optional(nonEmptyText('a frame name')),
});

/** The stack's `controller` block: armgate reads `moveit.srdf` (others are the stack's). */
const ControllerSchema = v.looseObject({
  moveit: v.optional(v.looseObject({ srdf: v.optional(v.string('expected a file reference')) })),
});

/**
 * The root settings file: the robot stack's own (blocks robot, digital_twin, tool, controller, planning, web,
 * foxglove) or armgate's. armgate reads its keys of `web` and its own `armgate` block, both strict so a typo is
 * caught; of the stack's blocks it reads planning.pose_link, planning.planning_group, planning.default_frame and
 * controller.moveit.srdf, and ignores the rest. The earlier places of armgate's settings (robot.backend,
 * robot.position_descriptions, top-level sim and sequences) keep working ({@link armgateSettings}).
 */
export const SettingsFileSchema = v.looseObject({
  web: v.optional(WebSchema, {}),
  armgate: v.optional(v.record(v.string(), v.unknown(), 'expected a mapping of armgate settings')),
  robot: v.optional(v.record(v.string(), v.unknown(), 'expected a mapping')),
  sim: v.optional(v.unknown()),
  sequences: v.optional(v.unknown()),
  planning: v.optional(PlanningSchema),
  controller: v.optional(ControllerSchema),
  safety: v.optional(v.unknown()),
  audit: v.optional(v.unknown()),
  mcp: v.optional(v.unknown()),
});

export type SettingsFile = v.InferOutput<typeof SettingsFileSchema>;

/** Where each of armgate's earlier top-level settings lives now. */
const MOVED = [
  ['robot.backend', 'armgate.backend'],
  ['robot.position_descriptions', 'armgate.position_descriptions'],
  ['sim', 'armgate.sim'],
  ['sequences', 'armgate.sequences'],
  ['safety', 'armgate.safety'],
  ['audit', 'armgate.audit'],
  ['mcp', 'armgate.mcp'],
] as const;

/**
 * armgate's block of a settings file, validated: `armgate`, or (an earlier armgate settings file) the same keys at
 * their earlier places. Both at once is an error that says how to move each key.
 */
export function armgateSettings(
  file: SettingsFile,
): { ok: true; value: ArmgateSettings } | { ok: false; error: string } {
  const robot = file.robot ?? {};
  const legacy: Record<string, unknown> = {};
  const found: string[] = [];
  for (const [from, to] of MOVED) {
    const [block, key] = from.split('.') as [string, string | undefined];
    const value = key === undefined ? (file as Record<string, unknown>)[block] : robot[key];
    if (value === undefined) continue;
    found.push(`move ${from} to ${to}`);
    legacy[to.slice('armgate.'.length)] = value;
  }
  if (file.armgate !== undefined && found.length > 0)
    return {
      ok: false,
      error: `settings: armgate's settings are in the armgate block now; ${found.join(', ')} (the block armgate and the earlier places cannot be mixed)`,
    };
  const source = file.armgate ?? legacy;
  const parsed = v.safeParse(ArmgateSchema, source);
  if (parsed.success) return { ok: true, value: parsed.output };
  const issue = parsed.issues[0];
  const keys = (issue?.path ?? []).map((item) => String(item.key));
  let where = ['armgate', ...keys].join('.');
  if (file.armgate === undefined) {
    // An earlier settings file: name the key where it is written.
    const first = keys[0];
    const place = MOVED.find(([, to]) => to === `armgate.${first}`)?.[0];
    if (place) where = [place, ...keys.slice(1)].join('.');
  }
  return { ok: false, error: `${where}: ${issue?.message ?? 'invalid'}` };
}
