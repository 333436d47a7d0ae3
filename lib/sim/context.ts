import type { Config } from '../settings/load.ts';
import type { JointLimits } from '../robot/limits.ts';
import type { GroupState } from '../robot/srdf.ts';
import { matFromAbc } from '../kinematics/rotation.ts';
import { quatFromMat } from '../kinematics/rotation.ts';
import type { InterfaceUnavailable, ReceivedJointState, RobotContext } from '../ros/context.ts';
import type { EndpointsFile } from '../ros/endpoints.ts';
import {
  type GetPositionFkRequest,
  type GetPositionFkResponse,
  type JointStateMsg,
  MOVEIT_FRAME_TRANSFORM_FAILURE,
  MOVEIT_INVALID_LINK_NAME,
  MOVEIT_SUCCESS,
  type PoseStampedMsg,
} from '../ros/messages.ts';
import { ok, type Result } from '../result.ts';
import { SimArm } from './arm.ts';
import { type Clock, systemClock } from './clock.ts';
import { type LinkPose, ArmModel } from './model.ts';

/** The settings the simulated stack needs, taken from the loaded configuration. */
export type SimConfig = Pick<Config, 'endpoints' | 'limits' | 'robotDescriptionXml' | 'groupStates' | 'sim' | 'robot'>;

type Waiter = (msg: JointStateMsg) => void;

const DEFAULT_DESCRIPTION = 'Named position of the planning group, defined in the robot description (SRDF).';

/**
 * The embedded simulated stack: a MuJoCo model of the iiwa 7, its joint-state publisher and
 * FK service, serving the interface names of the endpoints file. A real implementation of the
 * context, not a mock: tests use it as they would a robot.
 */
export class SimContext implements RobotContext {
  readonly endpoints: EndpointsFile;
  readonly limits: JointLimits;
  private readonly model: ArmModel;
  private readonly arm: SimArm;
  private readonly clock: Clock;
  private readonly config: SimConfig;
  private readonly states: readonly GroupState[];
  private readonly toolRotation: Float64Array;
  private latest: ReceivedJointState | undefined;
  private waiters: Waiter[] = [];
  private publishTimer: ReturnType<typeof setInterval> | undefined;
  private readonly scratch: LinkPose = { positionM: new Float64Array(3), rotation: new Float64Array(9) };

  private constructor(config: SimConfig, model: ArmModel, clock: Clock) {
    this.config = config;
    this.endpoints = config.endpoints;
    this.limits = config.limits;
    this.model = model;
    this.clock = clock;
    this.states = config.groupStates ?? [];
    const initial = config.sim.initial_position;
    const initialRad = typeof initial === 'string' ? this.states.find((s) => s.name === initial)?.jointsRad : initial;
    if (!initialRad) throw new Error(`sim.initial_position '${String(initial)}' is not a named position`);
    this.arm = new SimArm(model, initialRad);
    const t = config.sim.tool_offset;
    this.toolRotation = matFromAbc(new Float64Array(9), t.a, t.b, t.c);
  }

  /** Loads the model and starts the joint-state publisher (unless `sim.publish_joint_states` is false). */
  static async create(config: SimConfig, clock: Clock = systemClock): Promise<SimContext> {
    const model = await ArmModel.load(config.robotDescriptionXml, config.endpoints.joint_names);
    const context = new SimContext(config, model, clock);
    context.start();
    return context;
  }

  private start(): void {
    if (!this.config.sim.publish_joint_states) return;
    const periodMs = 1000 / this.config.sim.joint_state_rate_hz;
    this.publishJointState();
    this.publishTimer = setInterval(() => this.publishJointState(), periodMs);
  }

  private publishJointState(): void {
    const msg = this.arm.jointStateMsg(this.clock.epochMs());
    this.latest = { msg, receivedAtMs: this.clock.nowMs() };
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) waiter(msg);
  }

  nowMs(): number {
    return this.clock.nowMs();
  }

  latestJointState(): ReceivedJointState | undefined {
    return this.latest;
  }

  nextJointState(timeoutMs: number): Promise<JointStateMsg | undefined> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        resolve(undefined);
      }, timeoutMs);
      const waiter: Waiter = (msg) => {
        clearTimeout(timer);
        resolve(msg);
      };
      this.waiters.push(waiter);
    });
  }

  async computeFk(request: GetPositionFkRequest): Promise<Result<GetPositionFkResponse, InterfaceUnavailable>> {
    const frame = request.header.frame_id;
    const fail = (val: number): Result<GetPositionFkResponse, InterfaceUnavailable> =>
      ok({ pose_stamped: [], fk_link_names: [], error_code: { val } });
    if (frame !== '' && frame !== this.endpoints.planning_frame) return fail(MOVEIT_FRAME_TRANSFORM_FAILURE);
    // Joints the request leaves out take their current value, as MoveIt fills a partial robot state.
    const q = Float64Array.from(this.arm.qRad);
    const { name, position } = request.robot_state.joint_state;
    name.forEach((joint, i) => {
      const index = this.model.jointNames.indexOf(joint);
      const value = position[i];
      if (index >= 0 && value !== undefined) q[index] = value;
    });
    const poses: PoseStampedMsg[] = [];
    for (const link of request.fk_link_names) {
      if (!this.model.linkPose(q, link, this.scratch)) return fail(MOVEIT_INVALID_LINK_NAME);
      poses.push(this.poseMsg(link));
    }
    return ok({ pose_stamped: poses, fk_link_names: [...request.fk_link_names], error_code: { val: MOVEIT_SUCCESS } });
  }

  /** The scratch pose as a PoseStamped; the TCP link carries the configured tool offset. */
  private poseMsg(link: string): PoseStampedMsg {
    const p = this.scratch.positionM;
    const r = this.scratch.rotation;
    let position = { x: p[0] ?? 0, y: p[1] ?? 0, z: p[2] ?? 0 };
    let rotation: Float64Array = r;
    if (link === this.endpoints.tcp_link) {
      const t = this.config.sim.tool_offset;
      position = {
        x: position.x + (r[0] ?? 0) * t.x + (r[1] ?? 0) * t.y + (r[2] ?? 0) * t.z,
        y: position.y + (r[3] ?? 0) * t.x + (r[4] ?? 0) * t.y + (r[5] ?? 0) * t.z,
        z: position.z + (r[6] ?? 0) * t.x + (r[7] ?? 0) * t.y + (r[8] ?? 0) * t.z,
      };
      rotation = mul3(r, this.toolRotation);
    }
    return {
      header: { stamp: { sec: 0, nanosec: 0 }, frame_id: this.endpoints.planning_frame },
      pose: { position, orientation: quatFromMat(rotation) },
    };
  }

  async groupStates(): Promise<Result<readonly GroupState[], InterfaceUnavailable>> {
    return ok(this.states);
  }

  describeState(name: string): string {
    return this.config.robot.positionDescriptions[name] ?? DEFAULT_DESCRIPTION;
  }

  async close(): Promise<void> {
    if (this.publishTimer) clearInterval(this.publishTimer);
    this.publishTimer = undefined;
    this.model.dispose();
  }
}

function mul3(a: ArrayLike<number>, b: ArrayLike<number>): Float64Array {
  const out = new Float64Array(9);
  for (let i = 0; i < 3; i++) {
    for (let j = 0; j < 3; j++) {
      out[3 * i + j] = (a[3 * i] ?? 0) * (b[j] ?? 0) + (a[3 * i + 1] ?? 0) * (b[3 + j] ?? 0) + (a[3 * i + 2] ?? 0) * (b[6 + j] ?? 0);
    }
  }
  return out;
}
