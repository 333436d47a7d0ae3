import * as v from 'valibot';
import { services } from '../../lib/app/services.ts';
import { parseQuery } from '../../lib/http/body.ts';
import { errorResponse, json } from '../../lib/http/errors.ts';
import type { RouteSpec } from '../../lib/http/route-spec.ts';
import { queryInt } from '../../lib/http/schemas.ts';
import { LogListingSchema } from '../trajectory/logs.ts';

/** Query of GET /sequences/logs. */
export const querySchema = v.strictObject({
  n: queryInt(1, 1000, 50, 'How many of the latest lines, 1 to 1000. Default 50.'),
});

export const route = {
  method: 'GET',
  path: '/sequences/logs',
  operationId: 'getSequenceLogs',
  summary: 'Sequence process output',
  description:
    "The runner's stdout and stderr (stderr lines prefixed 'stderr: '), line by line, timestamped, oldest first; the latest 1000 are kept.",
  tags: ['sequences'],
  query: querySchema,
  responses: { 200: { description: 'The latest lines.', schema: LogListingSchema } },
} as const satisfies RouteSpec;

/** GET /sequences/logs */
export async function handler(request: Request): Promise<Response> {
  const query = parseQuery(request, querySchema);
  if (!query.ok) return errorResponse(query.error);
  return json({ lines: services().sequences.logs.latest(query.value.n) });
}
