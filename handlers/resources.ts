import type { AnyOperation, OpContext, Resource } from '../lib/core/operation.ts';
import { operation as jointStates } from './robot/joint-states.ts';
import { operation as pose } from './robot/pose.ts';
import { operation as positions } from './robot/positions.ts';
import { operation as safety } from './robot/safety.ts';

/** A read operation's output, or its error under `error`. */
async function read(op: AnyOperation, ctx: OpContext): Promise<unknown> {
  const result = await op.run({}, ctx);
  return result.ok ? result.value : { error: 'detail' in result.error ? result.error.detail : result.error.kind };
}

/** The MCP resources: read operations, and the active joint limits. */
export const resources: readonly Resource[] = [
  {
    uri: 'armgate://robot/state',
    name: 'robot_state',
    title: 'Robot state',
    description: 'Joint states and TCP pose right now.',
    mimeType: 'application/json',
    read: async (ctx) => ({ joint_states: await read(jointStates, ctx), tcp_pose: await read(pose, ctx) }),
  },
  {
    uri: 'armgate://robot/positions',
    name: 'named_positions',
    title: 'Named positions',
    description:
      "The named positions with their joint angles (rad): the robot description's (source srdf, read-only) and the " +
      'taught ones (source taught).',
    mimeType: 'application/json',
    read: (ctx) => read(positions, ctx),
  },
  {
    uri: 'armgate://robot/joint_limits',
    name: 'joint_limits',
    title: 'Joint limits',
    description:
      'Active joint limits: position (rad), velocity (rad/s), acceleration (rad/s^2) per joint, and the Cartesian limits.',
    mimeType: 'application/json',
    read: async (ctx) => {
      const l = ctx.ros.limits;
      return {
        joints: l.jointNames.map((name, i) => ({
          name,
          min_rad: l.minRad[i],
          max_rad: l.maxRad[i],
          max_velocity_rad_s: l.maxVelRadS[i],
          max_acceleration_rad_s2: l.maxAccRadS2[i],
        })),
        cartesian: {
          max_trans_vel_m_s: l.cartesian.maxTransVelMS,
          max_trans_acc_m_s2: l.cartesian.maxTransAccMS2,
          max_rot_vel_rad_s: l.cartesian.maxRotVelRadS,
        },
      };
    },
  },
  {
    uri: 'armgate://robot/safety',
    name: 'safety_envelope',
    title: 'Safety envelope',
    description:
      'The workspace box the TCP never leaves and the keep-out boxes no link enters (m, planning frame), and how long a plan stays executable.',
    mimeType: 'application/json',
    read: (ctx) => read(safety, ctx),
  },
];
