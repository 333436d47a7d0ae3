import { unavailable } from '../../lib/core/errors.ts';
import { defineOperation } from '../../lib/core/operation.ts';
import { restHandler } from '../../lib/http/rest.ts';
import { JogStepResultSchema, jogStepOf, jogStepSchema } from '../../lib/ops/jog.ts';
import { WATCH_NEEDS, watchCall } from '../../lib/ops/motion.ts';
import { err, ok } from '../../lib/result.ts';

/** POST /robot/jog/step and the MCP tool `jog`: one bounded step, answered at rest. */
export const operation = defineOperation({
  name: 'jog',
  summary: 'Jog one step',
  description:
    'Moves the arm one bounded step at jog speed and answers when it is at rest: a joint (`joint` 1..7) by `delta` ' +
    'rad (|delta| <= 0.2), or the TCP along x, y or z by `delta` m (<= 0.05) or about a, b or c by `delta` rad ' +
    '(<= 0.2) in the `base` (default) or `tool` frame, the orientation (or the TCP point) kept. The same limits as ' +
    'any jog: it stops short at a joint limit, the workspace, a keep-out box, a collision or a singularity ' +
    '(success false, `limit` says which). The arm moves for real. If another motion holds the arm the call fails at ' +
    'once; {op:stop} ends the step.',
  effect: 'motion',
  idempotent: false,
  input: jogStepSchema,
  output: JogStepResultSchema,
  errors: {
    busy: 'Another motion or a jogging client holds the arm.',
    unavailable: 'The backend cannot jog, or (ros2) the controller topic cannot be published on.',
  },
  rest: {
    method: 'POST',
    path: '/robot/jog/step',
    operationId: 'jogStep',
    tags: ['robot'],
    body: 'json',
    ok: 'The step ended at rest: made in full (success true) or cut short (success false, reason and limit say why).',
    example: { axis: 'z', delta: 0.01, frame: 'base' },
  },
  mcp: { title: 'Jog one step' },
  needs: ['jog', ...WATCH_NEEDS],
  run: async (input, ctx) => {
    const jog = ctx.services.jog;
    if (!jog) return err(unavailable({ message: 'jogging is not available here' }));
    const { target, goal } = jogStepOf(input, ctx.ros.limits.jointNames.length);
    const what = input.joint !== undefined ? `joint${input.joint}` : `${input.axis} (${input.frame ?? 'base'} frame)`;
    // Cancelled or abandoned by its caller: everything stops as {op:stop} does.
    const done = watchCall(ctx, () => `jog step of ${what} by ${input.delta}`);
    try {
      const stepped = await jog.step(target, goal, {
        caller: ctx.caller,
        owner: { key: `${ctx.caller.face}:${ctx.caller.name}`, via: ctx.caller.face },
        arrivedAtStop: ctx.arrivedAtStop,
      });
      if (!stepped.ok) return stepped;
      const { complete, reason, positions, limit } = stepped.value;
      return ok({
        success: complete,
        message: complete
          ? `stepped ${what} by ${input.delta}; at rest`
          : reason === 'limit'
            ? `stopped short at a limit: ${limit?.detail ?? 'a limit'}; at rest`
            : reason === 'released'
              ? 'released before the end of the step by another command of this client (a release or a newer step); at rest'
              : reason === 'stop'
                ? "stopped before the end of the step; the stop's hold brakes the arm to rest"
                : 'stopped before the end of the step; at rest',
        reason,
        joints: positions.map((q) => Math.round(q * 1e9) / 1e9),
        limit,
      });
    } finally {
      done();
    }
  },
});

/** POST /robot/jog/step */
export const handler = restHandler(operation);
