import * as v from 'valibot';
import { intField } from '../../lib/http/schemas.ts';
import { defineOperation } from '../../lib/core/operation.ts';
import { ok } from '../../lib/result.ts';
import { restHandler } from '../../lib/http/rest.ts';

/** Input of get_trajectory_logs. */
export const inputSchema = v.strictObject({
  n: intField(1, 300, 50, 'How many of the latest entries, 1 to 300. Default 50.'),
});

/** A log listing. */
export const LogListingSchema = v.pipe(
  v.object({
    lines: v.pipe(v.array(v.string()), v.description('Oldest first; each line starts with a UTC timestamp.')),
    total_buffered: v.pipe(
      v.number(),
      v.integer(),
      v.description('How many lines the log holds now (at most its size).'),
    ),
  }),
  v.title('LogListing'),
);

/** The trajectory module's latest log lines. */
export const operation = defineOperation({
  name: 'get_trajectory_logs',
  summary: 'Latest trajectory module log entries',
  description:
    "The trajectory module's latest log lines (n 1..300, default 50), oldest first: what was published and what the joint " +
    'trajectory controller did with it (accepted, refused and why, preempted, finished, hold).',
  effect: 'read',
  idempotent: true,
  input: inputSchema,
  output: LogListingSchema,
  errors: {},
  rest: {
    method: 'GET',
    path: '/trajectory/logs',
    operationId: 'getTrajectoryLogs',
    tags: ['trajectory'],
    query: ['n'],
    ok: 'The latest entries.',
  },
  mcp: { title: 'Trajectory logs' },
  needs: ['trajectoryLog'],
  run: async ({ n }, ctx) => {
    const log = ctx.services.trajectoryLog;
    return ok({ lines: log.latest(n), total_buffered: log.size });
  },
});

/** GET /trajectory/logs */
export const handler = restHandler(operation);
