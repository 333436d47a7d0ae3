import * as v from 'valibot';
import { MOTION_NEEDS, moveOperation, runMotion } from '../../lib/ops/motion.ts';
import { defineOperation } from '../../lib/core/operation.ts';
import { perLimits } from '../../lib/robot/limits.ts';
import { restHandler } from '../../lib/http/rest.ts';
import { DRY_RUN_NEEDS, dryRun } from '../../lib/ops/plan.ts';
import { DryRunSchema } from '../../lib/plans/schema.ts';
import { jointsSchema, SpeedSchema } from '../../lib/motion/vocabulary.ts';
import { MOTION_NOTE } from '../../lib/ops/texts.ts';

/** Input of move_to_joints, with the bounds of the active joint limits. */
export const inputSchema = perLimits((limits) =>
  v.pipe(
    v.strictObject({
      joints: jointsSchema(limits, 'Target angles J1..J7 in radians, exactly 7, each within its joint limits.'),
      speed: SpeedSchema,
      dry_run: DryRunSchema,
    }),
    v.title('MoveJointsRequest'),
  ),
);

/** Moves the 7 joints to the given angles (PTP). */
export const operation = defineOperation({
  name: 'move_to_joints',
  summary: 'Move by seven joint angles',
  description:
    'PTP motion to the given joint angles: all joints start and stop together under the joint limits scaled by speed ' +
    `(0.01..1, default 0.1). ${MOTION_NOTE}`,
  ...moveOperation('/robot/move/joints', 'moveToJoints', { joints: [0.3, 0, 0, -1.57, 0, 1.57, 0], speed: 0.2 }),
  input: inputSchema,
  mcp: { title: 'Move to joint angles' },
  needs: [...MOTION_NEEDS, ...DRY_RUN_NEEDS],
  run: ({ joints, speed, dry_run }, ctx) =>
    dry_run
      ? dryRun(ctx, 'moving to joint angles', { kind: 'joints', goal: { joints: joints as number[], speed } })
      : runMotion(ctx, 'moving to joint angles', (options) =>
          ctx.ros.moveToJoints({ joints: joints as number[], speed }, options),
        ),
});

/** POST /robot/move/joints */
export const handler = restHandler(operation);
