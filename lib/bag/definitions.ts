/**
 * ROS 2 message definitions for the types armgate records, as the complete `ros2msg` schema texts
 * rosbag2 stores in MCAP files.
 *
 * The .msg texts are the field lines of the ROS 2 Jazzy interface files (comments left out;
 * field names, types and default values exactly as in common_interfaces and rcl_interfaces).
 * The complete text is assembled the way rosbag2_cpp's LocalMessageDefinitionSource does it:
 * the root .msg text first, then every dependency not yet seen, depth first in sorted order,
 * each preceded by "\n", a line of 80 '=' and `MSG: <name as written in the field>` (for
 * example `MSG: std_msgs/Header`; a same-package name such as `Pose` becomes
 * `geometry_msgs/Pose`). See rosbag2's docs/message_definition_encoding.md.
 */

import { err, ok, type Result } from '../result.ts';

/** The .msg file texts, keyed by the full type name `pkg/msg/Type`. */
const MSG_FILES: Readonly<Record<string, string>> = {
  'builtin_interfaces/msg/Time': 'int32 sec\nuint32 nanosec\n',
  'builtin_interfaces/msg/Duration': 'int32 sec\nuint32 nanosec\n',
  'std_msgs/msg/Header': 'builtin_interfaces/Time stamp\nstring frame_id\n',
  'std_msgs/msg/String': 'string data\n',
  'sensor_msgs/msg/JointState':
    'std_msgs/Header header\nstring[] name\nfloat64[] position\nfloat64[] velocity\nfloat64[] effort\n',
  'trajectory_msgs/msg/JointTrajectory':
    'std_msgs/Header header\nstring[] joint_names\nJointTrajectoryPoint[] points\n',
  'trajectory_msgs/msg/JointTrajectoryPoint':
    'float64[] positions\nfloat64[] velocities\nfloat64[] accelerations\nfloat64[] effort\n' +
    'builtin_interfaces/Duration time_from_start\n',
  'geometry_msgs/msg/PoseStamped': 'std_msgs/Header header\nPose pose\n',
  'geometry_msgs/msg/Pose': 'Point position\nQuaternion orientation\n',
  'geometry_msgs/msg/Point': 'float64 x\nfloat64 y\nfloat64 z\n',
  'geometry_msgs/msg/Quaternion': 'float64 x 0\nfloat64 y 0\nfloat64 z 0\nfloat64 w 1\n',
  'geometry_msgs/msg/Vector3': 'float64 x\nfloat64 y\nfloat64 z\n',
  'geometry_msgs/msg/Transform': 'Vector3 translation\nQuaternion rotation\n',
  'geometry_msgs/msg/TransformStamped': 'std_msgs/Header header\nstring child_frame_id\nTransform transform\n',
  'tf2_msgs/msg/TFMessage': 'geometry_msgs/TransformStamped[] transforms\n',
};

/** The message types whose complete definitions this module knows (`pkg/msg/Type`), sorted. */
export const KNOWN_TYPES: readonly string[] = Object.freeze(Object.keys(MSG_FILES).sort());

const DELIMITER = `${'='.repeat(80)}\n`;

const PRIMITIVE_TYPES: ReadonlySet<string> = new Set([
  'bool',
  'byte',
  'char',
  'float32',
  'float64',
  'int8',
  'uint8',
  'int16',
  'uint16',
  'int32',
  'uint32',
  'int64',
  'uint64',
  'string',
]);

/** A message type name, `pkg/msg/Type`. */
export const MESSAGE_TYPE = /^[a-zA-Z0-9_]+\/msg\/[a-zA-Z0-9_]+$/;

/** `foo_msgs/Bar` or `foo_msgs/msg/Bar`: package and type name. */
const PACKAGE_TYPENAME = /^([a-zA-Z0-9_]+)\/(?:msg\/)?([a-zA-Z0-9_]+)$/;

/** The type of each field line ("foo_msgs/Bar" in "foo_msgs/Bar[] bar"), as rosbag2 finds them. */
const FIELD_TYPE = /(?:^|\n)\s*([a-zA-Z0-9_/]+)(?:\[[^\]]*\])?\s+/g;

/** Non-primitive field types of a .msg text, qualified with `pkg` when written without one, sorted. */
function dependenciesOf(text: string, pkg: string): string[] {
  const deps = new Set<string>();
  for (const match of text.matchAll(FIELD_TYPE)) {
    const type = match[1];
    if (type === undefined || PRIMITIVE_TYPES.has(type)) continue;
    deps.add(type.includes('/') ? type : `${pkg}/${type}`);
  }
  // std::set<std::string> order: byte-wise, which for these ASCII names is code-unit order.
  return [...deps].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * Finds the .msg text of a type: `pkg` and `name` as in `pkg/msg/name`; undefined when not found.
 * The built-in table is one source; lib/bag/installed.ts reads the installed interface packages.
 */
export type MsgLookup = (pkg: string, name: string) => string | undefined;

/** The built-in .msg texts of {@link KNOWN_TYPES}. */
export const builtinMsgLookup: MsgLookup = (pkg, name) => {
  const key = `${pkg}/msg/${name}`;
  return Object.hasOwn(MSG_FILES, key) ? MSG_FILES[key] : undefined;
};

/** Package and type name of `foo_msgs/Bar` or `foo_msgs/msg/Bar`, or undefined when not such a name. */
function splitName(name: string): { readonly pkg: string; readonly type: string } | undefined {
  const match = PACKAGE_TYPENAME.exec(name);
  const pkg = match?.[1];
  const type = match?.[2];
  return pkg === undefined || type === undefined ? undefined : { pkg, type };
}

/**
 * The complete `ros2msg` definition text of a message type (`pkg/msg/Type`) from the .msg texts
 * `lookup` finds, assembled as rosbag2 writes it into an MCAP schema record. Errors name the type
 * that is missing (the root or a dependency).
 */
export function assembleDefinition(type: string, lookup: MsgLookup): Result<string, string> {
  const root = splitName(type);
  if (root === undefined || !MESSAGE_TYPE.test(type)) return err(`${type} is not a message type name (pkg/msg/Type)`);
  const rootText = lookup(root.pkg, root.type);
  if (rootText === undefined) return err(`no definition of ${type}`);
  const seen = new Set<string>();
  const append = (pkg: string, text: string, depth: number): string => {
    if (depth <= 0) throw new Error(`the definition of ${type} nests too deeply`);
    let result = text;
    for (const dep of dependenciesOf(text, pkg)) {
      if (seen.has(dep)) continue;
      seen.add(dep);
      const name = splitName(dep);
      const found = name === undefined ? undefined : lookup(name.pkg, name.type);
      if (name === undefined || found === undefined)
        throw new Error(`${type} needs ${dep}, whose definition was not found`);
      result += `\n${DELIMITER}MSG: ${dep}\n${append(name.pkg, found, depth - 1)}`;
    }
    return result;
  };
  try {
    return ok(append(root.pkg, rootText, 50));
  } catch (e) {
    return err((e as Error).message);
  }
}

/**
 * The complete `ros2msg` definition text of a message type (`pkg/msg/Type`) from the built-in
 * table; undefined for a type not in {@link KNOWN_TYPES}.
 */
export function definitionFor(type: string): string | undefined {
  if (!Object.hasOwn(MSG_FILES, type)) return undefined;
  const assembled = assembleDefinition(type, builtinMsgLookup);
  return assembled.ok ? assembled.value : undefined;
}
