import type { JsonSchema } from '@valibot/to-json-schema';
import * as v from 'valibot';
import * as jointStates from '../../handlers/robot/joint-states.ts';
import * as moveJoints from '../../handlers/robot/move-joints.ts';
import * as moveNamed from '../../handlers/robot/move-named.ts';
import * as movePose from '../../handlers/robot/move-pose.ts';
import * as pose from '../../handlers/robot/pose.ts';
import * as positions from '../../handlers/robot/positions.ts';
import * as sequenceLogs from '../../handlers/sequences/logs.ts';
import * as startSequence from '../../handlers/sequences/start.ts';
import * as sequenceStatus from '../../handlers/sequences/status.ts';
import * as stop from '../../handlers/stop.ts';
import * as trajectoryLogs from '../../handlers/trajectory/logs.ts';
import * as sendTrajectory from '../../handlers/trajectory/send.ts';
import type { HandlerModule } from '../http/route-spec.ts';
import { schemaFor } from '../http/route-spec.ts';
import { jsonSchema } from '../openapi/document.ts';
import type { JointLimits } from '../robot/limits.ts';
import { sequenceConfigSchema } from '../sequences/config.ts';

/** How a tool's arguments reach its REST twin. */
export type ToolInput = 'none' | 'body' | 'query' | 'sequence';

/** One MCP tool: a REST handler called with the tool's arguments, so both share validation and behaviour. */
export interface ToolSpec {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly module: HandlerModule;
  readonly input: ToolInput;
  /** The result is an array: wrap it in an object under this key. */
  readonly wrapAs?: string;
}

const MOTION_NOTE =
  'Motion is real and synchronous: the call returns when the arm has arrived, failed or was stopped. success false means it did not reach the target ' +
  '(message says why; nothing more moves). If another motion, trajectory or sequence holds the arm the call fails at once: wait, or call stop. ' +
  'Units: metres and radians; frame base_link (x forward, y left, z up, origin at the robot foot).';

/** The tools, one per capability. */
export const TOOLS: readonly ToolSpec[] = [
  {
    name: 'get_joint_states',
    title: 'Joint states',
    module: jointStates,
    input: 'none',
    description:
      'Current joint angles (rad), velocities (rad/s) and torques (N m) of the 7 joints joint1..joint7 of the KUKA iiwa 7 arm. Fails if the controller publishes nothing for 2 s.',
  },
  {
    name: 'get_tcp_pose',
    title: 'TCP pose',
    module: pose,
    input: 'none',
    description:
      'Current pose of the tool centre point in base_link: position in metres and orientation as quaternion and KUKA ABC angles (A about Z, then B about Y, then C about X) in radians and degrees.',
  },
  {
    name: 'list_named_positions',
    title: 'Named positions',
    module: positions,
    input: 'none',
    wrapAs: 'positions',
    description:
      'The named positions (e.g. home, work, transport) with their planning group and 7 joint angles in radians. Use a name with move_to_named_position.',
  },
  {
    name: 'move_to_named_position',
    title: 'Move to a named position',
    module: moveNamed,
    input: 'body',
    description: `Moves the arm to a named position from list_named_positions, joint-space (PTP). speed 0.01..1 (fraction of the velocity limits, default 0.1); accel_scale 0..1 (0 = use speed). ${MOTION_NOTE}`,
  },
  {
    name: 'move_to_pose',
    title: 'Move the TCP to a pose',
    module: movePose,
    input: 'body',
    description: `Moves the tool centre point to x, y, z (metres) with orientation a, b, c (KUKA ABC radians; pointing down is a=0, b=pi, c=0). planner: ptp (default, joint-space), lin (straight line), circ (arc; needs circ_center or circ_interim), ompl or chomp (plan around obstacles). Reach is about 0.8 m from the shoulder at (0, 0, 0.34). ${MOTION_NOTE}`,
  },
  {
    name: 'move_to_joints',
    title: 'Move to joint angles',
    module: moveJoints,
    input: 'body',
    description: `Moves the 7 joints to the given angles in radians (each within its limits, see the joint limits resource), joint-space PTP; speed 0.01..1, default 0.1. ${MOTION_NOTE}`,
  },
  {
    name: 'send_trajectory',
    title: 'Send a joint trajectory',
    module: sendTrajectory,
    input: 'body',
    description:
      "Publishes a joint trajectory (points of 7 angles in radians with time_from_start in seconds, increasing) to the arm's joint trajectory controller. With validate_limits (default true) it is checked first against the joint limits, velocities and accelerations from the arm's current state: a trajectory the arm cannot follow is an error naming the point, joint and figure (add time or points), and nothing moves. Returns at once: 'sent' confirms publication only; get_trajectory_logs says what the controller did. Moves the real arm; stop halts it.",
  },
  {
    name: 'start_sequence',
    title: 'Start a motion sequence',
    module: startSequence,
    input: 'sequence',
    description:
      "Starts a motion sequence in a separate runner process: config {home: point, waypoints: [points]}, a point being {joints: [7 rad], speed?} or {x, y, z, a, b, c, speed?, planner?}. Each of n_iterations (default 3) runs home, the waypoints, home, then waits delay_between_iterations s (default 5). Optional bag_path records a rosbag. Returns at once with the runner's pid; follow with get_sequence_status and get_sequence_logs; stop ends it. While it runs, other motions fail as busy.",
  },
  {
    name: 'get_sequence_status',
    title: 'Sequence status',
    module: sequenceStatus,
    input: 'none',
    description:
      'Status of the motion sequence runner: idle (none started), running (with iteration and point), or finished (with returncode: 0 done, 1 a motion failed, 2 bad arguments, 3 no such action server or ROS 2 not reachable, 4 the bag could not be recorded, 143 stopped).',
  },
  {
    name: 'get_sequence_logs',
    title: 'Sequence logs',
    module: sequenceLogs,
    input: 'query',
    description:
      "The sequence runner's latest output lines (n 1..1000, default 50), oldest first, each with a UTC timestamp.",
  },
  {
    name: 'get_trajectory_logs',
    title: 'Trajectory logs',
    module: trajectoryLogs,
    input: 'query',
    description:
      "The trajectory module's latest log lines (n 1..300, default 50): what was published and what the controller did (accepted, refused and why, finished, hold).",
  },
  {
    name: 'stop',
    title: 'Stop',
    module: stop,
    input: 'none',
    description:
      "Stops everything the API started: ends a running sequence, makes the arm decelerate and hold where it is, cancels the planner's motion. Always succeeds; safe to call at any time. It does not replace the robot's emergency stop.",
  },
];

const EMPTY_OBJECT: JsonSchema = { type: 'object', properties: {}, additionalProperties: false };

/** The tool's input schema (JSON Schema), from the same valibot schemas as its REST twin, with the active joint limits. */
export function inputSchemaOf(tool: ToolSpec, limits: JointLimits): JsonSchema {
  const route = tool.module.route;
  if (tool.input === 'body' && route.body) return jsonSchema(schemaFor(route.body.schema, limits));
  if (tool.input === 'query' && route.query) return jsonSchema(schemaFor(route.query, limits));
  if (tool.input === 'sequence') {
    const fields = jsonSchema(startSequence.fieldsSchema) as { properties?: Record<string, JsonSchema> };
    return {
      type: 'object',
      properties: { config: jsonSchema(sequenceConfigSchema(limits)), ...(fields.properties ?? {}) },
      required: ['config'],
      additionalProperties: false,
    };
  }
  return EMPTY_OBJECT;
}

/** The tool's output schema: its REST twin's 200 response (an array is wrapped in an object). */
export function outputSchemaOf(tool: ToolSpec): JsonSchema | undefined {
  const schema = tool.module.route.responses[200]?.schema;
  if (!schema) return undefined;
  return tool.wrapAs ? jsonSchema(v.object({ [tool.wrapAs]: schema })) : jsonSchema(schema);
}
