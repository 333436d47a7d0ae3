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

/** MoveItErrorCodes values used here (moveit_msgs/msg/MoveItErrorCodes). */
export const MOVEIT_SUCCESS = 1;
export const MOVEIT_FAILURE = 99999;
export const MOVEIT_TIMED_OUT = -6;
export const MOVEIT_GOAL_IN_COLLISION = -12;
export const MOVEIT_INVALID_GROUP_NAME = -15;
export const MOVEIT_INVALID_ROBOT_STATE = -17;
export const MOVEIT_INVALID_LINK_NAME = -18;
export const MOVEIT_FRAME_TRANSFORM_FAILURE = -21;
export const MOVEIT_NO_IK_SOLUTION = -31;
export const MOVEIT_PLANNING_FAILED = -1;
export const MOVEIT_INVALID_MOTION_PLAN = -2;
export const MOVEIT_START_STATE_IN_COLLISION = -10;
export const MOVEIT_GOAL_CONSTRAINTS_VIOLATED = -14;
export const MOVEIT_INVALID_GOAL_CONSTRAINTS = -16;

/** The name of a MoveItErrorCodes value (`NO_IK_SOLUTION`), or `code N` for one not listed here. */
export function moveitErrorName(val: number): string {
  const names: Record<number, string> = {
    [MOVEIT_SUCCESS]: 'SUCCESS',
    [MOVEIT_FAILURE]: 'FAILURE',
    [MOVEIT_TIMED_OUT]: 'TIMED_OUT',
    [MOVEIT_GOAL_IN_COLLISION]: 'GOAL_IN_COLLISION',
    [MOVEIT_INVALID_GROUP_NAME]: 'INVALID_GROUP_NAME',
    [MOVEIT_INVALID_ROBOT_STATE]: 'INVALID_ROBOT_STATE',
    [MOVEIT_INVALID_LINK_NAME]: 'INVALID_LINK_NAME',
    [MOVEIT_FRAME_TRANSFORM_FAILURE]: 'FRAME_TRANSFORM_FAILURE',
    [-22]: 'COLLISION_CHECKING_UNAVAILABLE',
    [MOVEIT_NO_IK_SOLUTION]: 'NO_IK_SOLUTION',
    [MOVEIT_PLANNING_FAILED]: 'PLANNING_FAILED',
    [MOVEIT_INVALID_MOTION_PLAN]: 'INVALID_MOTION_PLAN',
    [MOVEIT_START_STATE_IN_COLLISION]: 'START_STATE_IN_COLLISION',
    [MOVEIT_GOAL_CONSTRAINTS_VIOLATED]: 'GOAL_CONSTRAINTS_VIOLATED',
    [MOVEIT_INVALID_GOAL_CONSTRAINTS]: 'INVALID_GOAL_CONSTRAINTS',
  };
  return names[val] ?? `code ${val}`;
}

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

/**
 * iiwa_msgs/action/MoveToJoints goal: 7 joint angles (rad) and a speed scale. `accel_scale` is armgate's addition (a
 * taught position's move/named): the simulator applies it; the stack's message has none, so on ros2 it is not sent.
 */
export interface MoveToJointsGoal {
  joints: number[];
  speed: number;
  accel_scale?: number;
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

/**
 * An inverse-kinematics request as armgate asks it: the TCP pose (m; KUKA ABC angles in rad,
 * ZYX) in `frame_id` (default the planning frame), a seed and whether collisions count.
 */
export interface IkRequest {
  x: number;
  y: number;
  z: number;
  a: number;
  b: number;
  c: number;
  /** Frame of the pose; '' or absent: the planning frame. */
  frame_id?: string;
  /** 7 joint angles (rad, J1..J7) the solver starts from; absent: the arm's current state. */
  seed?: readonly number[];
  /** A solution in collision (self, floor, obstacles) does not count. */
  collision_check: boolean;
}

/** The answer to an {@link IkRequest}: joint angles (rad, J1..J7) when success, else the reason. */
export interface IkAnswer {
  success: boolean;
  joints?: number[];
  message: string;
}

/** moveit_msgs/srv/GetPositionIK request (the fields armgate fills in). */
export interface GetPositionIkRequest {
  ik_request: {
    group_name: string;
    robot_state: { joint_state: { name: string[]; position: number[] } };
    avoid_collisions: boolean;
    ik_link_name: string;
    pose_stamped: PoseStampedMsg;
    timeout: DurationMsg;
  };
}

/** moveit_msgs/srv/GetPositionIK response: the solution's joint state and the error code. */
export interface GetPositionIkResponse {
  solution: { joint_state: { name: string[]; position: number[] } };
  error_code: { val: number };
}

/** How a trajectory sent with wait ended. */
export type TrajectoryOutcomeKind = 'finished' | 'refused' | 'stopped' | 'preempted' | 'timeout';

/** The outcome of a trajectory executed with wait: what the controller did, why, and when (s after sending). */
export interface TrajectoryOutcome {
  outcome: TrajectoryOutcomeKind;
  message: string;
  duration_s: number;
}

/** control_msgs/action/FollowJointTrajectory result error codes. */
export const FJT_SUCCESSFUL = 0;
export const FJT_INVALID_GOAL = -1;
export const FJT_INVALID_JOINTS = -2;
export const FJT_OLD_HEADER_TIMESTAMP = -3;
export const FJT_PATH_TOLERANCE_VIOLATED = -4;
export const FJT_GOAL_TOLERANCE_VIOLATED = -5;
