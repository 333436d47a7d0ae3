import * as v from 'valibot';
import type { OpContext } from '../core/operation.ts';
import { ok, type Result } from '../result.ts';

/** Response of POST /stop and POST /robot/stop. */
export const StopResultSchema = v.pipe(
  v.object({
    message: v.pipe(v.string(), v.description('What was stopped, in one sentence.')),
    sequence_stopped: v.pipe(v.boolean(), v.description('A sequence runner was running and has been ended.')),
    hold_published: v.pipe(
      v.boolean(),
      v.description('A hold point (or an empty trajectory) reached the controller topic.'),
    ),
    planner_stopped: v.pipe(v.boolean(), v.description("The planner's stop service (cobot/stop) answered success.")),
    status: v.pipe(v.literal('stopped'), v.description('Always "stopped" (as the robot stack answered).')),
    success: v.pipe(
      v.boolean(),
      v.description("The stop service's answer, as the robot stack gave it (the same as planner_stopped)."),
    ),
  }),
  v.title('StopResult'),
);

/** Stops everything and says so in both shapes: armgate's fields and the robot stack's (status, success). */
export async function stopResult(ctx: OpContext<'control'>): Promise<Result<StopResult, never>> {
  const done = await ctx.services.control.stop();
  return ok({ ...done, status: 'stopped', success: done.planner_stopped });
}

/** The answer of a stop. */
export type StopResult = v.InferOutput<typeof StopResultSchema>;
