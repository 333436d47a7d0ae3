import * as v from 'valibot';
import { abcFromQuat } from '../../lib/kinematics/rotation.ts';
import { type ApiError, unavailable } from '../../lib/core/errors.ts';
import { defineOperation } from '../../lib/core/operation.ts';
import { restHandler } from '../../lib/http/rest.ts';
import { err, ok, type Result } from '../../lib/result.ts';
import type { RobotContext } from '../../lib/ros/context.ts';
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
    frame: v.pipe(
      v.object({
        parent: v.pipe(v.string(), v.description('The frame of the pose (as frame_id).')),
        child: v.pipe(v.string(), v.description('The TCP link whose pose this is.')),
      }),
      v.description("The transform's frames, as the robot stack reported them."),
    ),
  }),
  v.title('TcpPose'),
);

const DEG = 180 / Math.PI;

/** The TCP pose. */
export type TcpPose = v.InferOutput<typeof TcpPoseSchema>;

/** The TCP pose of the current joint state, through the FK service. */
export async function readTcpPose(context: RobotContext): Promise<Result<TcpPose, ApiError>> {
  const state = await currentJointState(context);
  if (!state.ok) return err(unavailable(state.error));
  const { planning_frame: frame, tcp_link: link, interfaces } = context.endpoints;
  const fk = await context.computeFk({
    header: { stamp: state.value.header.stamp, frame_id: frame },
    fk_link_names: [link],
    robot_state: { joint_state: { name: state.value.name, position: state.value.position } },
  });
  if (!fk.ok) return err(unavailable(fk.error));
  const pose = fk.value.pose_stamped[0];
  if (fk.value.error_code.val !== MOVEIT_SUCCESS || !pose) {
    return err(
      unavailable({
        message: `FK service ${interfaces.compute_fk.name} failed for link '${link}' in '${frame}' (MoveIt error code ${fk.value.error_code.val})`,
      }),
    );
  }
  const q = pose.pose.orientation;
  const abc = abcFromQuat(q);
  const parent = pose.header.frame_id || frame;
  return ok({
    frame_id: parent,
    position: pose.pose.position,
    orientation: {
      quaternion: { x: q.x, y: q.y, z: q.z, w: q.w },
      euler_rad: abc,
      euler_deg: { a: abc.a * DEG, b: abc.b * DEG, c: abc.c * DEG },
    },
    frame: { parent, child: link },
  });
}

/** The current TCP pose. */
export const operation = defineOperation({
  name: 'get_tcp_pose',
  summary: 'TCP pose',
  description:
    'Current pose of the tool centre point in the planning frame (base_link), by forward kinematics of the current joint state ' +
    'through the FK service: position in metres, orientation as a unit quaternion and as KUKA ABC angles (A about Z, then B ' +
    'about Y, then C about X) in radians and degrees.',
  effect: 'read',
  idempotent: true,
  output: TcpPoseSchema,
  errors: { unavailable: 'Joint states or the FK service are unavailable.' },
  rest: { method: 'GET', path: '/robot/pose', operationId: 'getTcpPose', tags: ['robot'], ok: 'The TCP pose.' },
  mcp: { title: 'TCP pose' },
  needs: [],
  run: (_input, ctx) => readTcpPose(ctx.ros),
});

/** GET /robot/pose */
export const handler = restHandler(operation);
