/** The JSON body of POST /trajectory/send (Valibot), bounded by lib/trajectory/bounds.ts. */
import * as v from 'valibot';
import { MAX_ABS_ANGLE_RAD, MAX_POINTS, MAX_TIME_FROM_START_S } from './bounds.ts';

const angle = v.pipe(
  v.number(),
  v.finite('must be a finite number'),
  v.minValue(-MAX_ABS_ANGLE_RAD, 'must be at least -2 pi'),
  v.maxValue(MAX_ABS_ANGLE_RAD, 'must be at most 2 pi'),
);

/** One point: exactly 7 angles in radians and seconds from the start. */
export const TrajectoryPointSchema = v.strictObject({
  positions: v.pipe(
    v.array(v.unknown()),
    v.length(7, (issue) => `expected exactly 7 joint values (J1..J7), got ${(issue.input as unknown[]).length}`),
    v.strictTuple([angle, angle, angle, angle, angle, angle, angle]),
    v.description('J1..J7 angles in radians, exactly 7.'),
  ),
  time_from_start: v.pipe(
    v.number(),
    v.finite('must be a finite number'),
    v.minValue(0, 'must be at least 0'),
    v.maxValue(MAX_TIME_FROM_START_S, `at most ${MAX_TIME_FROM_START_S} s`),
    v.description('Seconds from the trajectory start, at least 0.'),
  ),
});

/** Body of POST /trajectory/send. */
export const TrajectoryBodySchema = v.pipe(
  v.strictObject({
    points: v.pipe(
      v.array(TrajectoryPointSchema),
      v.minLength(1, 'must not be empty'),
      v.maxLength(MAX_POINTS, `at most ${MAX_POINTS} points`),
    ),
    validate_limits: v.optional(
      v.pipe(
        v.boolean(),
        v.description(
          'Check the trajectory against the joint limits file before publishing: every point within the position limits, and ' +
            'its execution from the current state (the spline the controller interpolates, velocities filled in) within the ' +
            'position, velocity and acceleration limits. Default true.',
        ),
      ),
      true,
    ),
    wait: v.optional(
      v.pipe(
        v.boolean(),
        v.description(
          'false (default): answer once the trajectory is published. true: answer when the controller has finished it, ' +
            'refused it or it was stopped or preempted, with the outcome.',
        ),
      ),
      false,
    ),
  }),
  v.title('TrajectoryRequest'),
);
