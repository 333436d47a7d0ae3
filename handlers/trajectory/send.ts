import * as v from 'valibot';
import { defineOperation } from '../../lib/core/operation.ts';
import { restHandler } from '../../lib/http/rest.ts';
import { TrajectoryBodySchema } from '../../lib/trajectory/schema.ts';
import { checkAndPublish, TRAJECTORY_NEEDS } from '../../lib/ops/trajectory-request.ts';

export { MAX_POINTS } from '../../lib/trajectory/bounds.ts';
export { TrajectoryPointSchema } from '../../lib/trajectory/schema.ts';

/** What the two trajectory publishing operations answer. */
export const SentSchema = v.pipe(
  v.object({
    status: v.pipe(v.literal('sent'), v.description('The trajectory was published; this does not confirm execution.')),
    points: v.pipe(v.number(), v.integer(), v.description('Number of points published.')),
    duration: v.pipe(v.number(), v.description("Seconds from the trajectory's start to its last point, as published.")),
    time_scale: v.pipe(
      v.literal(1),
      v.description(
        'Always 1: armgate publishes the times as given (a trajectory beyond the limits is refused, never stretched).',
      ),
    ),
    times_increasing: v.pipe(
      v.boolean(),
      v.description('false when time_from_start does not increase: the controller will refuse it.'),
    ),
    warning: v.optional(v.string()),
    outcome: v.optional(
      v.pipe(
        v.picklist(['finished', 'refused', 'stopped', 'preempted', 'timeout']),
        v.description(
          'With wait: what the controller did. finished: it reached the last point; refused: it did not accept the ' +
            'trajectory; stopped: a stop or hold ended it; preempted: a newer trajectory or motion replaced it; timeout: no ' +
            'outcome in time (the trajectory was then stopped).',
        ),
      ),
    ),
    message: v.optional(v.pipe(v.string(), v.description('With wait: why, in one sentence.'))),
    duration_s: v.optional(v.pipe(v.number(), v.description('With wait: seconds from sending to the outcome.'))),
  }),
  v.title('TrajectorySent'),
);

/** Errors of the two trajectory publishing operations. */
export const TRAJECTORY_ERRORS = {
  busy: 'A motion or a sequence holds the arm.',
  unavailable: 'The controller topic is unavailable, or no joint state to check from.',
} as const;

/** Publishes a joint trajectory given as JSON. */
export const operation = defineOperation({
  name: 'send_trajectory',
  summary: 'Publish a trajectory from JSON',
  description:
    "Publishes a JointTrajectory (joint1..joint7: points of 7 angles in radians with time_from_start in seconds, increasing) on the joint trajectory controller's topic. " +
    "Without wait, status 'sent' confirms publication only (what the controller did is in {op:get_trajectory_logs}); with " +
    'wait: true the answer comes when the controller has finished, refused, stopped or preempted it, in outcome. A trajectory still ' +
    'executing is preempted; a running motion or sequence makes it fail as busy. With validate_limits (the default) the ' +
    "service fills in each point's velocity, so the controller interpolates a cubic spline from the arm's current state, " +
    'and refuses a trajectory whose execution would pass a position, velocity or acceleration limit, naming the point, ' +
    'joint and figure (add time or points); nothing moves then. Moves the real arm; {op:stop} halts it.',
  effect: 'motion',
  idempotent: false,
  input: TrajectoryBodySchema,
  // Large bodies are parsed and checked on the trajectory worker thread, with this same schema.
  rawJson: true,
  output: SentSchema,
  errors: TRAJECTORY_ERRORS,
  rest: {
    method: 'POST',
    path: '/trajectory/send',
    operationId: 'sendTrajectory',
    tags: ['trajectory'],
    body: 'json',
    ok: 'Published.',
    example: {
      points: [
        { positions: [0.2, 0, 0, -1.57, 0, 1.57, 0], time_from_start: 2 },
        { positions: [0, 0, 0, -1.57, 0, 1.57, 0], time_from_start: 4 },
      ],
    },
  },
  mcp: { title: 'Send a joint trajectory' },
  needs: TRAJECTORY_NEEDS,
  run: (input, ctx) => checkAndPublish({ kind: 'json', text: input.text }, [], ctx.calledAs, {}, ctx),
});

/** POST /trajectory/send */
export const handler = restHandler(operation);
