import type { MainModule, MjData, MjModel } from 'mujoco-js';
import { loadMujocoModule } from './mujoco.ts';

/** A link pose: position in metres and a row-major 3x3 rotation, both in base_link. */
export interface LinkPose {
  readonly positionM: Float64Array;
  readonly rotation: Float64Array;
}

let modelCounter = 0;

/**
 * The simulated arm's model in MuJoCo, loaded from the robot description (URDF): forward
 * kinematics of every link and inverse dynamics (joint efforts). Joints are addressed in the
 * order of `jointNames`; one MjData is kept as scratch, so calls are synchronous and not
 * re-entrant (JavaScript's single thread guarantees that).
 */
export class ArmModel {
  readonly jointNames: readonly string[];
  private readonly mj: MainModule;
  private readonly model: MjModel;
  private readonly data: MjData;
  /** qpos address of each joint, in `jointNames` order. */
  private readonly qposAdr: Int32Array;
  private readonly dofAdr: Int32Array;
  private readonly bodyIds = new Map<string, number>();

  private constructor(mj: MainModule, model: MjModel, jointNames: readonly string[]) {
    this.mj = mj;
    this.model = model;
    this.data = new mj.MjData(model);
    this.jointNames = jointNames;
    this.qposAdr = new Int32Array(jointNames.length);
    this.dofAdr = new Int32Array(jointNames.length);
    const jntQposAdr = model.jnt_qposadr as Int32Array;
    const jntDofAdr = model.jnt_dofadr as Int32Array;
    jointNames.forEach((name, i) => {
      const id = mj.mj_name2id(model, mj.mjtObj.mjOBJ_JOINT.value, name);
      if (id < 0) throw new Error(`robot description has no joint '${name}'`);
      this.qposAdr[i] = jntQposAdr[id] ?? 0;
      this.dofAdr[i] = jntDofAdr[id] ?? 0;
    });
    for (let b = 0; b < model.nbody; b++) {
      const name = mj.mj_id2name(model, mj.mjtObj.mjOBJ_BODY.value, b);
      if (name) this.bodyIds.set(name, b);
    }
  }

  /** Loads a URDF (or MJCF) text into MuJoCo. Throws with MuJoCo's message when it cannot. */
  static async load(descriptionXml: string, jointNames: readonly string[]): Promise<ArmModel> {
    const mj = await loadMujocoModule();
    const dir = `/armgate-model-${++modelCounter}`;
    mj.FS.mkdir(dir);
    const isUrdf = /<robot[\s>]/.test(descriptionXml);
    const file = `${dir}/robot.${isUrdf ? 'urdf' : 'xml'}`;
    mj.FS.writeFile(file, descriptionXml);
    const model = mj.MjModel.loadFromXML(file);
    return new ArmModel(mj, model, jointNames);
  }

  /** Names of all links (bodies) of the model. */
  linkNames(): string[] {
    return [...this.bodyIds.keys()];
  }

  /** True when the model has a link of this name. */
  hasLink(name: string): boolean {
    return this.bodyIds.has(name);
  }

  private setState(qRad: ArrayLike<number>, qdRadS?: ArrayLike<number>, qddRadS2?: ArrayLike<number>): void {
    const qpos = this.data.qpos as Float64Array;
    const qvel = this.data.qvel as Float64Array;
    const qacc = this.data.qacc as Float64Array;
    for (let i = 0; i < this.jointNames.length; i++) {
      qpos[this.qposAdr[i] ?? 0] = qRad[i] ?? 0;
      const dof = this.dofAdr[i] ?? 0;
      qvel[dof] = qdRadS?.[i] ?? 0;
      qacc[dof] = qddRadS2?.[i] ?? 0;
    }
  }

  /**
   * Pose of `link` in base_link at joint angles `qRad`, written into `out`.
   * Returns false when the model has no such link.
   */
  linkPose(qRad: ArrayLike<number>, link: string, out: LinkPose): boolean {
    const id = this.bodyIds.get(link);
    if (id === undefined) return false;
    this.setState(qRad);
    this.mj.mj_kinematics(this.model, this.data);
    const xpos = this.data.xpos as Float64Array;
    const xmat = this.data.xmat as Float64Array;
    for (let k = 0; k < 3; k++) out.positionM[k] = xpos[3 * id + k] ?? 0;
    for (let k = 0; k < 9; k++) out.rotation[k] = xmat[9 * id + k] ?? 0;
    return true;
  }

  /**
   * Joint efforts (N m) that produce acceleration `qddRadS2` at position `qRad` and velocity
   * `qdRadS` under gravity: MuJoCo's inverse dynamics. With zero velocity and acceleration these
   * are the torques that hold the arm against gravity.
   */
  inverseDynamics(qRad: ArrayLike<number>, qdRadS: ArrayLike<number>, qddRadS2: ArrayLike<number>, out: Float64Array): Float64Array {
    this.setState(qRad, qdRadS, qddRadS2);
    this.mj.mj_inverse(this.model, this.data);
    const tau = this.data.qfrc_inverse as Float64Array;
    for (let i = 0; i < this.jointNames.length; i++) out[i] = tau[this.dofAdr[i] ?? 0] ?? 0;
    return out;
  }

  /** Frees the WebAssembly memory held by the model. */
  dispose(): void {
    this.data.delete();
    this.model.delete();
  }
}
