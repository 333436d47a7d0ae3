import * as v from 'valibot';
import { intField } from '../../lib/http/schemas.ts';
import { defineOperation } from '../../lib/core/operation.ts';
import { restHandler } from '../../lib/http/rest.ts';
import { ok } from '../../lib/result.ts';
import { LogListingSchema } from '../trajectory/logs.ts';

/** Input of get_sequence_logs. */
export const inputSchema = v.strictObject({
  n: intField(1, 1000, 50, 'How many of the latest lines, 1 to 1000. Default 50.'),
});

/** The sequence runner's latest output lines. */
export const operation = defineOperation({
  name: 'get_sequence_logs',
  summary: 'Sequence process output',
  description:
    "The sequence runner's latest output lines (n 1..1000, default 50): its stdout and stderr (stderr lines prefixed " +
    "'stderr: '), line by line, each with a UTC timestamp, oldest first; the latest 1000 are kept.",
  effect: 'read',
  idempotent: true,
  input: inputSchema,
  output: LogListingSchema,
  errors: {},
  rest: {
    method: 'GET',
    path: '/sequences/logs',
    operationId: 'getSequenceLogs',
    tags: ['sequences'],
    query: ['n'],
    ok: 'The latest lines.',
  },
  mcp: { title: 'Sequence logs' },
  needs: ['sequences'],
  run: async ({ n }, ctx) => {
    const log = ctx.services.sequences.logs;
    return ok({ lines: log.latest(n), total_buffered: log.size });
  },
});

/** GET /sequences/logs */
export const handler = restHandler(operation);
