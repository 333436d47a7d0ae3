/**
 * ROS 2 message shapes the context speaks, as plain data (the field names of the .msg/.srv
 * definitions). Only the fields armgate uses are listed.
 */

/** builtin_interfaces/msg/Time */
export interface TimeMsg { sec: number; nanosec: number }

/** std_msgs/msg/Header */
export interface HeaderMsg { stamp: TimeMsg; frame_id: string }

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
