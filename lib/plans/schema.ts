/** The schemas of plan, then execute: the moves' `dry_run` field and the plan a dry run answers. */
import * as v from 'valibot';

/** The `dry_run` field of the move operations. */
export const DryRunSchema = v.optional(
  v.pipe(
    v.boolean('dry_run must be true or false'),
    v.description(
      'true: plan and check everything (limits, collisions, the safety envelope) without moving; the answer carries the ' +
        'plan, which {op:execute_plan} runs once while the arm is still at its start. Default false.',
    ),
  ),
  false,
);

const numbers = v.array(v.number());

/** The plan a dry run answers. */
export const PlanSchema = v.pipe(
  v.object({
    id: v.pipe(v.string(), v.description('Give it to {op:execute_plan}.')),
    planner: v.string(),
    duration_s: v.pipe(v.number(), v.description('How long the motion takes (s).')),
    start_joints: v.pipe(numbers, v.description('Where the plan starts (rad, J1..J7): the arm must still be there.')),
    final_joints: v.pipe(numbers, v.description('Where it ends (rad, J1..J7).')),
    path: v.pipe(
      v.object({ t_s: numbers, joints: v.array(numbers), tcp: v.array(numbers) }),
      v.description('Downsampled for display: times (s), joint angles (rad) and TCP positions [x, y, z] (m).'),
    ),
    min_clearance_m: v.pipe(
      v.nullable(v.number()),
      v.description('Smallest clearance to the safety envelope along the plan (m); null without an envelope.'),
    ),
    expires_at: v.pipe(v.string(), v.description('ISO 8601 time after which it cannot be executed.')),
  }),
  v.title('Plan'),
);
