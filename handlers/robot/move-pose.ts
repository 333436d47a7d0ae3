import * as v from 'valibot';
import { parseJsonBody } from '../../lib/http/body.ts';
import { errorResponse, invalid } from '../../lib/http/errors.ts';
import { MOTION_RESPONSES, runMotion } from '../../lib/http/motion.ts';
import type { RouteSpec } from '../../lib/http/route-spec.ts';
import { SpeedSchema } from '../../lib/http/schemas.ts';
import { ros } from '../../lib/ros/context.ts';

/** The planners a pose motion may use. */
export const PLANNERS = ['ptp', 'lin', 'circ', 'ompl', 'chomp'] as const;

const metres = (what: string) =>
  v.pipe(
    v.number(),
    v.finite('must be a finite number'),
    v.minValue(-5, 'must be at least -5 m'),
    v.maxValue(5, 'must be at most 5 m'),
    v.description(what),
  );
const radians = (what: string) =>
  v.optional(
    v.pipe(
      v.number(),
      v.finite('must be a finite number'),
      v.minValue(-2 * Math.PI, 'must be at least -2 pi'),
      v.maxValue(2 * Math.PI, 'must be at most 2 pi'),
      v.description(what),
    ),
    0,
  );
const point = (what: string) =>
  v.optional(
    v.pipe(
      v.strictObject({ x: metres('x in metres'), y: metres('y in metres'), z: metres('z in metres') }),
      v.description(what),
    ),
  );

/** Body of POST /robot/move/pose. */
export const bodySchema = v.pipe(
  v.strictObject({
    x: metres('TCP x in metres, in frame_id.'),
    y: metres('TCP y in metres, in frame_id.'),
    z: metres('TCP z in metres, in frame_id.'),
    a: radians('A: rotation about Z in radians (KUKA ABC). Default 0.'),
    b: radians('B: rotation about the new Y in radians. Default 0.'),
    c: radians('C: rotation about the new X in radians. Default 0.'),
    speed: SpeedSchema,
    planner: v.optional(
      v.pipe(
        v.string(),
        v.maxLength(16, 'at most 16 characters'),
        v.toLowerCase(),
        v.picklist(PLANNERS, (issue) => `unknown planner '${String(issue.input)}'; use one of ${PLANNERS.join(', ')}`),
        v.description(
          'ptp (joint-space, default), lin (straight TCP line), circ (arc; needs circ_center or circ_interim), ompl (sampling-based, collision-free), chomp (optimized). Case-insensitive.',
        ),
      ),
      'ptp',
    ),
    frame_id: v.optional(
      v.pipe(
        v.string(),
        v.maxLength(256, 'at most 256 characters'),
        v.description("Frame of the target: '' (the planning frame) or base_link."),
      ),
      '',
    ),
    circ_center: point('CIRC only: the centre of the arc (both ends must be equally far from it).'),
    circ_interim: point('CIRC only: a point the arc passes through between start and target.'),
  }),
  v.title('MovePoseRequest'),
);

export const route = {
  method: 'POST',
  path: '/robot/move/pose',
  operationId: 'moveToPose',
  summary: 'Cartesian TCP motion',
  description:
    'Moves the TCP to a pose (metres, KUKA ABC radians) with the chosen planner. PTP suits moves between points; LIN gives straight-line tool motion; ' +
    'CIRC an arc through circ_interim or about circ_center. Synchronous.',
  tags: ['robot'],
  body: { contentType: 'application/json', schema: bodySchema },
  responses: MOTION_RESPONSES,
} as const satisfies RouteSpec;

/** POST /robot/move/pose */
export async function handler(request: Request): Promise<Response> {
  const context = ros();
  const body = await parseJsonBody(request, bodySchema);
  if (!body.ok) return errorResponse(body.error);
  const goal = body.value;
  const frame = context.endpoints.planning_frame;
  if (goal.frame_id !== '' && goal.frame_id !== frame) {
    return errorResponse(
      invalid(
        ['body', 'frame_id'],
        `unknown frame_id '${goal.frame_id}'; known: '' (the planning frame) and '${frame}'`,
      ),
    );
  }
  if (goal.circ_center && goal.circ_interim)
    return errorResponse(invalid(['body', 'circ_interim'], 'give circ_center or circ_interim, not both'));
  if ((goal.circ_center || goal.circ_interim) && goal.planner !== 'circ') {
    return errorResponse(
      invalid(
        ['body', goal.circ_center ? 'circ_center' : 'circ_interim'],
        `applies to planner circ only (planner is ${goal.planner})`,
      ),
    );
  }
  const { circ_center, circ_interim, ...rest } = goal;
  return runMotion(`moving the TCP (${goal.planner})`, (signal) =>
    context.moveToPose(
      { ...rest, ...(circ_center ? { circ_center } : {}), ...(circ_interim ? { circ_interim } : {}) },
      { signal },
    ),
  );
}
