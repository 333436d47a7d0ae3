import * as v from 'valibot';
import { type ApiError, invalid } from '../../lib/core/errors.ts';
import { cartesianTargetEntries, cartesianTargetProblem } from '../../lib/motion/vocabulary.ts';
import { MOTION_NEEDS, type MotionResult, moveOperation, runMotion } from '../../lib/ops/motion.ts';
import { defineOperation, type OpContext } from '../../lib/core/operation.ts';
import { restHandler } from '../../lib/http/rest.ts';
import { DRY_RUN_NEEDS, dryRun } from '../../lib/ops/plan.ts';
import { DryRunSchema } from '../../lib/plans/schema.ts';
import { MOTION_NOTE } from '../../lib/ops/texts.ts';
import { err, ok, type Result } from '../../lib/result.ts';
import { readTcpPose } from './pose.ts';
import { orientationHint } from '../../lib/ops/orientation-hint.ts';

export { PLANNERS } from '../../lib/motion/vocabulary.ts';

/** Input of move_to_pose. */
export const inputSchema = v.pipe(
  v.strictObject({ ...cartesianTargetEntries, dry_run: DryRunSchema }),
  v.title('MovePoseRequest'),
);

type Target = v.InferOutput<typeof inputSchema>;

/**
 * The orientation of a target: an omitted angle keeps the current orientation's value (agents often leave orientation
 * out, and 0, 0, 0 points the flange up). Over REST none is omitted: the binding's defaults make them 0 (the spec's).
 */
async function orientationOf(target: Target, ctx: Pick<OpContext<never>, 'ros'>) {
  const { a, b, c } = target;
  if (a !== undefined && b !== undefined && c !== undefined) return ok({ a, b, c });
  const current = await readTcpPose(ctx.ros);
  if (!current.ok) return current;
  const now = current.value.orientation.euler_rad;
  return ok({ a: a ?? now.a, b: b ?? now.b, c: c ?? now.c });
}

/** Moves the TCP to a pose with the chosen planner. */
export const operation = defineOperation({
  name: 'move_to_pose',
  summary: 'Cartesian TCP motion',
  description:
    'Moves the tool centre point to x, y, z (metres) with orientation a, b, c (KUKA ABC radians; pointing down is a=0, b=pi, ' +
    'c=0) using the planner: ptp (default, joint-space), lin (straight line), circ (an arc through circ_interim or about ' +
    'circ_center), ompl or chomp (plan around obstacles). An omitted a, b or c is 0 over HTTP (the spec) and keeps its ' +
    'current value over MCP. Reach is about 0.8 m from the shoulder at (0, 0, 0.34). ' +
    MOTION_NOTE,
  ...moveOperation(
    '/robot/move/pose',
    'moveToPose',
    { x: 0.45, y: 0.1, z: 0.55, a: Math.PI, b: 0, c: Math.PI, speed: 0.2 },
    { a: 0, b: 0, c: 0 },
  ),
  input: inputSchema,
  mcp: { title: 'Move the TCP to a pose' },
  needs: [...MOTION_NEEDS, ...DRY_RUN_NEEDS],
  run: async (target, ctx): Promise<Result<MotionResult, ApiError>> => {
    const context = ctx.ros;
    const problem = cartesianTargetProblem(target, context.endpoints.planning_frame);
    if (problem) return err(invalid(['body', problem.field], problem.message));
    const orientation = await orientationOf(target, ctx);
    if (!orientation.ok) return orientation;
    const { circ_center, circ_interim, dry_run, ...rest } = target;
    const goal = {
      ...rest,
      ...orientation.value,
      ...(circ_center ? { circ_center } : {}),
      ...(circ_interim ? { circ_interim } : {}),
    };
    const what = `moving the TCP (${target.planner})`;
    if (dry_run) return dryRun(ctx, what, { kind: 'pose', goal });
    const result = await runMotion(ctx, what, (options) => context.moveToPose(goal, options));
    if (!result.ok || result.value.success) return result;
    const hint = await orientationHint(ctx, goal, result.value.message);
    return hint ? ok({ ...result.value, message: `${result.value.message}; ${hint}` }) : result;
  },
});

/** POST /robot/move/pose */
export const handler = restHandler(operation);
