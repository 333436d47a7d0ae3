/**
 * The motion vocabulary, defined once: joint targets, Cartesian targets (units, bounds, KUKA ABC,
 * planner, frame, CIRC points), speed and acceleration scales, and the default action names. The
 * move operations, the sequence configuration and the trajectory points all use these.
 */
import * as v from 'valibot';
import { describeLimitViolation, type JointLimits, jointRange } from '../robot/limits.ts';

/** The planners a Cartesian target may use. */
export const PLANNERS = ['ptp', 'lin', 'circ', 'ompl', 'chomp'] as const;
/** A planner name. */
export type PlannerName = (typeof PLANNERS)[number];

/** The actions a sequence's goals go to unless told otherwise. */
export const DEFAULT_ACTIONS = { joints: 'cobot/move_to_joints', pose: 'cobot/move_to_pose' } as const;

/** A bound of a number and the message when it is passed. */
type Bound = readonly [value: number, message: string];

/** A finite number from `min` to `max`; `name` starts the message when it is not a number. */
const finiteIn = (name: string, [min, atLeast]: Bound, [max, atMost]: Bound, description: string) =>
  v.pipe(
    v.number(`${name} must be a number`),
    v.finite('must be a finite number'),
    v.minValue(min, atLeast),
    v.maxValue(max, atMost),
    v.description(description),
  );

/** The speed scale of a motion: 0.01..1.0 of the limits, default 0.1. */
export const SpeedSchema = v.optional(
  finiteIn(
    'speed',
    [0.01, 'speed must be at least 0.01'],
    [1, 'speed must be at most 1.0'],
    'Speed scale, 0.01 to 1.0: the fraction of the velocity limits used. Default 0.1.',
  ),
  0.1,
);

/** The acceleration scale of a motion: 0..1.0, 0 meaning "as speed", default 0. */
export const AccelScaleSchema = v.optional(
  finiteIn(
    'accel_scale',
    [0, 'accel_scale must be at least 0'],
    [1, 'accel_scale must be at most 1.0'],
    'Acceleration scale, 0 to 1.0 of the acceleration limits; 0 means use speed. Default 0.',
  ),
  0,
);

/** A Cartesian coordinate in metres, within +-5 m. */
export const metres = (what: string) =>
  finiteIn(what.split(' ')[0] as string, [-5, 'must be at least -5 m'], [5, 'must be at most 5 m'], what);

/** A KUKA ABC angle in radians, within +-2 pi; optional (the face decides the default). */
export const abcAngle = (what: string) =>
  v.optional(
    finiteIn(
      what.split(':')[0] as string,
      [-2 * Math.PI, 'must be at least -2 pi'],
      [2 * Math.PI, 'must be at most 2 pi'],
      what,
    ),
  );

/** A planner name, case-insensitive, with a default. */
export const plannerSchema = (fallback: PlannerName) =>
  v.optional(
    v.pipe(
      v.string('planner must be a string'),
      v.maxLength(16, 'at most 16 characters'),
      v.toLowerCase(),
      v.picklist(PLANNERS, (issue) => `unknown planner '${String(issue.input)}'; use one of ${PLANNERS.join(', ')}`),
      v.description(
        `ptp (joint-space), lin (straight TCP line), circ (arc; needs circ_center or circ_interim), ompl (sampling-based, collision-free), chomp (optimized). Case-insensitive. Default ${fallback}.`,
      ),
    ),
    fallback,
  );

/** The planner of a move: default ptp. */
export const PlannerSchema = plannerSchema('ptp');

/** The frame of a Cartesian target: '' (the planning frame) or its name. */
export const FrameIdSchema = v.optional(
  v.pipe(
    v.string('frame_id must be a string'),
    v.maxLength(256, 'at most 256 characters'),
    v.description("Frame of the target: '' (the planning frame) or base_link."),
  ),
  '',
);

const circPoint = (what: string) =>
  v.optional(
    v.pipe(
      v.strictObject({ x: metres('x in metres'), y: metres('y in metres'), z: metres('z in metres') }),
      v.description(what),
    ),
  );

/** The fields of a Cartesian target: position, ABC orientation, speed, planner, frame, CIRC points. */
export const cartesianTargetEntries = {
  x: metres('TCP x in metres, in frame_id.'),
  y: metres('TCP y in metres, in frame_id.'),
  z: metres('TCP z in metres, in frame_id.'),
  a: abcAngle('A: rotation about Z in radians (KUKA ABC). Default 0 (see the operation for a, b and c omitted).'),
  b: abcAngle('B: rotation about the new Y in radians. Default 0.'),
  c: abcAngle('C: rotation about the new X in radians. Default 0.'),
  speed: SpeedSchema,
  planner: PlannerSchema,
  frame_id: FrameIdSchema,
  circ_center: circPoint('CIRC only: the centre of the arc (both ends must be equally far from it).'),
  circ_interim: circPoint('CIRC only: a point the arc passes through between start and target.'),
};

/** A Cartesian target. */
export const CartesianTargetSchema = v.strictObject(cartesianTargetEntries);
/** A validated Cartesian target (a, b, c possibly absent). */
export type CartesianTarget = v.InferOutput<typeof CartesianTargetSchema>;

/** A Cartesian target's consistency beyond field bounds: frame known, CIRC points only with circ, one of them. */
export function cartesianTargetProblem(
  target: CartesianTarget,
  planningFrame: string,
): { field: string; message: string } | undefined {
  if (target.frame_id !== '' && target.frame_id !== planningFrame)
    return {
      field: 'frame_id',
      message: `unknown frame_id '${target.frame_id}'; known: '' (the planning frame) and '${planningFrame}'`,
    };
  if (target.circ_center && target.circ_interim)
    return { field: 'circ_interim', message: 'give circ_center or circ_interim, not both' };
  if ((target.circ_center || target.circ_interim) && target.planner !== 'circ')
    return {
      field: target.circ_center ? 'circ_center' : 'circ_interim',
      message: `applies to planner circ only (planner is ${target.planner})`,
    };
  return undefined;
}

/**
 * Exactly 7 finite joint angles in radians, each within the active joint limits; the limit
 * message names the joint, the value and the bounds.
 */
export function jointsSchema(limits: JointLimits, description: string) {
  const n = limits.jointNames.length;
  const items = limits.jointNames.map((name, i) => {
    const { min, max } = jointRange(limits, i);
    const outside = (issue: v.BaseIssue<unknown>) =>
      describeLimitViolation({ joint: name, value: issue.input, min, max });
    return v.pipe(
      v.number(),
      v.finite('must be a finite number'),
      v.minValue(min, outside),
      v.maxValue(max, outside),
      v.description(`${name} (J${i + 1}) in radians, ${min} to ${max}.`),
    );
  });
  return v.pipe(
    v.array(v.unknown()),
    v.length(n, (issue) => `expected exactly ${n} joint values (J1..J${n}), got ${(issue.input as unknown[]).length}`),
    v.strictTuple(items),
    v.description(description),
  );
}
