/**
 * What the stack's answers mean to a caller, in words: a MoveIt IK error code, and how a
 * FollowJointTrajectory goal ended. Pure: the rclnodejs context calls these with what it received.
 */
import {
  FJT_GOAL_TOLERANCE_VIOLATED,
  FJT_INVALID_GOAL,
  FJT_PATH_TOLERANCE_VIOLATED,
  FJT_SUCCESSFUL,
  type IkRequest,
  MOVEIT_FRAME_TRANSFORM_FAILURE,
  MOVEIT_GOAL_IN_COLLISION,
  MOVEIT_INVALID_GROUP_NAME,
  MOVEIT_INVALID_LINK_NAME,
  MOVEIT_NO_IK_SOLUTION,
  MOVEIT_TIMED_OUT,
  moveitErrorName,
  type TrajectoryOutcome,
} from './messages.ts';

/** The endpoints file's names an IK failure message may cite. */
export interface IkNames {
  readonly tcp_link: string;
  readonly planning_group: string;
  readonly ik_s: number;
}

/** Why MoveIt's compute_ik found no solution (`val`, its error code), for `request` in `frame`. */
export function ikFailureMessage(val: number, frame: string, request: IkRequest, names: IkNames): string {
  const code = `(MoveIt ${moveitErrorName(val)})`;
  const pose = `[${[request.x, request.y, request.z].map((v) => v.toFixed(4)).join(', ')}] m`;
  switch (val) {
    case MOVEIT_NO_IK_SOLUTION:
      return `no IK solution for ${pose} within the joint limits${request.collision_check ? ' and free of collisions' : ''}: the pose is unreachable there ${code}`;
    case MOVEIT_TIMED_OUT:
      return `no IK solution for ${pose} found within ${names.ik_s} s ${code}`;
    case MOVEIT_GOAL_IN_COLLISION:
      return `the IK solution for ${pose} is in collision ${code}`;
    case MOVEIT_FRAME_TRANSFORM_FAILURE:
      return `unknown frame '${frame}' ${code}`;
    case MOVEIT_INVALID_LINK_NAME:
      return `MoveIt does not know the TCP link '${names.tcp_link}' (set tcp_link in the endpoints file) ${code}`;
    case MOVEIT_INVALID_GROUP_NAME:
      return `MoveIt does not know the planning group '${names.planning_group}' (set planning_group in the endpoints file) ${code}`;
    default:
      return `no IK solution for ${pose} ${code}`;
  }
}

/** How a FollowJointTrajectory goal ended on the controller: its final status and its result. */
export interface TrajectoryGoalResult {
  /** The goal's final status (action_msgs/GoalStatus). */
  readonly succeeded: boolean;
  readonly canceled: boolean;
  /** The result's error_code and error_string (SUCCESSFUL and '' when the result did not parse). */
  readonly errorCode: number;
  readonly errorString: string;
}

/**
 * The outcome of a goal the controller ended, in armgate's words: SUCCEEDED -> finished; CANCELED
 * (humble's answer to a newer goal) or ABORTED with INVALID_GOAL and "preempted" (jazzy's) ->
 * preempted; PATH_TOLERANCE_VIOLATED -> stopped; GOAL_TOLERANCE_VIOLATED -> timeout; anything else
 * -> refused, with the code.
 */
export function trajectoryGoalOutcome(end: TrajectoryGoalResult): {
  readonly outcome: TrajectoryOutcome['outcome'];
  readonly message: string;
} {
  const text = end.errorString ? `: ${end.errorString}` : '';
  const code = end.errorCode;
  if (end.succeeded && code === FJT_SUCCESSFUL)
    return { outcome: 'finished', message: `the controller finished the trajectory${text}` };
  if (end.canceled)
    return {
      outcome: 'preempted',
      message: `the controller cancelled the trajectory goal (a newer goal replaced it)${text}`,
    };
  if (code === FJT_INVALID_GOAL && /preempted/i.test(end.errorString))
    return {
      outcome: 'preempted',
      message: `the controller ended the trajectory goal (a newer goal replaced it)${text}`,
    };
  if (code === FJT_PATH_TOLERANCE_VIOLATED)
    return { outcome: 'stopped', message: `the controller stopped the trajectory: path tolerance violated${text}` };
  if (code === FJT_GOAL_TOLERANCE_VIOLATED)
    return {
      outcome: 'timeout',
      message: `the controller did not reach the goal within its tolerance in time${text}`,
    };
  return { outcome: 'refused', message: `the controller aborted the trajectory (error_code ${code})${text}` };
}
