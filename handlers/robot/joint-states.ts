import * as v from 'valibot';
import { errorResponse, jsonText, unavailable } from '../../lib/http/errors.ts';
import type { RouteSpec } from '../../lib/http/route-spec.ts';
import { ErrorDetailSchema } from '../../lib/http/schemas.ts';
import { ros } from '../../lib/ros/context.ts';
import { currentJointState } from '../../lib/ros/joint-state.ts';

/** sensor_msgs/JointState as the API returns it: four arrays in J1..J7 order. */
export const JointStateSchema = v.pipe(
  v.object({
    name: v.pipe(
      v.array(v.string()),
      v.description('Joint names, joint1 to joint7.'),
      v.examples([['joint1', 'joint2', 'joint3', 'joint4', 'joint5', 'joint6', 'joint7']]),
    ),
    position: v.pipe(v.array(v.number()), v.description('Joint angles in radians, same order as name.')),
    velocity: v.pipe(v.array(v.number()), v.description('Joint velocities in rad/s, same order as name.')),
    effort: v.pipe(v.array(v.number()), v.description('Joint torques in N m, same order as name.')),
  }),
  v.title('JointState'),
);

export const route = {
  method: 'GET',
  path: '/robot/joint_states',
  operationId: 'getJointStates',
  summary: 'Current joint state',
  description:
    'The latest message of the joint-state topic. If none arrived in the last 2 s, waits up to 2 s for one; if none comes, 503.',
  tags: ['robot'],
  responses: {
    200: { description: 'The latest joint state.', schema: JointStateSchema },
    503: { description: 'No joint state from the controller within 2 s.', schema: ErrorDetailSchema },
  },
} as const satisfies RouteSpec;

/** The serialized body of the latest message: it changes at the publish rate, reads come far more often. */
const bodies = new WeakMap<object, string>();

/** GET /robot/joint_states */
export async function handler(_request: Request): Promise<Response> {
  const state = await currentJointState(ros());
  if (!state.ok) return errorResponse(unavailable(state.error));
  let body = bodies.get(state.value);
  if (body === undefined) {
    const { name, position, velocity, effort } = state.value;
    body = JSON.stringify({ name, position, velocity, effort });
    bodies.set(state.value, body);
  }
  return jsonText(body);
}
