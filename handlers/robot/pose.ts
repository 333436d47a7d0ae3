import * as v from 'valibot';
import { abcFromQuat } from '../../lib/kinematics/rotation.ts';
import { errorResponse, json, unavailable } from '../../lib/http/errors.ts';
import type { RouteSpec } from '../../lib/http/route-spec.ts';
import { ErrorDetailSchema } from '../../lib/http/schemas.ts';
import { ros } from '../../lib/ros/context.ts';
import { currentJointState } from '../../lib/ros/joint-state.ts';
import { MOVEIT_SUCCESS } from '../../lib/ros/messages.ts';

const Abc = (unit: string) =>
  v.object({
    a: v.pipe(v.number(), v.description(`A: rotation about Z, ${unit}.`)),
    b: v.pipe(v.number(), v.description(`B: rotation about the new Y, ${unit}.`)),
    c: v.pipe(v.number(), v.description(`C: rotation about the new X, ${unit}.`)),
  });

/** The TCP pose resource. */
export const TcpPoseSchema = v.pipe(
  v.object({
    frame_id: v.pipe(v.string(), v.description('Frame the pose is expressed in (the planning frame, base_link).')),
    position: v.pipe(
      v.object({ x: v.number(), y: v.number(), z: v.number() }),
      v.description('TCP position in metres.'),
    ),
    orientation: v.object({
      quaternion: v.pipe(
        v.object({ x: v.number(), y: v.number(), z: v.number(), w: v.number() }),
        v.description('Unit quaternion, w >= 0.'),
      ),
      euler_rad: v.pipe(Abc('radians'), v.description('KUKA ABC angles: R = Rz(A) Ry(B) Rx(C).')),
      euler_deg: v.pipe(Abc('degrees'), v.description('The same ABC angles in degrees.')),
    }),
  }),
  v.title('TcpPose'),
);

export const route = {
  method: 'GET',
  path: '/robot/pose',
  operationId: 'getTcpPose',
  summary: 'TCP pose',
  description:
    'Forward kinematics of the current joint state through the FK service, for the TCP link in the planning frame (base_link).',
  tags: ['robot'],
  responses: {
    200: { description: 'The TCP pose.', schema: TcpPoseSchema },
    503: { description: 'Joint states or the FK service are unavailable.', schema: ErrorDetailSchema },
  },
} as const satisfies RouteSpec;

const DEG = 180 / Math.PI;

/** GET /robot/pose */
export async function handler(_request: Request): Promise<Response> {
  const context = ros();
  const state = await currentJointState(context);
  if (!state.ok) return errorResponse(unavailable(state.error));
  const { planning_frame: frame, tcp_link: link, interfaces } = context.endpoints;
  const fk = await context.computeFk({
    header: { stamp: state.value.header.stamp, frame_id: frame },
    fk_link_names: [link],
    robot_state: { joint_state: { name: state.value.name, position: state.value.position } },
  });
  if (!fk.ok) return errorResponse(unavailable(fk.error));
  const pose = fk.value.pose_stamped[0];
  if (fk.value.error_code.val !== MOVEIT_SUCCESS || !pose) {
    return errorResponse(
      unavailable({
        message: `FK service ${interfaces.compute_fk.name} failed for link '${link}' in '${frame}' (MoveIt error code ${fk.value.error_code.val})`,
      }),
    );
  }
  const q = pose.pose.orientation;
  const abc = abcFromQuat(q);
  return json({
    frame_id: pose.header.frame_id || frame,
    position: pose.pose.position,
    orientation: {
      quaternion: { x: q.x, y: q.y, z: q.z, w: q.w },
      euler_rad: abc,
      euler_deg: { a: abc.a * DEG, b: abc.b * DEG, c: abc.c * DEG },
    },
  });
}
