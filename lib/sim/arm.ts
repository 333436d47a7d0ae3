import type { JointSample } from '../planning/trajectory.ts';
import type { JointStateMsg } from '../ros/messages.ts';
import { timeFromMs } from '../ros/messages.ts';
import type { ArmModel } from './model.ts';

/**
 * A sensor_msgs/JointState of the controller's state, stamped with `stampMs` (epoch ms).
 * Efforts come from the model's inverse dynamics at the state's position, velocity and
 * acceleration, so gravity shows in them.
 */
export function jointStateMsg(
  model: ArmModel,
  state: JointSample,
  stampMs: number,
  effortScratch: Float64Array,
): JointStateMsg {
  model.inverseDynamics(state.q, state.qd, state.qdd, effortScratch);
  return {
    header: { stamp: timeFromMs(stampMs), frame_id: '' },
    name: [...model.jointNames],
    position: Array.from(state.q),
    velocity: Array.from(state.qd),
    effort: Array.from(effortScratch),
  };
}
