import * as v from 'valibot';
import { readJsonText } from '../../lib/http/body.ts';
import { errorResponse } from '../../lib/http/errors.ts';
import type { RouteSpec } from '../../lib/http/route-spec.ts';
import { ErrorDetailSchema } from '../../lib/http/schemas.ts';
import { TrajectoryBodySchema } from '../../lib/trajectory/schema.ts';
import { checkAndPublish } from '../../lib/trajectory/request.ts';

export { MAX_POINTS } from '../../lib/trajectory/bounds.ts';
export { TrajectoryPointSchema } from '../../lib/trajectory/schema.ts';

/** Body of POST /trajectory/send. */
export const bodySchema = TrajectoryBodySchema;

/** Response of the two trajectory publishing endpoints. */
export const SentSchema = v.pipe(
  v.object({
    status: v.pipe(v.literal('sent'), v.description('The trajectory was published; this does not confirm execution.')),
    points: v.pipe(v.number(), v.description('Number of points published.')),
    times_increasing: v.pipe(
      v.boolean(),
      v.description('false when time_from_start does not increase: the controller will refuse it.'),
    ),
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
    'what the controller did is in GET /trajectory/logs. A trajectory still executing is preempted; a running motion or sequence gives 409. ' +
    "With validate_limits (the default) armgate fills in each point's velocity, so the controller interpolates a cubic spline from the " +
    "arm's current state, and refuses (422, naming the point, joint and figure) a trajectory whose execution would pass a position, " +
    'velocity or acceleration limit.',
  tags: ['trajectory'],
  body: { contentType: 'application/json', schema: bodySchema },
  responses: {
    200: { description: 'Published.', schema: SentSchema },
    409: { description: 'A motion or a sequence holds the arm.', schema: ErrorDetailSchema },
    503: {
      description: 'The controller topic is unavailable, or no joint state to check from.',
      schema: ErrorDetailSchema,
    },
  },
} as const satisfies RouteSpec;

/** POST /trajectory/send: the body is parsed and checked on the trajectory worker thread. */
export async function handler(request: Request): Promise<Response> {
  const text = await readJsonText(request);
  if (!text.ok) return errorResponse(text.error);
  return checkAndPublish({ kind: 'json', text: text.value }, [], 'POST /trajectory/send');
}
