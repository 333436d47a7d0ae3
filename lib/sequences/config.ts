import { toJsonSchema } from '@valibot/to-json-schema';
import * as v from 'valibot';
import { jointsSchema } from '../motion/vocabulary.ts';
import { perLimits } from '../ops/operation.ts';
import type { MoveToJointsGoal, MoveToPoseGoal } from '../ros/messages.ts';

const PLANNERS = ['ptp', 'lin', 'circ', 'ompl', 'chomp'] as const;
/** Most waypoints one configuration may hold. */
export const MAX_WAYPOINTS = 1000;

const speed = v.optional(
  v.pipe(
    v.number(),
    v.finite('must be a finite number'),
    v.minValue(0.01, 'speed must be at least 0.01'),
    v.maxValue(1, 'speed must be at most 1.0'),
  ),
  0.1,
);
const metres = v.pipe(
  v.number(),
  v.finite('must be a finite number'),
  v.minValue(-5, 'must be at least -5 m'),
  v.maxValue(5, 'must be at most 5 m'),
);
const radians = v.pipe(
  v.number(),
  v.finite('must be a finite number'),
  v.minValue(-2 * Math.PI, 'must be at least -2 pi'),
  v.maxValue(2 * Math.PI, 'must be at most 2 pi'),
);

const jointPoint = perLimits((limits) =>
  v.strictObject({ joints: jointsSchema(limits, 'J1..J7 target in radians, within the joint limits.'), speed }),
);
const posePoint = v.strictObject({
  x: metres,
  y: metres,
  z: metres,
  a: radians,
  b: radians,
  c: radians,
  speed,
  planner: v.optional(
    v.pipe(v.string(), v.toLowerCase(), v.picklist(PLANNERS, `planner must be one of ${PLANNERS.join(', ')}`)),
    'ptp',
  ),
});

/**
 * A sequence point: with a `joints` field a joint target {joints, speed?}; otherwise a Cartesian
 * target {x, y, z, a, b, c, speed?, planner?} (m, KUKA ABC rad). Chosen by the presence of
 * `joints`, so errors name the field that is wrong rather than "no variant matched".
 */
export const pointSchema = perLimits((limits) => {
  const joints = jointPoint(limits);
  const documented = {
    anyOf: [
      toJsonSchema(joints, { errorMode: 'ignore', target: 'draft-2020-12' }),
      toJsonSchema(posePoint, { errorMode: 'ignore', target: 'draft-2020-12' }),
    ].map(({ $schema: _s, ...rest }) => rest),
  };
  return v.pipe(
    v.lazy((input) => (typeof input === 'object' && input !== null && 'joints' in input ? joints : posePoint)),
    v.metadata({ openapi: documented }),
  );
});

/** The sequence configuration: a home point and the waypoints visited in order. */
export const sequenceConfigSchema = perLimits((limits) =>
  v.pipe(
    v.strictObject({
      name: v.optional(v.pipe(v.string(), v.maxLength(256))),
      description: v.optional(v.pipe(v.string(), v.maxLength(4096))),
      home: pointSchema(limits),
      waypoints: v.pipe(v.array(pointSchema(limits)), v.maxLength(MAX_WAYPOINTS, `at most ${MAX_WAYPOINTS} waypoints`)),
    }),
    v.title('SequenceConfig'),
    v.description(
      'home: a point; waypoints: points visited in order (may be empty). Each iteration runs home, the waypoints, home.',
    ),
  ),
);

/** A validated configuration. */
export type SequenceConfig = v.InferOutput<ReturnType<typeof sequenceConfigSchema>>;
/** A validated point. */
export type SequencePoint = SequenceConfig['home'];

/** The motion goal of a point: MoveToJoints for a joint target, MoveToPose otherwise. */
export function goalOf(
  point: SequencePoint,
): { kind: 'joints'; goal: MoveToJointsGoal } | { kind: 'pose'; goal: MoveToPoseGoal } {
  if ('joints' in point) return { kind: 'joints', goal: { joints: point.joints as number[], speed: point.speed } };
  const { x, y, z, a, b, c, speed: s, planner } = point;
  return { kind: 'pose', goal: { x, y, z, a, b, c, speed: s, planner, frame_id: '' } };
}
