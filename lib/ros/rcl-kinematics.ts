/**
 * Kinematics through the stack's MoveIt services over rclnodejs: forward kinematics (compute_fk) and inverse
 * kinematics (compute_ik, seeded with the latest joint state), their answers mapped to armgate's.
 */
import { matFromAbc, quatFromMat } from '../kinematics/rotation.ts';
import { err, ok, type Result } from '../result.ts';
import { ikFailureMessage } from './answers.ts';
import type { IkOptions, InterfaceUnavailable, ReceivedJointState } from './context.ts';
import { fkRequestToRos, fkResponseFromRos, ikRequestToRos, ikResponseFromRos, jointStateByName } from './convert.ts';
import type { EndpointsFile } from '../settings/endpoints.ts';
import {
  durationFromS,
  type GetPositionFkRequest,
  type GetPositionFkResponse,
  type IkAnswer,
  type IkRequest,
  type JointStateMsg,
  MOVEIT_SUCCESS,
} from './messages.ts';
import { type RclCalls, unavailable } from './rcl-calls.ts';

const emptyJointState = (): JointStateMsg => ({
  header: { stamp: { sec: 0, nanosec: 0 }, frame_id: '' },
  name: [],
  position: [],
  velocity: [],
  effort: [],
});

/** Forward kinematics by the stack's FK service. */
export async function computeFkOverRos(
  calls: RclCalls,
  endpoints: EndpointsFile,
  request: GetPositionFkRequest,
): Promise<Result<GetPositionFkResponse, InterfaceUnavailable>> {
  const iface = endpoints.interfaces.compute_fk;
  const answer = await calls.call(iface, 'FK service', fkRequestToRos(request), endpoints.timeouts.fk_s * 1000);
  if (!answer.ok) return answer;
  const response = fkResponseFromRos(answer.value);
  return response.ok
    ? response
    : err(unavailable(iface.name, `FK service ${iface.name} gave a malformed response: ${response.error}`));
}

/** Inverse kinematics by the stack's IK service, seeded with the request's seed or the latest joint state. */
export async function solveIkOverRos(
  calls: RclCalls,
  endpoints: EndpointsFile,
  latestState: ReceivedJointState | undefined,
  request: IkRequest,
  options: IkOptions = {},
): Promise<Result<IkAnswer, InterfaceUnavailable>> {
  const iface = endpoints.interfaces.compute_ik;
  const { planning_group, planning_frame, tcp_link, joint_names, timeouts } = endpoints;
  const frame = request.frame_id || planning_frame;
  const latest = latestState ? jointStateByName(latestState.msg, joint_names) : undefined;
  const seed = request.seed ?? (latest?.ok ? latest.value.position : undefined);
  const orientation = quatFromMat(matFromAbc(new Float64Array(9), request.a, request.b, request.c));
  const rosRequest = ikRequestToRos({
    ik_request: {
      group_name: planning_group,
      // No seed and no joint state: an empty robot state, which MoveIt fills with its current one.
      robot_state: {
        joint_state: seed ? { name: [...joint_names], position: [...seed] } : { name: [], position: [] },
      },
      avoid_collisions: request.collision_check,
      ik_link_name: tcp_link,
      pose_stamped: {
        header: { stamp: { sec: 0, nanosec: 0 }, frame_id: frame },
        pose: { position: { x: request.x, y: request.y, z: request.z }, orientation },
      },
      // MoveIt's compute_ik reads only timeout.sec (whole seconds; 0 is its solver's 5 ms default).
      timeout: durationFromS(Math.max(1, Math.ceil(timeouts.ik_s))),
    },
  });
  const waitMs = (Math.max(1, Math.ceil(timeouts.ik_s)) + timeouts.fk_s) * 1000;
  const answer = await calls.callOrAbort(iface, 'IK service', rosRequest, waitMs, options.signal);
  if (!answer.ok) return answer;
  if ('aborted' in answer.value) return ok({ success: false, message: answer.value.aborted });
  const response = ikResponseFromRos(answer.value.value);
  if (!response.ok)
    return err(unavailable(iface.name, `IK service ${iface.name} gave a malformed response: ${response.error}`));
  const val = response.value.error_code.val;
  if (val !== MOVEIT_SUCCESS)
    return ok({
      success: false,
      message: ikFailureMessage(val, frame, request, { tcp_link, planning_group, ik_s: timeouts.ik_s }),
    });
  const solution = jointStateByName({ ...emptyJointState(), ...response.value.solution.joint_state }, joint_names);
  if (!solution.ok)
    return err(
      unavailable(iface.name, `IK service ${iface.name} answered a solution without ${solution.error.join(', ')}`),
    );
  const how = request.collision_check ? ' free of collisions' : '';
  return ok({
    success: true,
    joints: solution.value.position,
    message: `solution from MoveIt's ${iface.name}${how}`,
  });
}
