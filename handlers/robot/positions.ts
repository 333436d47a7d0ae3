import * as v from 'valibot';
import { unavailable } from '../../lib/core/errors.ts';
import { defineOperation } from '../../lib/core/operation.ts';
import { restHandler } from '../../lib/http/rest.ts';
import { listPositions } from '../../lib/ops/positions.ts';
import { err, ok } from '../../lib/result.ts';

/** A named position: an SRDF group state, or a position taught with {op:save_position}. */
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
    source: v.pipe(
      v.picklist(['srdf', 'taught']),
      v.description(
        'srdf: a group state of the robot description (read-only); taught: saved with {op:save_position} (kept in ' +
          'armgate.positions_file, removed with {op:delete_position}).',
      ),
    ),
    saved_at: v.optional(v.pipe(v.string(), v.description('Taught positions: when it was saved (ISO 8601).'))),
    saved_by: v.optional(v.pipe(v.string(), v.description('Taught positions: the name of the token that saved it.'))),
  }),
  v.title('NamedPosition'),
);

/** The named positions. */
export const operation = defineOperation({
  name: 'list_named_positions',
  summary: 'Named positions',
  description:
    "The planning group's named positions: those of the robot's semantic description (SRDF: e.g. home, work, " +
    'transport; source srdf) and those taught with {op:save_position} (source taught), each with its planning group ' +
    'and 7 joint angles in radians. Move to one with {op:move_to_named_position}.',
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
  needs: ['positions'],
  run: async (_input, ctx) => {
    const listed = await listPositions(ctx);
    return listed.ok ? ok(listed.value) : err(unavailable(listed.error));
  },
});

/** GET /robot/positions */
export const handler = restHandler(operation);
