import { defineOperation } from '../lib/core/operation.ts';
import { restHandler } from '../lib/http/rest.ts';
import { StopResultSchema, stopResult } from '../lib/ops/stop.ts';

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
