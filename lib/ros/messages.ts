/**
 * ROS 2 message shapes the context speaks, as plain data (the field names of the .msg/.srv
 * definitions). Only the fields armgate uses are listed.
 */

/** builtin_interfaces/msg/Time */
export interface TimeMsg {
  sec: number;
  nanosec: number;
}

/** std_msgs/msg/Header */
export interface HeaderMsg {
  stamp: TimeMsg;
  frame_id: string;
}

/** sensor_msgs/msg/JointState */
export interface JointStateMsg {
  header: HeaderMsg;
  name: string[];
  position: number[];
  velocity: number[];
  effort: number[];
}

/** geometry_msgs/msg/PoseStamped */
export interface PoseStampedMsg {
  header: HeaderMsg;
  pose: {
    position: { x: number; y: number; z: number };
    orientation: { x: number; y: number; z: number; w: number };
  };
}

/** moveit_msgs/srv/GetPositionFK request */
export interface GetPositionFkRequest {
  header: HeaderMsg;
  fk_link_names: string[];
  robot_state: { joint_state: { name: string[]; position: number[] } };
}

/** moveit_msgs/srv/GetPositionFK response; error_code.val 1 is SUCCESS (moveit_msgs/MoveItErrorCodes). */
export interface GetPositionFkResponse {
  pose_stamped: PoseStampedMsg[];
  fk_link_names: string[];
  error_code: { val: number };
}

/** MoveItErrorCodes values used here. */
export const MOVEIT_SUCCESS = 1;
export const MOVEIT_INVALID_LINK_NAME = -22;
export const MOVEIT_FRAME_TRANSFORM_FAILURE = -21;

/** A builtin_interfaces/msg/Time from milliseconds since the epoch. */
export function timeFromMs(ms: number): TimeMsg {
  const sec = Math.floor(ms / 1000);
  return { sec, nanosec: Math.round((ms - sec * 1000) * 1e6) };
}

/** builtin_interfaces/msg/Duration */
export interface DurationMsg {
  sec: number;
  nanosec: number;
}

/** trajectory_msgs/msg/JointTrajectoryPoint */
export interface JointTrajectoryPointMsg {
  positions: number[];
  velocities: number[];
  accelerations: number[];
  effort: number[];
  time_from_start: DurationMsg;
}

/** trajectory_msgs/msg/JointTrajectory */
export interface JointTrajectoryMsg {
  header: HeaderMsg;
  joint_names: string[];
  points: JointTrajectoryPointMsg[];
}

/** A duration message from seconds (>= 0). */
export function durationFromS(seconds: number): DurationMsg {
  const sec = Math.floor(seconds);
  let nanosec = Math.round((seconds - sec) * 1e9);
  if (nanosec >= 1e9) return { sec: sec + 1, nanosec: nanosec - 1e9 };
  if (nanosec < 0) nanosec = 0;
  return { sec, nanosec };
}

/** Seconds of a duration message. */
export function secondsOf(d: DurationMsg): number {
  return d.sec + d.nanosec / 1e9;
}

/** iiwa_msgs/action/MoveToJoints goal: 7 joint angles (rad) and a speed scale. */
export interface MoveToJointsGoal {
  joints: number[];
  speed: number;
}

/** A point in space (m), for CIRC's auxiliary point. */
export interface PointMsg {
  x: number;
  y: number;
  z: number;
}

/**
 * iiwa_msgs/action/MoveToPose goal: TCP position (m) and KUKA ABC angles (rad, ZYX), speed scale,
 * planner, frame. `circ_center` / `circ_interim` are armgate's additions for CIRC (the stack's
 * message has no auxiliary point).
 */
export interface MoveToPoseGoal {
  x: number;
  y: number;
  z: number;
  a: number;
  b: number;
  c: number;
  speed: number;
  planner: string;
  frame_id: string;
  circ_center?: PointMsg;
  circ_interim?: PointMsg;
}

/** iiwa_msgs/srv/MoveToNamedPose request. */
export interface MoveToNamedRequest {
  name: string;
  speed: number;
  accel_scale: number;
}

/** Result of the motion actions and of MoveToNamedPose. */
export interface MotionResultMsg {
  success: boolean;
  message: string;
}

/** std_srvs/srv/Trigger response. */
export interface TriggerResponse {
  success: boolean;
  message: string;
}
