import { defineOperation } from '../../lib/core/operation.ts';
import { restHandler } from '../../lib/http/rest.ts';
import { StopResultSchema, stopResult } from '../../lib/ops/stop.ts';

/** The robot stack's stop route, POST /robot/stop: the same stop as POST /stop (REST only; the tool is stop). */
export const operation = defineOperation({
  name: 'robot_stop',
  summary: 'Stop (the robot stack route)',
  description:
    "The robot stack's stop route, kept for its clients: exactly {op:stop}, the same steps and the same answer " +
    '(status "stopped", success, message and armgate\'s fields). Software stop only.',
  effect: 'stop',
  idempotent: true,
  output: StopResultSchema,
  errors: {},
  rest: { method: 'POST', path: '/robot/stop', operationId: 'robotStop', tags: ['stop'], ok: 'What was stopped.' },
  needs: ['control'],
  run: (_input, ctx) => stopResult(ctx),
});

/** POST /robot/stop */
export const handler = restHandler(operation);
