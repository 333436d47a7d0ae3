import * as v from 'valibot';
import { type ApiError, invalid, unavailable } from '../../lib/core/errors.ts';
import { AccelScaleSchema, SpeedSchema } from '../../lib/motion/vocabulary.ts';
import { MOTION_NEEDS, type MotionResult, moveOperation, runMotion } from '../../lib/ops/motion.ts';
import { defineOperation } from '../../lib/core/operation.ts';
import { restHandler } from '../../lib/http/rest.ts';
import { DRY_RUN_NEEDS, dryRun } from '../../lib/ops/plan.ts';
import { findPosition } from '../../lib/ops/positions.ts';
import { DryRunSchema } from '../../lib/plans/schema.ts';
import { MOTION_NOTE } from '../../lib/ops/texts.ts';
import { err, type Result } from '../../lib/result.ts';

/** Input of move_to_named_position. */
export const inputSchema = v.pipe(
  v.strictObject({
    name: v.pipe(
      v.string('name must be a string'),
      v.minLength(1, 'must not be empty'),
      v.maxLength(128, 'at most 128 characters'),
      v.description('A position name from {op:list_named_positions}: of the robot description, or taught.'),
      v.examples(['home']),
    ),
    speed: SpeedSchema,
    accel_scale: AccelScaleSchema,
    dry_run: DryRunSchema,
  }),
  v.title('MoveNamedRequest'),
);

/** Moves the arm to a named position (PTP). */
export const operation = defineOperation({
  name: 'move_to_named_position',
  summary: 'Move to a named position',
  description:
    'PTP motion to a named position: of the robot description (an SRDF group state, e.g. home, work) or taught with ' +
    `{op:save_position} (see {op:list_named_positions}). speed 0.01..1 (fraction of the velocity limits, default 0.1); accel_scale 0..1 (0 = as speed). ${MOTION_NOTE}`,
  ...moveOperation('/robot/move/named', 'moveToNamedPosition', { name: 'work', speed: 0.2 }),
  input: inputSchema,
  mcp: { title: 'Move to a named position' },
  needs: [...MOTION_NEEDS, ...DRY_RUN_NEEDS, 'positions'],
  run: async ({ name, speed, accel_scale, dry_run }, ctx): Promise<Result<MotionResult, ApiError>> => {
    const context = ctx.ros;
    const looked = await findPosition(ctx, name);
    if (!looked.ok) return err(unavailable(looked.error));
    const found = looked.value.found;
    if (!found)
      return err(
        invalid(['body', 'name'], `unknown named position '${name}'; known: ${looked.value.known.join(', ')}`),
      );
    if (found.source === 'taught') {
      // The stack's MoveToNamedPose knows the SRDF's names only: a taught position is a joint target.
      const goal = { joints: [...found.jointsRad], speed, accel_scale };
      const what = `moving to '${name}' (taught)`;
      if (dry_run) return dryRun(ctx, what, { kind: 'joints', goal });
      return runMotion(ctx, what, (options) => context.moveToJoints(goal, options));
    }
    if (dry_run) return dryRun(ctx, `moving to '${name}'`, { kind: 'named', request: { name, speed, accel_scale } });
    return runMotion(ctx, `moving to '${name}'`, (options) =>
      context.moveToNamed({ name, speed, accel_scale }, options),
    );
  },
});

/** POST /robot/move/named */
export const handler = restHandler(operation);
