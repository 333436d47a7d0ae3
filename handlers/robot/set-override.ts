import * as v from 'valibot';
import { OVERRIDE_MAX, OVERRIDE_MIN } from '../../lib/control/pause.ts';
import { type Role, roleAllows } from '../../lib/core/roles.ts';
import { defineOperation } from '../../lib/core/operation.ts';
import { restHandler } from '../../lib/http/rest.ts';
import { err, ok } from '../../lib/result.ts';
import { OverrideSchema } from './override.ts';

/** The body of PUT /robot/override. */
export const SetOverrideSchema = v.strictObject({
  percent: v.pipe(
    v.number('percent must be a number'),
    v.integer('percent must be a whole number'),
    v.minValue(OVERRIDE_MIN, `percent must be at least ${OVERRIDE_MIN}`),
    v.maxValue(OVERRIDE_MAX, `percent must be at most ${OVERRIDE_MAX}`),
    v.description(`The speed override, ${OVERRIDE_MIN} to ${OVERRIDE_MAX} %.`),
  ),
});

/** True when `percent` raises the override in force. */
const raises = (percent: number, control: { overridePercent(): number }) => percent > control.overridePercent();
/**
 * True when `percent` raises the override and the caller's role may raise it: one whose role may not is refused for
 * its role in `run` (403), first, never asked to confirm nor told a stop came since (it could not raise it anyway).
 */
const raisesAs = (
  percent: number,
  ctx: { services: { control: { overridePercent(): number } }; caller: { role: Role } },
) => raises(percent, ctx.services.control) && roleAllows(ctx.caller.role, 'operate');

/** PUT /robot/override */
export const operation = defineOperation({
  name: 'set_override',
  summary: 'Set the speed override',
  description:
    `Sets the speed override, ${OVERRIDE_MIN} to ${OVERRIDE_MAX} % (default 100), as on a robot's pendant: it scales the ` +
    'execution speed of the motion in progress, smoothly (the change itself within the acceleration limits, the path ' +
    "unchanged), and of every later motion (moves, trajectories, plans, the sequence runner's goals) until changed; it " +
    "multiplies each request's own speed. Any role may lower it; raising it needs the role operate (and, over MCP with " +
    'mcp.confirm_motion, the person asked as before a motion; a lowering is never asked). A raise that arrived before ' +
    'a stop is refused (409) after it, as a motion is; a lowering is made. While a motion is paused ' +
    'the override is kept for its {op:resume}.',
  effect: 'stop',
  idempotent: true,
  countedInBursts: true,
  input: SetOverrideSchema,
  output: OverrideSchema,
  errors: {
    busy: 'A stop arrived after the request did: a raise is not made (a lowering is).',
    forbidden:
      'Raising the override needs the role operate; over MCP with mcp.confirm_motion, the person did not confirm the raise.',
    unavailable: 'The backend cannot scale the execution (see the documentation of the ros2 backend).',
  },
  rest: {
    method: 'PUT',
    path: '/robot/override',
    operationId: 'setOverride',
    tags: ['robot'],
    body: 'json',
    ok: 'The override in force.',
    example: { percent: 100 },
  },
  mcp: { title: 'Set the speed override' },
  needs: ['control'],
  // Raising the speed of what moves is a change of the motion: asked as a motion is (mcp.confirm_motion), and refused
  // when a stop came after it arrived, as a motion is (the person who stopped the arm did not see it); lowering it,
  // the safe direction, never is asked, never waits and is made whatever stop came since.
  confirms: (input, ctx) => raisesAs(input.percent, ctx),
  refusedAfterStop: (input, ctx) =>
    raisesAs(input.percent, ctx)
      ? `a stop arrived after this request; the override was not raised (it stays ${ctx.services.control.overridePercent()} %): send it again to raise it`
      : undefined,
  run: async (input, ctx) => {
    const control = ctx.services.control;
    if (input.percent > control.overridePercent() && !roleAllows(ctx.caller.role, 'operate'))
      return err({
        kind: 'forbidden',
        detail: `raising the override (${control.overridePercent()} % -> ${input.percent} %) needs the role 'operate'; the token '${ctx.caller.name}' has the role '${ctx.caller.role}'`,
      });
    const done = await control.setOverride(input.percent);
    return done.ok ? ok(done.value) : done;
  },
});

/** PUT /robot/override */
export const handler = restHandler(operation);
