/** The simulator's forward kinematics service (MoveIt's compute_fk): link poses, the TCP with the tool offset. */
import { quatFromMat } from '../kinematics/rotation.ts';
import type { InterfaceUnavailable } from '../ros/context.ts';
import type { EndpointsFile } from '../settings/endpoints.ts';
import {
  type GetPositionFkRequest,
  type GetPositionFkResponse,
  MOVEIT_FRAME_TRANSFORM_FAILURE,
  MOVEIT_INVALID_LINK_NAME,
  MOVEIT_SUCCESS,
  type PoseStampedMsg,
} from '../ros/messages.ts';
import { ok, type Result } from '../result.ts';
import type { ArmModel, LinkPose } from './model.ts';

/** compute_fk on the simulator's model (lib/sim/context.ts serves it). */
export class SimFkService {
  private readonly model: ArmModel;
  private readonly endpoints: EndpointsFile;
  private readonly toolPos: Float64Array;
  private readonly toolRot: Float64Array;
  private readonly scratch: LinkPose = { positionM: new Float64Array(3), rotation: new Float64Array(9) };

  constructor(model: ArmModel, endpoints: EndpointsFile, toolPos: Float64Array, toolRot: Float64Array) {
    this.model = model;
    this.endpoints = endpoints;
    this.toolPos = toolPos;
    this.toolRot = toolRot;
  }

  /** The poses of `request.fk_link_names`; joints the request leaves out take their value in `current`. */
  compute(
    request: GetPositionFkRequest,
    current: ArrayLike<number>,
  ): Result<GetPositionFkResponse, InterfaceUnavailable> {
    const frame = request.header.frame_id;
    const fail = (val: number): Result<GetPositionFkResponse, InterfaceUnavailable> =>
      ok({ pose_stamped: [], fk_link_names: [], error_code: { val } });
    if (frame !== '' && frame !== this.endpoints.planning_frame) return fail(MOVEIT_FRAME_TRANSFORM_FAILURE);
    // Joints the request leaves out take their current value, as MoveIt fills a partial robot state.
    const q = Float64Array.from(current);
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
      const [tx = 0, ty = 0, tz = 0] = this.toolPos;
      position = {
        x: position.x + (r[0] ?? 0) * tx + (r[1] ?? 0) * ty + (r[2] ?? 0) * tz,
        y: position.y + (r[3] ?? 0) * tx + (r[4] ?? 0) * ty + (r[5] ?? 0) * tz,
        z: position.z + (r[6] ?? 0) * tx + (r[7] ?? 0) * ty + (r[8] ?? 0) * tz,
      };
      rotation = mul3(r, this.toolRot);
    }
    return {
      header: { stamp: { sec: 0, nanosec: 0 }, frame_id: this.endpoints.planning_frame },
      pose: { position, orientation: quatFromMat(rotation) },
    };
  }
}

function mul3(a: ArrayLike<number>, b: ArrayLike<number>): Float64Array {
  const out = new Float64Array(9);
  for (let i = 0; i < 3; i++) {
    for (let j = 0; j < 3; j++) {
      out[3 * i + j] =
        (a[3 * i] ?? 0) * (b[j] ?? 0) + (a[3 * i + 1] ?? 0) * (b[3 + j] ?? 0) + (a[3 * i + 2] ?? 0) * (b[6 + j] ?? 0);
    }
  }
  return out;
}
