import * as v from 'valibot';
import { unavailable } from '../../lib/core/errors.ts';
import { defineOperation } from '../../lib/core/operation.ts';
import { restHandler } from '../../lib/http/rest.ts';
import { err, ok } from '../../lib/result.ts';

/** A named position: an SRDF group state. */
export const NamedPositionSchema = v.pipe(
  v.object({
    name: v.pipe(v.string(), v.examples(['home'])),
    description: v.string(),
    group: v.pipe(v.string(), v.description('Planning group the state belongs to.'), v.examples(['iiwa_arm'])),
    joints: v.pipe(
      v.record(v.string(), v.number()),
      v.description('Target joint angles in radians by joint name (joint1..joint7), as the robot stack gives them.'),
      v.examples([{ joint1: 0, joint2: 0, joint3: 0, joint4: 0, joint5: 0, joint6: 0, joint7: 0 }]),
    ),
  }),
  v.title('NamedPosition'),
);

/** The named positions. */
export const operation = defineOperation({
  name: 'list_named_positions',
  summary: 'Named positions',
  description:
    "The planning group's named positions (e.g. home, work, transport) from the robot's semantic description (SRDF), with " +
    'their planning group and 7 joint angles in radians. Move to one with {op:move_to_named_position}.',
  effect: 'read',
  idempotent: true,
  output: v.array(NamedPositionSchema),
  errors: { unavailable: 'The semantic description could not be read from the stack.' },
  rest: {
    method: 'GET',
    path: '/robot/positions',
    operationId: 'listNamedPositions',
    tags: ['robot'],
    ok: 'The named positions.',
  },
  mcp: { title: 'Named positions', wrapAs: 'positions' },
  run: async (_input, ctx) => {
    const context = ctx.ros;
    const states = await context.groupStates();
    if (!states.ok) return err(unavailable(states.error));
    return ok(
      states.value.map((s) => ({
        name: s.name,
        description: context.describeState(s.name),
        group: s.group,
        joints: Object.fromEntries(context.endpoints.joint_names.map((name, i) => [name, s.jointsRad[i] ?? 0])),
      })),
    );
  },
});

/** GET /robot/positions */
export const handler = restHandler(operation);
