import * as v from 'valibot';
import { OVERRIDE_MAX, OVERRIDE_MIN } from '../../lib/control/pause.ts';
import { defineOperation } from '../../lib/core/operation.ts';
import { restHandler } from '../../lib/http/rest.ts';
import { ok } from '../../lib/result.ts';

/** The speed override in force. */
export const OverrideSchema = v.pipe(
  v.object({
    percent: v.pipe(
      v.number(),
      v.integer(),
      v.description(
        `The speed override, ${OVERRIDE_MIN} to ${OVERRIDE_MAX} %: it multiplies every motion's own speed.`,
      ),
    ),
    message: v.pipe(v.string(), v.description('What is in force, or what changed.')),
  }),
  v.title('SpeedOverride'),
);

/** GET /robot/override */
export const operation = defineOperation({
  name: 'get_override',
  summary: 'Speed override',
  description: `The speed override in force (${OVERRIDE_MIN}..${OVERRIDE_MAX} %, default 100): see {op:set_override}.`,
  effect: 'read',
  idempotent: true,
  output: OverrideSchema,
  errors: {},
  rest: { method: 'GET', path: '/robot/override', operationId: 'getOverride', tags: ['robot'], ok: 'The override.' },
  mcp: { title: 'Speed override' },
  needs: ['control'],
  run: async (_input, ctx) => {
    const percent = ctx.services.control.overridePercent();
    return ok({ percent, message: `the speed override is ${percent} %` });
  },
});

/** GET /robot/override */
export const handler = restHandler(operation);
