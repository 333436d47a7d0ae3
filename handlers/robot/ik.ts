import * as v from 'valibot';
import { type ApiError, invalid, unavailable } from '../../lib/core/errors.ts';
import { abcAngle, FrameIdSchema, jointsSchema, metres } from '../../lib/motion/vocabulary.ts';
import { defineOperation } from '../../lib/core/operation.ts';
import { perLimits } from '../../lib/robot/limits.ts';
import { restHandler } from '../../lib/http/rest.ts';
import { err, ok, type Result } from '../../lib/result.ts';

/** Input of solve_ik: a pose (as move_to_pose's target), an optional seed and the collision check. */
export const inputSchema = perLimits((limits) =>
  v.pipe(
    v.strictObject({
      x: metres('TCP x in metres, in frame_id.'),
      y: metres('TCP y in metres, in frame_id.'),
      z: metres('TCP z in metres, in frame_id.'),
      a: abcAngle('A: rotation about Z in radians (KUKA ABC). Default 0.'),
      b: abcAngle('B: rotation about the new Y in radians. Default 0.'),
      c: abcAngle('C: rotation about the new X in radians. Default 0.'),
      frame_id: FrameIdSchema,
      seed: v.optional(
        jointsSchema(limits, 'Joint angles J1..J7 (rad) the solver starts from; default the current joint state.'),
      ),
      collision_check: v.optional(
        v.pipe(
          v.boolean('collision_check must be true or false'),
          v.description('Only solutions free of collisions (self, floor, obstacles) count. Default true.'),
        ),
        true,
      ),
    }),
    v.title('IkRequest'),
  ),
);

/** What solve_ik answers. */
export const IkResultSchema = v.pipe(
  v.object({
    success: v.pipe(v.boolean(), v.description('true: joints put the TCP at the pose within the joint limits.')),
    joints: v.optional(
      v.pipe(v.array(v.number()), v.description('When success: joint angles J1..J7 in radians, closest to the seed.')),
    ),
    message: v.pipe(
      v.string(),
      v.description('What was found, or why there is no solution: out of reach, beyond the limits, in collision.'),
    ),
  }),
  v.title('IkResult'),
);

/** Inverse kinematics on request: never moves the arm. */
export const operation = defineOperation({
  name: 'solve_ik',
  summary: 'Joint angles for a TCP pose (inverse kinematics)',
  description:
    'Finds the 7 joint angles that put the tool centre point at x, y, z (metres) with orientation a, b, c (KUKA ABC radians, ' +
    'each 0 when omitted), within the joint limits and, with collision_check (default true), free of collisions; the ' +
    'solver starts from seed (default the current joint state) and answers the solution closest to it. success false ' +
    'says why when the pose is unreachable, only reachable beyond the limits, or only in collision. Never moves the ' +
    'arm: use it to check a target before {op:move_to_pose} or {op:move_to_joints}.',
  effect: 'read',
  idempotent: true,
  input: inputSchema,
  output: IkResultSchema,
  errors: { unavailable: 'The IK service of the stack is unavailable.' },
  rest: {
    method: 'POST',
    path: '/robot/ik',
    operationId: 'solveIk',
    tags: ['robot'],
    body: 'json',
    ok: 'Solved, or success false with the reason.',
    example: { x: 0.45, y: 0.1, z: 0.55, a: Math.PI, b: 0, c: Math.PI },
  },
  mcp: { title: 'Solve inverse kinematics' },
  needs: [],
  run: async (input, ctx): Promise<Result<v.InferOutput<typeof IkResultSchema>, ApiError>> => {
    const context = ctx.ros;
    const frame = context.endpoints.planning_frame;
    if (input.frame_id !== '' && input.frame_id !== frame)
      return err(
        invalid(
          ['body', 'frame_id'],
          `unknown frame_id '${input.frame_id}'; known: '' (the planning frame) and '${frame}'`,
        ),
      );
    const answer = await context.solveIk(
      {
        x: input.x,
        y: input.y,
        z: input.z,
        a: input.a ?? 0,
        b: input.b ?? 0,
        c: input.c ?? 0,
        frame_id: input.frame_id,
        ...(input.seed ? { seed: input.seed as number[] } : {}),
        collision_check: input.collision_check,
      },
      { signal: ctx.signal },
    );
    if (!answer.ok) return err(unavailable(answer.error));
    const { success, joints, message } = answer.value;
    return ok({ success, ...(success && joints ? { joints } : {}), message });
  },
});

/** POST /robot/ik */
export const handler = restHandler(operation);
