import * as v from 'valibot';
import { defineOperation } from '../../lib/core/operation.ts';
import { restHandler } from '../../lib/http/rest.ts';
import { ok } from '../../lib/result.ts';
import type { SafetyState } from '../../lib/safety/store.ts';

const corner = v.pipe(v.array(v.number()), v.description('[x, y, z] in metres, planning frame.'));

/** The safety envelope as GET /robot/safety and the MCP resource show it. */
export const SafetySchema = v.pipe(
  v.object({
    workspace: v.pipe(
      v.nullable(v.object({ min: corner, max: corner })),
      v.description('The box the TCP never leaves; null: none.'),
    ),
    keep_out: v.pipe(
      v.array(v.object({ name: v.string(), min: corner, max: corner })),
      v.description('Boxes no link enters (links as capsules of link_radius_m around the kinematic skeleton).'),
    ),
    link_radius_m: v.number(),
    plan_ttl_s: v.pipe(v.number(), v.description('How long a dry run plan can be executed (s).')),
  }),
  v.title('SafetyEnvelope'),
);

/** The safety envelope in force (`state` undefined: none). */
export function safetyView(state: SafetyState | undefined): v.InferOutput<typeof SafetySchema> {
  const envelope = state?.envelope;
  return {
    workspace: envelope?.workspace ? { min: [...envelope.workspace.min], max: [...envelope.workspace.max] } : null,
    keep_out: (envelope?.keepOut ?? []).map((box) => ({ name: box.name, min: [...box.min], max: [...box.max] })),
    link_radius_m: envelope?.linkRadiusM ?? 0,
    plan_ttl_s: state?.planTtlS ?? 60,
  };
}

/** Reads the safety envelope. */
export const operation = defineOperation({
  name: 'get_safety_envelope',
  summary: 'The safety envelope',
  description:
    'The safety envelope every motion source is held to (moves, trajectories, sequence goals, plans): the workspace box ' +
    'the TCP never leaves and the keep-out boxes no link enters, in metres in the planning frame; and how long a plan ' +
    'stays executable. Set in the settings (safety); read only.',
  effect: 'read',
  idempotent: true,
  output: SafetySchema,
  errors: {},
  rest: {
    method: 'GET',
    path: '/robot/safety',
    operationId: 'getSafetyEnvelope',
    tags: ['robot'],
    ok: 'The envelope in force.',
  },
  needs: ['safety'],
  run: async (_input, ctx) => ok(safetyView(ctx.services.safety)),
});

/** GET /robot/safety */
export const handler = restHandler(operation);
