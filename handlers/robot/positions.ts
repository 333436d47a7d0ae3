import * as v from 'valibot';
import { errorResponse, json, unavailable } from '../../lib/http/errors.ts';
import type { RouteSpec } from '../../lib/http/route-spec.ts';
import { ErrorDetailSchema } from '../../lib/http/schemas.ts';
import { ros } from '../../lib/ros/context.ts';

/** A named position: an SRDF group state. */
export const NamedPositionSchema = v.pipe(
  v.object({
    name: v.pipe(v.string(), v.examples(['home'])),
    description: v.string(),
    group: v.pipe(v.string(), v.description('Planning group the state belongs to.'), v.examples(['iiwa_arm'])),
    joints: v.pipe(v.array(v.number()), v.description('Target joint angles J1..J7 in radians.')),
  }),
  v.title('NamedPosition'),
);

export const route = {
  method: 'GET',
  path: '/robot/positions',
  operationId: 'listNamedPositions',
  summary: 'Named positions',
  description:
    "The planning group's named states from the robot's semantic description (SRDF), with their joint angles.",
  tags: ['robot'],
  responses: {
    200: { description: 'The named positions.', schema: v.array(NamedPositionSchema) },
    503: { description: 'The semantic description could not be read from the stack.', schema: ErrorDetailSchema },
  },
} as const satisfies RouteSpec;

/** GET /robot/positions */
export async function handler(_request: Request): Promise<Response> {
  const context = ros();
  const states = await context.groupStates();
  if (!states.ok) return errorResponse(unavailable(states.error));
  return json(
    states.value.map((s) => ({
      name: s.name,
      description: context.describeState(s.name),
      group: s.group,
      joints: [...s.jointsRad],
    })),
  );
}
