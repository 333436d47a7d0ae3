import type { JointStateMsg } from '../ros/messages.ts';
import { timeFromMs } from '../ros/messages.ts';
import type { ArmModel } from './model.ts';

/**
 * The simulated arm's joint state: positions, velocities and accelerations in J1..J7 order.
 * Efforts come from the model's inverse dynamics, so gravity shows in them.
 */
export class SimArm {
  readonly qRad: Float64Array;
  readonly qdRadS: Float64Array;
  readonly qddRadS2: Float64Array;
  private readonly model: ArmModel;
  private readonly effortNm: Float64Array;

  constructor(model: ArmModel, initialRad: readonly number[]) {
    const n = model.jointNames.length;
    this.model = model;
    this.qRad = Float64Array.from(initialRad);
    this.qdRadS = new Float64Array(n);
    this.qddRadS2 = new Float64Array(n);
    this.effortNm = new Float64Array(n);
  }

  /** A sensor_msgs/JointState of the current state, stamped with `stampMs` (epoch ms). */
  jointStateMsg(stampMs: number): JointStateMsg {
    this.model.inverseDynamics(this.qRad, this.qdRadS, this.qddRadS2, this.effortNm);
    return {
      header: { stamp: timeFromMs(stampMs), frame_id: '' },
      name: [...this.model.jointNames],
      position: Array.from(this.qRad),
      velocity: Array.from(this.qdRadS),
      effort: Array.from(this.effortNm),
    };
  }
}
