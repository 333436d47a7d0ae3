import * as v from 'valibot';
import { defineOperation } from '../../lib/core/operation.ts';
import { restHandler } from '../../lib/http/rest.ts';

/** The answer of a pause. */
export const PauseResultSchema = v.pipe(
  v.object({
    paused: v.pipe(
      v.boolean(),
      v.description(
        'true: a motion rests on its path and holds, waiting for {op:resume} or {op:stop}. false: nothing moved (or the motion ended before it came to rest): nothing is paused.',
      ),
    ),
    message: v.pipe(v.string(), v.description('What happened, in one sentence.')),
    what: v.pipe(v.nullable(v.string()), v.description('The paused motion, in words; null when nothing is paused.')),
  }),
  v.title('PauseResult'),
);

/** POST /robot/pause: whatever moves decelerates along its own path to rest and holds there. */
export const operation = defineOperation({
  name: 'pause',
  summary: 'Pause the motion in progress',
  description:
    'Pauses whatever moves the arm (a move, a trajectory waited for or not, a plan being executed, a sequence and its ' +
    'goals): it decelerates along its own path, within the acceleration limits, to rest, and holds there; nothing is ' +
    'cancelled. The request that started the motion keeps waiting (its timeout does not run while paused). Answers once ' +
    'the arm is at rest. While paused, other motion requests get 409; {op:resume} continues the motion from where it ' +
    'rests, {op:stop} ends it. Pausing at rest or twice is harmless (nothing moving: paused false). Allowed to every ' +
    'role, as stop is.',
  effect: 'stop',
  idempotent: true,
  output: PauseResultSchema,
  errors: { unavailable: 'The backend cannot pause (see the documentation of the ros2 backend).' },
  rest: {
    method: 'POST',
    path: '/robot/pause',
    operationId: 'pauseMotion',
    tags: ['stop'],
    ok: 'The arm is at rest: paused, or nothing moved.',
  },
  mcp: { title: 'Pause' },
  needs: ['control'],
  run: (_input, ctx) => ctx.services.control.pause(ctx.signal),
});

/** POST /robot/pause */
export const handler = restHandler(operation);
