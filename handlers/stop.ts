import * as v from 'valibot';
import { defineOperation, type OpContext } from '../lib/core/operation.ts';
import { restHandler } from '../lib/http/rest.ts';
import { ok, type Result } from '../lib/result.ts';

/** Response of POST /stop. */
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

/** Stops everything the service started. */
export const operation = defineOperation({
  name: 'stop',
  summary: 'Stop API commands and the planner',
  description:
    'Stops everything the service started, in order: (1) takes the arm from whatever holds it (a move, a trajectory request, ' +
    'a sequence) and tells every sequence runner still alive to stop (stop message, SIGTERM), (2) publishes a hold point at ' +
    'the current position to the trajectory controller (an empty trajectory when no joint state is available), (3) calls ' +
    "the planner's stop service, (4) answers once every runner has exited (SIGKILL after 3 s). Always succeeds; safe to call " +
    'at any time. A ' +
    "motion cut short answers success false 'stopped'. Software stop only: it does not replace the robot's emergency stop.",
  effect: 'stop',
  idempotent: true,
  output: StopResultSchema,
  errors: {},
  rest: { method: 'POST', path: '/stop', operationId: 'stop', tags: ['stop'], ok: 'What was stopped.' },
  mcp: { title: 'Stop' },
  needs: ['control'],
  run: (_input, ctx) => stopResult(ctx),
});

/** POST /stop */
export const handler = restHandler(operation);
