import * as v from 'valibot';
import { parseJsonBody } from '../../lib/http/body.ts';
import { errorResponse } from '../../lib/http/errors.ts';
import { MOTION_RESPONSES, runMotion } from '../../lib/http/motion.ts';
import { perLimits, type RouteSpec } from '../../lib/http/route-spec.ts';
import { jointsSchema, SpeedSchema } from '../../lib/http/schemas.ts';
import { ros } from '../../lib/ros/context.ts';

/** Body of POST /robot/move/joints, with the bounds of the active joint limits. */
export const bodySchema = perLimits((limits) =>
  v.pipe(
    v.strictObject({
      joints: jointsSchema(limits, 'Target angles J1..J7 in radians, exactly 7, each within its joint limits.'),
      speed: SpeedSchema,
    }),
    v.title('MoveJointsRequest'),
  ),
);

export const route = {
  method: 'POST',
  path: '/robot/move/joints',
  operationId: 'moveToJoints',
  summary: 'Move by seven joint angles',
  description:
    'PTP motion to the given joint angles: all joints start and stop together under the joint limits scaled by speed. ' +
    'Synchronous: answers when the arm is at the target (or the motion failed, was stopped or timed out).',
  tags: ['robot'],
  body: { contentType: 'application/json', schema: bodySchema },
  responses: MOTION_RESPONSES,
} as const satisfies RouteSpec;

/** POST /robot/move/joints */
export async function handler(request: Request): Promise<Response> {
  const context = ros();
  const body = await parseJsonBody(request, bodySchema(context.limits));
  if (!body.ok) return errorResponse(body.error);
  const { joints, speed } = body.value;
  return runMotion('moving to joint angles', (signal) =>
    context.moveToJoints({ joints: joints as number[], speed }, { signal }),
  );
}
