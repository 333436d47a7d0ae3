import { toJsonSchema } from '@valibot/to-json-schema';
import * as v from 'valibot';
import { defineOperation } from '../../lib/core/operation.ts';
import { restHandler } from '../../lib/http/rest.ts';
import { savePosition, TEACH_NEEDS } from '../../lib/ops/teach.ts';
import { POSITION_NAME, POSITION_NAME_RULE } from '../../lib/positions/taught.ts';
import { describeLimitViolation, jointRange, perLimits } from '../../lib/robot/limits.ts';

/** A taught position's name (the path's {name} over REST). */
export const PositionNameSchema = v.pipe(
  v.string('name must be a string'),
  v.regex(POSITION_NAME, `the name must be ${POSITION_NAME_RULE}`),
  v.description(`The position's name: ${POSITION_NAME_RULE}.`),
  v.examples(['pick_1']),
);

/** What save_position and delete_position answer. */
export const TeachResultSchema = v.pipe(
  v.object({
    success: v.literal(true),
    message: v.string(),
    name: v.string(),
    source: v.literal('taught'),
    joints: v.pipe(v.record(v.string(), v.number()), v.description('Its joint angles in radians by joint name.')),
    created: v.optional(
      v.pipe(v.boolean(), v.description('save_position: true for a new name, false when it replaced one.')),
    ),
  }),
  v.title('TeachResult'),
);

/** The angles to save, by joint name: every joint of the limits, each within its range; an array is refused as such. */
const jointsByName = perLimits((limits) => {
  const entries = Object.fromEntries(
    limits.jointNames.map((joint, i) => {
      const { min, max } = jointRange(limits, i);
      const outside = (issue: v.BaseIssue<unknown>) => describeLimitViolation({ joint, value: issue.input, min, max });
      return [
        joint,
        v.pipe(
          v.number(`${joint} must be a number (rad)`),
          v.finite('must be a finite number'),
          v.minValue(min, outside),
          v.maxValue(max, outside),
          v.description(`${joint} (J${i + 1}) in radians, ${min} to ${max}.`),
        ),
      ];
    }),
  );
  const byName = v.strictObject(
    entries,
    `expected an object of angles by joint name {${limits.jointNames[0]}: rad, ...}`,
  );
  const notArray = v.pipe(
    v.array(v.unknown()),
    v.check(
      () => false,
      `expected an object of angles by joint name {${limits.jointNames[0]}: rad, ...}, not an array`,
    ),
  );
  const { $schema: _s, ...documented } = toJsonSchema(byName, { errorMode: 'ignore', target: 'draft-2020-12' });
  return v.pipe(
    v.lazy((input) => (Array.isArray(input) ? notArray : byName)),
    v.metadata({ openapi: documented }),
    v.description(
      `The angles to save, every joint by name (${limits.jointNames.join(', ')}), each within its limits. ` +
        'Absent: where the arm stands now (it must be at rest).',
    ),
  );
});

/** Input of save_position, with the bounds of the active joint limits. */
export const inputSchema = perLimits((limits) =>
  v.pipe(
    v.strictObject({ name: PositionNameSchema, joints: v.optional(jointsByName(limits)) }),
    v.title('SavePositionRequest'),
  ),
);

/** Saves a named position (teach). */
export const operation = defineOperation({
  name: 'save_position',
  summary: 'Teach a named position',
  description:
    'Saves a named position, as on a pendant: where the arm stands now (it must be at rest), or the given joint angles ' +
    '(all 7, by joint name). The angles must be within the joint limits and the safety envelope. A taught position of ' +
    'the same name is replaced; a position of the robot description (SRDF: home, work, ...) is read-only (409). Kept ' +
    'across restarts (armgate.positions_file). Usable wherever a named position is: {op:move_to_named_position}, ' +
    'sequences ({position: name}), {op:list_named_positions}. Never moves the arm; remove one with {op:delete_position}.',
  effect: 'write',
  idempotent: true,
  countedInBursts: true,
  input: inputSchema,
  output: TeachResultSchema,
  errors: {
    conflict:
      "The name is one of the robot description's positions (read-only), the arm is moving (saving where it stands), " +
      'or 1000 positions are taught already: nothing was saved.',
    unavailable: 'No joint state (where the arm stands is unknown), or the SRDF could not be read.',
    internal: 'armgate.positions_file could not be written (a full disk, a read-only folder): nothing was saved.',
  },
  rest: {
    method: 'PUT',
    path: '/robot/positions/{name}',
    operationId: 'savePosition',
    tags: ['robot'],
    body: 'json',
    params: ['name'],
    ok: 'The position is saved (created tells whether it is new).',
    example: { joints: { joint1: 0.3, joint2: 0.4, joint3: 0, joint4: -1.4, joint5: 0, joint6: 1.3, joint7: 0 } },
  },
  mcp: { title: 'Teach a named position' },
  // An array never passes validation (notArray fails): what arrives is the object by joint name.
  needs: TEACH_NEEDS,
  run: ({ name, joints }, ctx) => savePosition(ctx, name, joints as Readonly<Record<string, number>> | undefined),
});

/** PUT /robot/positions/{name} */
export const handler = restHandler(operation);
