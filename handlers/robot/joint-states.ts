import * as v from 'valibot';
import { unavailable } from '../../lib/core/errors.ts';
import { defineOperation } from '../../lib/core/operation.ts';
import { restHandler } from '../../lib/http/rest.ts';
import { err, ok } from '../../lib/result.ts';

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

/** The latest joint state, as returned: one object per message, so the REST face serializes it once. */
const answers = new WeakMap<object, v.InferOutput<typeof JointStateSchema>>();

/** The current joint state. */
export const operation = defineOperation({
  name: 'get_joint_states',
  summary: 'Current joint state',
  description:
    'Current joint angles (rad), velocities (rad/s) and torques (N m) of the 7 joints joint1..joint7: the latest message of ' +
    'the joint-state topic. If none arrived in the last 2 s, waits up to 2 s for one; if none comes, it fails as unavailable.',
  effect: 'read',
  idempotent: true,
  output: JointStateSchema,
  errors: { unavailable: 'No joint state from the controller within 2 s.' },
  rest: {
    method: 'GET',
    path: '/robot/joint_states',
    operationId: 'getJointStates',
    tags: ['robot'],
    ok: 'The latest joint state.',
  },
  mcp: { title: 'Joint states' },
  needs: [],
  run: async (_input, ctx) => {
    const state = await ctx.ros.jointStateCache.current();
    if (!state.ok) return err(unavailable(state.error));
    let answer = answers.get(state.value);
    if (answer === undefined) {
      const { name, position, velocity, effort } = state.value;
      answer = { name, position, velocity, effort };
      answers.set(state.value, answer);
    }
    return ok(answer);
  },
});

/** GET /robot/joint_states */
export const handler = restHandler(operation);
