import { toJsonSchema } from '@valibot/to-json-schema';
import * as v from 'valibot';
import {
  cartesianTargetEntries,
  cartesianTargetProblem,
  jointsSchema,
  plannerSchema,
  SpeedSchema,
} from '../motion/vocabulary.ts';
import { perLimits } from '../robot/limits.ts';
import type { MoveToJointsGoal, MoveToPoseGoal } from '../ros/messages.ts';

/** Most waypoints one configuration may hold. */
export const MAX_WAYPOINTS = 1000;

const jointPoint = perLimits((limits) =>
  v.strictObject({
    joints: jointsSchema(limits, 'J1..J7 target in radians, within the joint limits.'),
    speed: SpeedSchema,
  }),
);
/** A Cartesian point: the moves' Cartesian target, straight-line (lin) unless it names a planner, as the original runner. */
const posePoint = v.strictObject({ ...cartesianTargetEntries, planner: plannerSchema('lin') });

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

/** The motion goal of a point: MoveToJoints for a joint target, MoveToPose otherwise (an omitted a, b or c is 0). */
export function goalOf(
  point: SequencePoint,
): { kind: 'joints'; goal: MoveToJointsGoal } | { kind: 'pose'; goal: MoveToPoseGoal } {
  if ('joints' in point) return { kind: 'joints', goal: { joints: point.joints as number[], speed: point.speed } };
  const { a, b, c, circ_center, circ_interim, ...rest } = point;
  return {
    kind: 'pose',
    goal: {
      ...rest,
      a: a ?? 0,
      b: b ?? 0,
      c: c ?? 0,
      ...(circ_center ? { circ_center } : {}),
      ...(circ_interim ? { circ_interim } : {}),
    },
  };
}

/** The first point of a configuration whose Cartesian target is inconsistent (unknown frame, CIRC points misused). */
export function configProblem(
  config: SequenceConfig,
  planningFrame: string,
): { path: (string | number)[]; message: string } | undefined {
  const points: [(string | number)[], SequencePoint][] = [
    [['home'], config.home],
    ...config.waypoints.map((p, k): [(string | number)[], SequencePoint] => [['waypoints', k], p]),
  ];
  for (const [where, point] of points) {
    if ('joints' in point) continue;
    const problem = cartesianTargetProblem(point, planningFrame);
    if (problem) return { path: [...where, problem.field], message: problem.message };
  }
  return undefined;
}
