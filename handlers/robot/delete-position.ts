import * as v from 'valibot';
import { defineOperation } from '../../lib/core/operation.ts';
import { restHandler } from '../../lib/http/rest.ts';
import { deletePosition, TEACH_NEEDS } from '../../lib/ops/teach.ts';
import { PositionNameSchema, TeachResultSchema } from './save-position.ts';

/** Input of delete_position: the name (from the path over REST). */
export const inputSchema = v.pipe(v.strictObject({ name: PositionNameSchema }), v.title('DeletePositionRequest'));

/** Deletes a taught position. */
export const operation = defineOperation({
  name: 'delete_position',
  summary: 'Delete a taught position',
  description:
    'Removes a position taught with {op:save_position} (from the list and from armgate.positions_file). A position of ' +
    'the robot description (SRDF) is read-only (409); a name that is not taught is a 404. Never moves the arm.',
  effect: 'write',
  idempotent: true,
  countedInBursts: true,
  input: inputSchema,
  output: TeachResultSchema,
  errors: {
    not_found: 'No taught position of that name.',
    conflict: "The name is one of the robot description's positions: read-only.",
    unavailable: 'The SRDF could not be read.',
    internal: 'armgate.positions_file could not be written: nothing was deleted.',
  },
  rest: {
    method: 'DELETE',
    path: '/robot/positions/{name}',
    operationId: 'deletePosition',
    tags: ['robot'],
    params: ['name'],
    ok: 'The position is deleted; the answer carries what it was.',
  },
  mcp: { title: 'Delete a taught position' },
  needs: TEACH_NEEDS,
  run: ({ name }, ctx) => deletePosition(ctx, name),
});

/** DELETE /robot/positions/{name} */
export const handler = restHandler(operation);
