import * as v from 'valibot';
import { services } from '../../lib/app/services.ts';
import { parseQuery } from '../../lib/http/body.ts';
import { errorResponse, json } from '../../lib/http/errors.ts';
import type { RouteSpec } from '../../lib/http/route-spec.ts';
import { queryInt } from '../../lib/http/schemas.ts';

/** Query of GET /trajectory/logs. */
export const querySchema = v.strictObject({
  n: queryInt(1, 300, 50, 'How many of the latest entries, 1 to 300. Default 50.'),
});

/** A log listing. */
export const LogListingSchema = v.pipe(
  v.object({
    lines: v.pipe(v.array(v.string()), v.description('Oldest first; each line starts with a UTC timestamp.')),
  }),
  v.title('LogListing'),
);

export const route = {
  method: 'GET',
  path: '/trajectory/logs',
  operationId: 'getTrajectoryLogs',
  summary: 'Latest trajectory module log entries',
  description:
    'What was published and what the joint trajectory controller did with it (accepted, refused and why, preempted, finished, hold).',
  tags: ['trajectory'],
  query: querySchema,
  responses: { 200: { description: 'The latest entries.', schema: LogListingSchema } },
} as const satisfies RouteSpec;

/** GET /trajectory/logs */
export async function handler(request: Request): Promise<Response> {
  const query = parseQuery(request, querySchema);
  if (!query.ok) return errorResponse(query.error);
  return json({ lines: services().trajectoryLog.latest(query.value.n) });
}
