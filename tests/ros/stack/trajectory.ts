/**
 * The trajectory messages the test stack sends and reads (trajectory_msgs, control_msgs'
 * FollowJointTrajectory result codes), as plain data. No ROS.
 */

export interface TimeMsg {
  readonly sec: number;
  readonly nanosec: number;
}
export interface TrajectoryPointMsg {
  readonly positions: ArrayLike<number>;
  readonly velocities: ArrayLike<number>;
  readonly accelerations: ArrayLike<number>;
  readonly effort: ArrayLike<number>;
  readonly time_from_start: TimeMsg;
}
export interface TrajectoryMsg {
  readonly header: { readonly stamp: TimeMsg; readonly frame_id?: string };
  readonly joint_names: readonly string[];
  readonly points: readonly TrajectoryPointMsg[];
}

/** control_msgs/action/FollowJointTrajectory result codes. */
export const FJT = {
  SUCCESSFUL: 0,
  INVALID_GOAL: -1,
  INVALID_JOINTS: -2,
  OLD_HEADER_TIMESTAMP: -3,
  PATH_TOLERANCE_VIOLATED: -4,
  GOAL_TOLERANCE_VIOLATED: -5,
} as const;

export const seconds = (t: TimeMsg): number => Number(t.sec) + Number(t.nanosec) / 1e9;

export const duration = (s: number): TimeMsg => {
  const sec = Math.floor(s);
  return { sec, nanosec: Math.min(999_999_999, Math.round((s - sec) * 1e9)) };
};

/** How a controller goal ended: the action status and the result. */
export interface GoalEnd {
  readonly status: 'succeeded' | 'aborted' | 'canceled';
  readonly errorCode: number;
  readonly errorString: string;
}
