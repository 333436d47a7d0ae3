import * as v from 'valibot';
import { normalizeOrigin, parseHost } from '../http/origin.ts';

const finite = (what: string) => v.pipe(v.number(`expected ${what}`), v.finite(`expected a finite ${what}`));

// ---- Safe autonomy (issue 15): web.tokens, safety, audit, mcp. All of its settings are declared here. ----

const point3 = (what: string) =>
  v.pipe(v.array(finite(`coordinate in metres`)), v.length(3, `expected ${what} as [x, y, z] in metres`));

/** A box [min, max] with min below max on every axis. */
const boxEntries = { min: point3('the lower corner'), max: point3('the upper corner') };
const orderedBox = <T extends { min: number[]; max: number[] }>(box: T) =>
  box.min.every((m, i) => m < (box.max[i] ?? 0));
const ORDERED_MESSAGE = 'expected min below max on every axis';

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
          v.minLength(16, 'expected at least 16 characters'),
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
            name: v.pipe(
              v.string('expected a name'),
              v.regex(/^[A-Za-z0-9_.-]{1,64}$/, 'expected 1..64 letters, digits, _ . -'),
            ),
            ...boxEntries,
          }),
          v.check(orderedBox, ORDERED_MESSAGE),
        ),
      ),
      v.maxLength(64, 'at most 64 keep-out boxes'),
    ),
    [],
  ),
  link_radius_m: v.optional(
    v.pipe(finite('distance in metres'), v.minValue(0, 'expected 0..0.5 m'), v.maxValue(0.5, 'expected 0..0.5 m')),
    0.08,
  ),
  plan_ttl_s: v.optional(
    v.pipe(finite('seconds'), v.minValue(1, 'expected 1..3600 s'), v.maxValue(3600, 'expected 1..3600 s')),
    60,
  ),
});

/** audit: the audit trail file (JSON lines); '' means none. */
const AuditSchema = v.strictObject({
  path: v.optional(v.string('expected a file path'), ''),
  max_bytes: v.optional(
    v.pipe(v.number('expected bytes'), v.integer('expected an integer'), v.minValue(4096, 'expected at least 4096')),
    10 * 1024 * 1024,
  ),
  reads: v.optional(v.boolean('expected true or false'), false),
});

/** mcp: the MCP face's own switches. */
const McpSchema = v.strictObject({
  confirm_motion: v.optional(v.boolean('expected true or false'), false),
});

/** The blocks of issue 15, spread into the root schema. */
const SAFE_AUTONOMY_BLOCKS = {
  safety: v.optional(SafetySchema, {}),
  audit: v.optional(AuditSchema, {}),
  mcp: v.optional(McpSchema, {}),
};

// ---- end of the safe autonomy settings ----

const WebSchema = v.strictObject({
  enabled: v.optional(v.boolean('expected true or false'), true),
  host: v.optional(v.pipe(v.string('expected a host name or address'), v.nonEmpty('must not be empty')), '127.0.0.1'),
  port: v.optional(
    v.pipe(
      v.number('expected a port number'),
      v.integer('expected an integer port'),
      v.minValue(0, 'expected 0..65535'),
      v.maxValue(65535, 'expected 0..65535'),
    ),
    8007,
  ),
  token: v.optional(v.nullable(v.string('expected a string')), ''),
  tokens: TokensSchema,
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
  time_scale: v.optional(
    v.pipe(finite('number'), v.minValue(0.01, 'expected 0.01..1000'), v.maxValue(1000, 'expected 0.01..1000')),
    1,
  ),
  joint_state_rate_hz: v.optional(
    v.pipe(finite('rate in Hz'), v.minValue(1, 'expected 1..1000 Hz'), v.maxValue(1000, 'expected 1..1000 Hz')),
    100,
  ),
  controller_rate_hz: v.optional(
    v.pipe(finite('rate in Hz'), v.minValue(250, 'expected 250..2000 Hz'), v.maxValue(2000, 'expected 250..2000 Hz')),
    500,
  ),
  publish_joint_states: v.optional(v.boolean('expected true or false'), true),
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
  collision_margin: v.optional(
    v.pipe(finite('distance in metres'), v.minValue(0, 'expected 0..0.1 m'), v.maxValue(0.1, 'expected 0..0.1 m')),
    0.005,
  ),
  obstacles: v.optional(
    v.pipe(
      v.array(
        v.strictObject({
          name: v.pipe(
            v.string('expected a name'),
            v.regex(/^[A-Za-z0-9_.-]{1,64}$/, 'expected 1..64 letters, digits, _ . -'),
          ),
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
  planning_time_s: v.optional(
    v.pipe(finite('seconds'), v.minValue(0.1, 'expected 0.1..60 s'), v.maxValue(60, 'expected 0.1..60 s')),
    5,
  ),
});

const SequencesSchema = v.strictObject({
  bag_root: v.optional(v.pipe(v.string('expected a folder path'), v.nonEmpty('must not be empty')), './bags'),
});

/** The root settings file. Unknown top-level blocks belong to the rest of the stack and are kept; armgate's own blocks are strict so a typo is caught. */
export const SettingsFileSchema = v.looseObject({
  web: v.optional(WebSchema, {}),
  robot: v.optional(RobotSchema, {}),
  sim: v.optional(SimSchema, {}),
  sequences: v.optional(SequencesSchema, {}),
  ...SAFE_AUTONOMY_BLOCKS,
});

export type SettingsFile = v.InferOutput<typeof SettingsFileSchema>;
