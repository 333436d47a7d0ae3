import * as v from 'valibot';
import { services } from '../../lib/app/services.ts';
import { json } from '../../lib/http/errors.ts';
import type { RouteSpec } from '../../lib/http/route-spec.ts';

/** The sequence status resource. */
export const SequenceStatusSchema = v.pipe(
  v.object({
    status: v.pipe(
      v.picklist(['idle', 'running', 'finished']),
      v.description('idle: none started; running: the runner runs; finished: it exited.'),
    ),
    returncode: v.optional(
      v.pipe(
        v.number(),
        v.description(
          'When finished: the exit code of the runner (0 success, 1 a motion failed, 2 bad arguments, 3 no such action server or ROS 2 not reachable, 4 the bag could not be recorded, 143 stopped).',
        ),
      ),
    ),
    pid: v.optional(v.number()),
    iteration: v.optional(v.pipe(v.number(), v.description('When running: the current iteration (1-based).'))),
    n_iterations: v.optional(v.number()),
    point: v.optional(v.pipe(v.string(), v.description("When running: the point in progress ('home', 'waypoint 2')."))),
    started_at: v.optional(v.string()),
    finished_at: v.optional(v.string()),
    bag_path: v.optional(v.string()),
  }),
  v.title('SequenceStatus'),
);

export const route = {
  method: 'GET',
  path: '/sequences/status',
  operationId: 'getSequenceStatus',
  summary: 'Sequence status',
  description: 'idle, running (with iteration and point) or finished (with returncode).',
  tags: ['sequences'],
  responses: { 200: { description: 'The status.', schema: SequenceStatusSchema } },
} as const satisfies RouteSpec;

/** GET /sequences/status */
export async function handler(_request: Request): Promise<Response> {
  return json(services().sequences.status());
}
