import * as v from 'valibot';
import { defineOperation } from '../../lib/core/operation.ts';
import { restHandler } from '../../lib/http/rest.ts';
import { ok, type Result } from '../../lib/result.ts';

/** The sequence status resource. */
export const SequenceStatusSchema = v.pipe(
  v.object({
    status: v.pipe(
      v.picklist(['idle', 'running', 'paused', 'finished']),
      v.description(
        'idle: none started; running: the runner runs; paused: it runs and {op:pause} holds it (iteration and point say where); finished: it exited.',
      ),
    ),
    returncode: v.optional(
      v.pipe(
        v.number(),
        v.integer(),
        v.description(
          'When finished: the exit code of the runner (0 success, 1 a motion failed, 2 bad arguments, 3 no such action server or ROS 2 not reachable, 4 the bag could not be recorded, 143 stopped).',
        ),
      ),
    ),
    pid: v.optional(v.pipe(v.number(), v.integer())),
    iteration: v.optional(
      v.pipe(v.number(), v.integer(), v.description('When running: the current iteration (1-based).')),
    ),
    n_iterations: v.optional(v.pipe(v.number(), v.integer())),
    point: v.optional(v.pipe(v.string(), v.description("When running: the point in progress ('home', 'waypoint 2')."))),
    paused_since: v.optional(v.pipe(v.string(), v.description('When paused: since when (ISO 8601).'))),
    started_at: v.optional(v.string()),
    finished_at: v.optional(v.string()),
    bag_path: v.optional(v.string()),
  }),
  v.title('SequenceStatus'),
);

/** The sequence runner's status. */
export const operation = defineOperation({
  name: 'get_sequence_status',
  summary: 'Sequence status',
  description:
    'Status of the motion sequence runner: idle (none started), running (with iteration and point), paused (running, ' +
    'held by {op:pause}: iteration and point say where, paused_since since when), or finished (with ' +
    'returncode: 0 done, 1 a motion failed, 2 bad arguments, 3 no such action server or ROS 2 not reachable, 4 the bag could ' +
    'not be recorded, 143 stopped).',
  effect: 'read',
  idempotent: true,
  output: SequenceStatusSchema,
  errors: {},
  rest: {
    method: 'GET',
    path: '/sequences/status',
    operationId: 'getSequenceStatus',
    tags: ['sequences'],
    ok: 'The status.',
  },
  mcp: { title: 'Sequence status' },
  needs: ['sequences', 'control'],
  run: async (_input, ctx): Promise<Result<v.InferOutput<typeof SequenceStatusSchema>, never>> => {
    const status = ctx.services.sequences.status();
    const paused = ctx.services.control.state();
    if (status.status !== 'running' || !paused) return ok(status);
    return ok({ ...status, status: 'paused' as const, paused_since: paused.since });
  },
});

/** GET /sequences/status */
export const handler = restHandler(operation);
