import * as v from 'valibot';
import { MOTION_ERRORS, MotionResultSchema } from '../../lib/ops/motion.ts';
import { defineOperation } from '../../lib/core/operation.ts';
import { EXECUTE_NEEDS, executePlan } from '../../lib/ops/plan.ts';
import { restHandler } from '../../lib/http/rest.ts';

/** Input of execute_plan: the plan's id (from the path over REST). */
export const inputSchema = v.pipe(
  v.strictObject({
    id: v.pipe(
      v.string('id must be a string'),
      v.regex(/^[A-Za-z0-9_-]{1,64}$/, 'expected a plan id as a dry run answered it'),
      v.description('The id of a plan a dry run answered (plan.id).'),
    ),
  }),
  v.title('ExecutePlanRequest'),
);

/** Executes a plan made by a dry run, once. */
export const operation = defineOperation({
  name: 'execute_plan',
  summary: 'Execute a plan once',
  description:
    'Runs exactly the trajectory of a plan that a move with dry_run: true answered ({op:move_to_joints}, {op:move_to_pose}, ' +
    '{op:move_to_named_position}), once, only while the arm is still at the plan start (every joint within 1e-3 rad) and ' +
    'before the plan expires (safety.plan_ttl_s). Answers when the controller has finished it (success true), or ' +
    'stopped, preempted or refused it (success false). Moves the real arm; {op:stop} halts it.',
  effect: 'motion',
  idempotent: false,
  input: inputSchema,
  output: MotionResultSchema,
  errors: {
    ...MOTION_ERRORS,
    not_found: 'No such plan, or it expired: plan again with dry_run.',
    busy: 'The plan already ran, the arm has left its start, or the arm is busy: nothing moved.',
  },
  rest: {
    method: 'POST',
    path: '/robot/plans/{id}/execute',
    operationId: 'executePlan',
    tags: ['robot'],
    params: ['id'],
    ok: 'The plan ran, or was stopped: check success.',
  },
  mcp: { title: 'Execute a plan' },
  needs: EXECUTE_NEEDS,
  run: ({ id }, ctx) => executePlan(ctx, id),
});

/** POST /robot/plans/{id}/execute */
export const handler = restHandler(operation);
