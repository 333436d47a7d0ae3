import * as v from 'valibot';
import { parseJsonBody } from '../../lib/http/body.ts';
import { errorResponse } from '../../lib/http/errors.ts';
import type { RouteSpec } from '../../lib/http/route-spec.ts';
import { ErrorDetailSchema } from '../../lib/http/schemas.ts';
import { ros } from '../../lib/ros/context.ts';
import { limitViolations, publishPoints } from '../../lib/trajectory/publish.ts';

/** Most points one trajectory may carry. */
export const MAX_POINTS = 100_000;

const angle = v.pipe(v.number(), v.finite('must be a finite number'), v.minValue(-2 * Math.PI, 'must be at least -2 pi'), v.maxValue(2 * Math.PI, 'must be at most 2 pi'));

/** One point: exactly 7 angles in radians and seconds from the start. */
export const TrajectoryPointSchema = v.strictObject({
  positions: v.pipe(
    v.array(v.unknown()),
    v.length(7, (issue) => `expected exactly 7 joint values (J1..J7), got ${(issue.input as unknown[]).length}`),
    v.strictTuple([angle, angle, angle, angle, angle, angle, angle]),
    v.description('J1..J7 angles in radians, exactly 7.'),
  ),
  time_from_start: v.pipe(v.number(), v.finite('must be a finite number'), v.minValue(0, 'must be at least 0'), v.maxValue(86_400, 'at most 86400 s'), v.description('Seconds from the trajectory start, at least 0.')),
});

/** Body of POST /trajectory/send. */
export const bodySchema = v.pipe(
  v.strictObject({
    points: v.pipe(v.array(TrajectoryPointSchema), v.minLength(1, 'must not be empty'), v.maxLength(MAX_POINTS, `at most ${MAX_POINTS} points`)),
    validate_limits: v.optional(v.pipe(v.boolean(), v.description('Check every point against the joint limits file. Default true.')), true),
  }),
  v.title('TrajectoryRequest'),
);

/** Response of the two trajectory publishing endpoints. */
export const SentSchema = v.pipe(
  v.object({
    status: v.pipe(v.literal('sent'), v.description('The trajectory was published; this does not confirm execution.')),
    points: v.pipe(v.number(), v.description('Number of points published.')),
    times_increasing: v.pipe(v.boolean(), v.description('false when time_from_start does not increase: the controller will refuse it.')),
    warning: v.optional(v.string()),
  }),
  v.title('TrajectorySent'),
);

export const route = {
  method: 'POST',
  path: '/trajectory/send',
  operationId: 'sendTrajectory',
  summary: 'Publish a trajectory from JSON',
  description:
    "Publishes a JointTrajectory (joint1..joint7) on the joint trajectory controller's topic. status 'sent' confirms publication only; " +
    'what the controller did is in GET /trajectory/logs. A trajectory still executing is preempted; a running motion or sequence gives 409.',
  tags: ['trajectory'],
  body: { contentType: 'application/json', schema: bodySchema },
  responses: {
    200: { description: 'Published.', schema: SentSchema },
    409: { description: 'A motion or a sequence holds the arm.', schema: ErrorDetailSchema },
    503: { description: 'The controller topic is unavailable.', schema: ErrorDetailSchema },
  },
} as const satisfies RouteSpec;

/** POST /trajectory/send */
export async function handler(request: Request): Promise<Response> {
  const body = await parseJsonBody(request, bodySchema);
  if (!body.ok) return errorResponse(body.error);
  const points = body.value.points.map((p) => ({ positions: p.positions as number[], time_from_start: p.time_from_start }));
  if (body.value.validate_limits) {
    const violation = limitViolations(points, ros().limits, (i, j) => ['body', 'points', i, 'positions', j]);
    if (violation) return errorResponse(violation);
  }
  return publishPoints(points, 'POST /trajectory/send');
}
