import * as v from 'valibot';
import { parseJsonBody } from '../../lib/http/body.ts';
import { errorResponse, invalid, unavailable } from '../../lib/http/errors.ts';
import { MOTION_RESPONSES, runMotion } from '../../lib/http/motion.ts';
import type { RouteSpec } from '../../lib/http/route-spec.ts';
import { SpeedSchema } from '../../lib/http/schemas.ts';
import { ros } from '../../lib/ros/context.ts';

/** Body of POST /robot/move/named. */
export const bodySchema = v.pipe(
  v.strictObject({
    name: v.pipe(
      v.string(),
      v.minLength(1, 'must not be empty'),
      v.maxLength(128, 'at most 128 characters'),
      v.description('A position name from GET /robot/positions.'),
      v.examples(['home']),
    ),
    speed: SpeedSchema,
    accel_scale: v.optional(
      v.pipe(
        v.number(),
        v.finite('must be a finite number'),
        v.minValue(0, 'accel_scale must be at least 0'),
        v.maxValue(1, 'accel_scale must be at most 1.0'),
        v.description('Acceleration scale, 0 to 1.0; 0 means use speed. Default 0.'),
      ),
      0,
    ),
  }),
  v.title('MoveNamedRequest'),
);

export const route = {
  method: 'POST',
  path: '/robot/move/named',
  operationId: 'moveToNamedPosition',
  summary: 'Move to a named position',
  description: 'PTP motion to a named position of the robot description (SRDF group state). Synchronous.',
  tags: ['robot'],
  body: { contentType: 'application/json', schema: bodySchema },
  responses: MOTION_RESPONSES,
} as const satisfies RouteSpec;

/** POST /robot/move/named */
export async function handler(request: Request): Promise<Response> {
  const context = ros();
  const body = await parseJsonBody(request, bodySchema);
  if (!body.ok) return errorResponse(body.error);
  const states = await context.groupStates();
  if (!states.ok) return errorResponse(unavailable(states.error));
  const known = states.value.map((s) => s.name);
  if (!known.includes(body.value.name)) {
    return errorResponse(
      invalid(['body', 'name'], `unknown named position '${body.value.name}'; known: ${known.join(', ')}`),
    );
  }
  const { name, speed, accel_scale } = body.value;
  return runMotion(`moving to '${name}'`, (signal) => context.moveToNamed({ name, speed, accel_scale }, { signal }));
}
