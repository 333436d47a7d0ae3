import type { JointTrajectory } from '../planning/trajectory.ts';
import { durationFromS, type JointTrajectoryMsg } from '../ros/messages.ts';

/** A trajectory_msgs/JointTrajectory of a planned trajectory (stamp 0: start on receipt). */
export function trajectoryMsg(trajectory: JointTrajectory): JointTrajectoryMsg {
  return {
    header: { stamp: { sec: 0, nanosec: 0 }, frame_id: '' },
    joint_names: [...trajectory.jointNames],
    points: trajectory.points.map((p) => ({
      positions: [...p.positions],
      velocities: p.velocities ? [...p.velocities] : [],
      accelerations: p.accelerations ? [...p.accelerations] : [],
      effort: [],
      time_from_start: durationFromS(p.timeFromStartS),
    })),
  };
}
