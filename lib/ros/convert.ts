/**
 * Conversion between armgate's plain message shapes (lib/ros/messages.ts) and the message
 * objects rclnodejs builds and takes. Pure: no I/O, no clock, no rclnodejs import.
 *
 * rclnodejs hands received messages over as plain objects whose numeric arrays are typed arrays
 * (float64[] -> Float64Array, float32[] -> Float32Array, ...; its default `enableTypedArray`), and
 * accepts plain objects for what it sends (missing fields keep their defaults, typed arrays or
 * arrays for numeric arrays). What comes in is `unknown` and is checked here; what goes out uses
 * Float64Array for float64[] fields and float32-rounded numbers for float32 fields, as on the wire.
 */
import type { Quaternion } from '../kinematics/rotation.ts';
import { err, ok, type Result } from '../result.ts';
import type {
  DurationMsg,
  GetPositionFkRequest,
  GetPositionFkResponse,
  GetPositionIkRequest,
  GetPositionIkResponse,
  HeaderMsg,
  JointStateMsg,
  JointTrajectoryMsg,
  MotionResultMsg,
  MoveToJointsGoal,
  MoveToNamedRequest,
  MoveToPoseGoal,
  PoseStampedMsg,
  TimeMsg,
  TriggerResponse,
} from './messages.ts';

type Dict = Readonly<Record<string, unknown>>;

function isDict(value: unknown): value is Dict {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !ArrayBuffer.isView(value);
}

/** A numeric array as rclnodejs gives it (typed array or array of numbers) as number[]; undefined otherwise. */
export function numbersOf(value: unknown): number[] | undefined {
  if (ArrayBuffer.isView(value) && !(value instanceof DataView)) {
    return Array.from(value as unknown as ArrayLike<number | bigint>, Number);
  }
  if (Array.isArray(value) && value.every((x) => typeof x === 'number')) return [...(value as number[])];
  return undefined;
}

function stringsOf(value: unknown): string[] | undefined {
  return Array.isArray(value) && value.every((x) => typeof x === 'string') ? [...(value as string[])] : undefined;
}

function numberOf(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint') return Number(value);
  return undefined;
}

/** builtin_interfaces/Time from rclnodejs (sec, nanosec); zero when absent. */
export function timeFromRos(raw: unknown): TimeMsg {
  if (!isDict(raw)) return { sec: 0, nanosec: 0 };
  return { sec: numberOf(raw.sec) ?? 0, nanosec: numberOf(raw.nanosec) ?? 0 };
}

/** builtin_interfaces/Duration from rclnodejs; zero when absent. */
export function durationFromRos(raw: unknown): DurationMsg {
  return timeFromRos(raw);
}

function headerFromRos(raw: unknown): HeaderMsg {
  const h = isDict(raw) ? raw : {};
  return { stamp: timeFromRos(h.stamp), frame_id: typeof h.frame_id === 'string' ? h.frame_id : '' };
}

/** sensor_msgs/JointState from rclnodejs as plain data, in the order received; an error says what is malformed. */
export function jointStateFromRos(raw: unknown): Result<JointStateMsg, string> {
  if (!isDict(raw)) return err('not a message object');
  const name = stringsOf(raw.name);
  const position = numbersOf(raw.position);
  if (!name) return err('name is not an array of strings');
  if (!position || position.length !== name.length)
    return err(`position has ${position?.length ?? 'no'} values for ${name.length} names`);
  return ok({
    header: headerFromRos(raw.header),
    name,
    position,
    velocity: numbersOf(raw.velocity) ?? [],
    effort: numbersOf(raw.effort) ?? [],
  });
}

/**
 * The joint state with exactly `jointNames`, in that order: extra joints dropped, an empty or
 * short velocity/effort array read as zeros, and so a velocity or effort that is not a number (NaN:
 * ros2_control's joint_state_broadcaster publishes it for an interface the joint lacks, e.g. effort on
 * a position-controlled arm). Joints the message lacks come back as the error.
 */
export function jointStateByName(
  msg: JointStateMsg,
  jointNames: readonly string[],
): Result<JointStateMsg, readonly string[]> {
  const index = new Map(msg.name.map((n, i) => [n, i]));
  const missing = jointNames.filter((n) => !index.has(n));
  if (missing.length > 0) return err(missing);
  const pick = (values: readonly number[]) => jointNames.map((n) => values[index.get(n) ?? -1] ?? 0);
  const finite = (values: readonly number[]) => pick(values).map((v) => (Number.isFinite(v) ? v : 0));
  return ok({
    header: msg.header,
    name: [...jointNames],
    position: pick(msg.position),
    velocity: finite(msg.velocity),
    effort: finite(msg.effort),
  });
}

/** moveit_msgs/srv/GetPositionFK request as rclnodejs takes it (joint positions as Float64Array). */
export function fkRequestToRos(request: GetPositionFkRequest) {
  const { name, position } = request.robot_state.joint_state;
  return {
    header: { stamp: { ...request.header.stamp }, frame_id: request.header.frame_id },
    fk_link_names: [...request.fk_link_names],
    robot_state: { joint_state: { name: [...name], position: Float64Array.from(position) }, is_diff: false },
  };
}

function poseStampedFromRos(raw: unknown): Result<PoseStampedMsg, string> {
  if (!isDict(raw) || !isDict(raw.pose)) return err('pose_stamped element without a pose');
  const { position: p, orientation: o } = raw.pose;
  if (!isDict(p) || !isDict(o)) return err('pose without position or orientation');
  const n = (v: unknown) => numberOf(v) ?? Number.NaN;
  const position = { x: n(p.x), y: n(p.y), z: n(p.z) };
  const orientation: Quaternion = { x: n(o.x), y: n(o.y), z: n(o.z), w: n(o.w) };
  if (![...Object.values(position), ...Object.values(orientation)].every(Number.isFinite))
    return err('pose with non-numeric fields');
  return ok({ header: headerFromRos(raw.header), pose: { position, orientation } });
}

/** moveit_msgs/srv/GetPositionFK response from rclnodejs; an error says what is malformed. */
export function fkResponseFromRos(raw: unknown): Result<GetPositionFkResponse, string> {
  if (!isDict(raw)) return err('FK response is not an object');
  const val = isDict(raw.error_code) ? numberOf(raw.error_code.val) : undefined;
  if (val === undefined) return err('FK response without error_code.val');
  const poses: PoseStampedMsg[] = [];
  for (const item of Array.isArray(raw.pose_stamped) ? raw.pose_stamped : []) {
    const pose = poseStampedFromRos(item);
    if (!pose.ok) return pose;
    poses.push(pose.value);
  }
  return ok({ pose_stamped: poses, fk_link_names: stringsOf(raw.fk_link_names) ?? [], error_code: { val } });
}

/** iiwa_msgs/action/MoveToJoints goal: float64[7] joints, float32 speed. */
export function moveToJointsGoalToRos(goal: MoveToJointsGoal): { joints: Float64Array; speed: number } {
  return { joints: Float64Array.from(goal.joints), speed: Math.fround(goal.speed) };
}

/** The wire shape of an iiwa_msgs/action/MoveToPose goal. */
export interface RosMoveToPoseGoal {
  x: number;
  y: number;
  z: number;
  a: number;
  b: number;
  c: number;
  speed: number;
  planner: string;
  frame_id: string;
}

/**
 * iiwa_msgs/action/MoveToPose goal: float64 x, y, z, a, b, c (KUKA ABC), float32 speed, string
 * planner, string frame_id. The stack's message has no auxiliary point, so a CIRC goal with
 * `circ_center` or `circ_interim` cannot be expressed: that is the error.
 */
export function moveToPoseGoalToRos(goal: MoveToPoseGoal): Result<RosMoveToPoseGoal, string> {
  if (goal.circ_center || goal.circ_interim) {
    return err(
      `the stack's MoveToPose goal has no auxiliary point: ${goal.circ_center ? 'circ_center' : 'circ_interim'} cannot be sent to it`,
    );
  }
  const { x, y, z, a, b, c, planner, frame_id } = goal;
  return ok({ x, y, z, a, b, c, speed: Math.fround(goal.speed), planner, frame_id });
}

/** iiwa_msgs/srv/MoveToNamedPose request: string name, float32 speed, float32 accel_scale. */
export function moveToNamedToRos(request: MoveToNamedRequest): MoveToNamedRequest {
  return { name: request.name, speed: Math.fround(request.speed), accel_scale: Math.fround(request.accel_scale) };
}

/** {bool success, string message} of the motion results and std_srvs/Trigger; an error when malformed. */
export function motionResultFromRos(raw: unknown): Result<MotionResultMsg, string> {
  if (!isDict(raw) || typeof raw.success !== 'boolean') return err('result without a boolean success field');
  return ok({ success: raw.success, message: typeof raw.message === 'string' ? raw.message : '' });
}

/** std_srvs/srv/Trigger response. */
export function triggerResponseFromRos(raw: unknown): Result<TriggerResponse, string> {
  return motionResultFromRos(raw);
}

/** The feedback's `string state` as armgate's two phases; undefined for any other state. */
export function feedbackStateFromRos(raw: unknown): 'planning' | 'executing' | undefined {
  const state = isDict(raw) && typeof raw.state === 'string' ? raw.state.toLowerCase() : '';
  if (state.includes('plan')) return 'planning';
  if (state.includes('exec') || state.includes('mov')) return 'executing';
  return undefined;
}

/** trajectory_msgs/JointTrajectory as rclnodejs takes it: Float64Array for each float64[] field. */
export function jointTrajectoryToRos(msg: JointTrajectoryMsg) {
  return {
    header: { stamp: { ...msg.header.stamp }, frame_id: msg.header.frame_id },
    joint_names: [...msg.joint_names],
    points: msg.points.map((p) => ({
      positions: Float64Array.from(p.positions),
      velocities: Float64Array.from(p.velocities),
      accelerations: Float64Array.from(p.accelerations),
      effort: Float64Array.from(p.effort),
      time_from_start: { sec: p.time_from_start.sec, nanosec: p.time_from_start.nanosec },
    })),
  };
}

/** trajectory_msgs/JointTrajectory from rclnodejs; an error says what is malformed. */
export function jointTrajectoryFromRos(raw: unknown): Result<JointTrajectoryMsg, string> {
  if (!isDict(raw)) return err('not a message object');
  const jointNames = stringsOf(raw.joint_names);
  if (!jointNames) return err('joint_names is not an array of strings');
  const points: JointTrajectoryMsg['points'] = [];
  for (const [i, p] of (Array.isArray(raw.points) ? raw.points : []).entries()) {
    const positions = isDict(p) ? numbersOf(p.positions) : undefined;
    if (!isDict(p) || !positions) return err(`point ${i} has no positions`);
    const rest = (v: unknown) => numbersOf(v) ?? [];
    points.push({
      positions,
      velocities: rest(p.velocities),
      accelerations: rest(p.accelerations),
      effort: rest(p.effort),
      time_from_start: durationFromRos(p.time_from_start),
    });
  }
  return ok({ header: headerFromRos(raw.header), joint_names: jointNames, points });
}

/** rcl_interfaces/srv/GetParameters request for `names`. */
export function getParametersRequest(names: readonly string[]): { names: string[] } {
  return { names: [...names] };
}

/** rcl_interfaces/msg/ParameterType PARAMETER_STRING. */
export const PARAMETER_STRING = 4;

/** The string value of the first parameter in a GetParameters response; an error when unset or not a string. */
export function stringParameterFromRos(raw: unknown, name: string): Result<string, string> {
  const first: unknown = isDict(raw) && Array.isArray(raw.values) ? raw.values[0] : undefined;
  if (!isDict(first)) return err(`parameter '${name}' is not set`);
  const type = numberOf(first.type);
  if (type !== PARAMETER_STRING || typeof first.string_value !== 'string')
    return err(`parameter '${name}' is not a string (ParameterType ${type ?? '?'})`);
  return ok(first.string_value);
}

/**
 * A received message as plain JSON-friendly data: typed arrays become arrays, bigints numbers,
 * recursively (what the topic subscribers, the bag writer and the runner's IPC channel take).
 */
export function plainOf(value: unknown, depth = 0): unknown {
  if (depth > 32) return undefined;
  if (typeof value === 'bigint') return Number(value);
  if (ArrayBuffer.isView(value))
    return value instanceof DataView ? [] : Array.from(value as unknown as ArrayLike<number | bigint>, Number);
  if (Array.isArray(value)) return value.map((v) => plainOf(v, depth + 1));
  if (isDict(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plainOf(v, depth + 1)]));
  return value;
}

/** moveit_msgs/srv/GetPositionIK request as rclnodejs takes it (the seed's positions as Float64Array). */
export function ikRequestToRos(request: GetPositionIkRequest) {
  const r = request.ik_request;
  const { name, position } = r.robot_state.joint_state;
  const { header, pose } = r.pose_stamped;
  return {
    ik_request: {
      group_name: r.group_name,
      robot_state: { joint_state: { name: [...name], position: Float64Array.from(position) }, is_diff: false },
      avoid_collisions: r.avoid_collisions,
      ik_link_name: r.ik_link_name,
      pose_stamped: {
        header: { stamp: { ...header.stamp }, frame_id: header.frame_id },
        pose: { position: { ...pose.position }, orientation: { ...pose.orientation } },
      },
      timeout: { sec: r.timeout.sec, nanosec: r.timeout.nanosec },
    },
  };
}

/** moveit_msgs/srv/GetPositionIK response from rclnodejs; an error says what is malformed. */
export function ikResponseFromRos(raw: unknown): Result<GetPositionIkResponse, string> {
  if (!isDict(raw)) return err('IK response is not an object');
  const val = isDict(raw.error_code) ? numberOf(raw.error_code.val) : undefined;
  if (val === undefined) return err('IK response without error_code.val');
  const state = isDict(raw.solution) && isDict(raw.solution.joint_state) ? raw.solution.joint_state : {};
  const name = stringsOf(state.name) ?? [];
  const position = numbersOf(state.position) ?? [];
  if (position.length !== name.length) return err(`solution has ${position.length} positions for ${name.length} names`);
  return ok({ solution: { joint_state: { name, position } }, error_code: { val } });
}

/** control_msgs/action/FollowJointTrajectory goal: the trajectory (tolerances left at the controller's defaults). */
export function followJointTrajectoryGoalToRos(msg: JointTrajectoryMsg) {
  return { trajectory: jointTrajectoryToRos(msg) };
}

/** control_msgs/action/FollowJointTrajectory result: int32 error_code, string error_string. */
export function followJointTrajectoryResultFromRos(
  raw: unknown,
): Result<{ error_code: number; error_string: string }, string> {
  const code = isDict(raw) ? numberOf(raw.error_code) : undefined;
  if (!isDict(raw) || code === undefined) return err('result without an integer error_code');
  return ok({ error_code: code, error_string: typeof raw.error_string === 'string' ? raw.error_string : '' });
}
