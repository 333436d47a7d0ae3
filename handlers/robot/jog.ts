import { unavailable } from '../../lib/core/errors.ts';
import { defineOperation } from '../../lib/core/operation.ts';
import { restHandler } from '../../lib/http/rest.ts';
import { JogAnswerSchema, jogCommandSchema, jogTargetOf } from '../../lib/ops/jog.ts';
import { err } from '../../lib/result.ts';

/** POST /robot/jog: moves the arm at a velocity while commands keep coming (the dead-man). */
export const operation = defineOperation({
  name: 'jog_command',
  summary: 'Jog the arm (hold to run)',
  description:
    "Moves the arm by hand, as a pendant: joint velocities (`joints`, fractions of each joint's jog speed) or a TCP " +
    'velocity (`linear` m/s and `angular` rad/s as fractions of the TCP jog speeds, in the `base` or `tool` frame). ' +
    'The command holds for `ttl_ms` (default armgate.jog.ttl_ms): send it again before then to keep moving; when ' +
    'it lapses, or all zeros arrive, the arm brakes to rest within its limits and holds. Answers at once; the motion ' +
    'outlives the request by design. The jog slows and stops at joint limits, the workspace box, keep-out boxes, ' +
    'collisions and singularities (`limit` says which). While another motion holds the arm: 409; while a jog holds ' +
    "it, a move is a 409 until the jog has come to rest. {op:stop} ends it at once; commands sent before the stop's " +
    'answer do not start it again. Pause holds it still; the override scales its speed. Also a WebSocket at the same ' +
    'path (docs/api.md).',
  effect: 'motion',
  idempotent: false,
  countedInBursts: true,
  input: jogCommandSchema,
  output: JogAnswerSchema,
  errors: {
    busy: 'Another motion or another jogging client holds the arm, or a stop came after the command arrived.',
    unavailable: 'The backend cannot jog, or (ros2) the controller topic cannot be published on.',
  },
  rest: {
    method: 'POST',
    path: '/robot/jog',
    operationId: 'jog',
    tags: ['robot'],
    body: 'json',
    ok: 'The command was taken: the arm moves (or brakes) as it says until it lapses.',
    example: { joints: [0, 0, 0, 0, 0, 0, 0.5], ttl_ms: 200 },
  },
  needs: ['jog'],
  run: async (input, ctx) => {
    const jog = ctx.services.jog;
    if (!jog) return err(unavailable({ message: 'jogging is not available here' }));
    return jog.command(jogTargetOf(input), input.ttl_ms, {
      caller: ctx.caller,
      // A WebSocket's commands jog for that socket; REST commands for the caller (one jog across its requests).
      owner: ctx.channel ?? { key: `rest:${ctx.caller.name}`, via: 'rest' },
      arrivedAtStop: ctx.arrivedAtStop,
    });
  },
});

/** POST /robot/jog */
export const handler = restHandler(operation);
