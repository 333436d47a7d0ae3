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
/** A named point: a position of the robot description or a taught one, by name; a joint target once the run starts. */
const namedPoint = v.strictObject({
  position: v.pipe(
    v.string('position must be a string'),
    v.minLength(1, 'must not be empty'),
    v.maxLength(128, 'at most 128 characters'),
    v.description('A named position (GET /robot/positions: of the robot description, or taught), by name.'),
  ),
  speed: SpeedSchema,
});

/**
 * A sequence point: with a `joints` field a joint target {joints, speed?}; with a `position` field a named position
 * {position, speed?} (of the robot description or taught: a joint target once the run starts); otherwise a Cartesian
 * target {x, y, z, a, b, c, speed?, planner?} (m, KUKA ABC rad). Chosen by the presence of `joints` or `position`,
 * so errors name the field that is wrong rather than "no variant matched".
 */
export const pointSchema = perLimits((limits) => {
  const joints = jointPoint(limits);
  const documented = {
    anyOf: [
      toJsonSchema(joints, { errorMode: 'ignore', target: 'draft-2020-12' }),
      toJsonSchema(namedPoint, { errorMode: 'ignore', target: 'draft-2020-12' }),
      toJsonSchema(posePoint, { errorMode: 'ignore', target: 'draft-2020-12' }),
    ].map(({ $schema: _s, ...rest }) => rest),
  };
  const has = (input: unknown, key: string) => typeof input === 'object' && input !== null && key in input;
  return v.pipe(
    v.lazy((input) => (has(input, 'joints') ? joints : has(input, 'position') ? namedPoint : posePoint)),
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

/** A validated configuration as sent: its points may name positions. */
export type SequenceConfigInput = v.InferOutput<ReturnType<typeof sequenceConfigSchema>>;
/** A validated point as sent. */
type PointInput = SequenceConfigInput['home'];
/** A point the runner moves to: a joint target or a Cartesian target. */
export type SequencePoint = Exclude<PointInput, { position: string }>;
/** A configuration the runner runs: every named point resolved to its joint target. */
export interface SequenceConfig extends Omit<SequenceConfigInput, 'home' | 'waypoints'> {
  readonly home: SequencePoint;
  readonly waypoints: readonly SequencePoint[];
}

/** Where a configuration's points are: home, then each waypoint. */
function pointsOf<P>(config: { readonly home: P; readonly waypoints: readonly P[] }): [(string | number)[], P][] {
  return [[['home'], config.home], ...config.waypoints.map((p, k): [(string | number)[], P] => [['waypoints', k], p])];
}

/** The names of the positions a configuration's points name (each once). */
export function namedPointsOf(config: SequenceConfigInput): string[] {
  return [...new Set(pointsOf(config).flatMap(([, p]) => ('position' in p ? [p.position] : [])))];
}

/**
 * The configuration with each named point as its joint target {joints, speed} (`joints`: the angles of each name),
 * or the first point whose name is unknown.
 */
export function resolveNamedPoints(
  config: SequenceConfigInput,
  joints: ReadonlyMap<string, readonly number[]>,
  known: readonly string[],
): { ok: true; value: SequenceConfig } | { ok: false; path: (string | number)[]; message: string } {
  const resolve = (where: (string | number)[], point: PointInput) => {
    if (!('position' in point)) return { ok: true as const, point };
    const q = joints.get(point.position);
    if (!q)
      return {
        ok: false as const,
        path: [...where, 'position'],
        message: `unknown named position '${point.position}'; known: ${known.join(', ')}`,
      };
    return { ok: true as const, point: { joints: [...q], speed: point.speed } };
  };
  const home = resolve(['home'], config.home);
  if (!home.ok) return home;
  const waypoints: SequencePoint[] = [];
  for (const [k, p] of config.waypoints.entries()) {
    const resolved = resolve(['waypoints', k], p);
    if (!resolved.ok) return resolved;
    waypoints.push(resolved.point);
  }
  return { ok: true, value: { ...config, home: home.point, waypoints } };
}

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
  for (const [where, point] of pointsOf(config)) {
    if ('joints' in point) continue;
    const problem = cartesianTargetProblem(point, planningFrame);
    if (problem) return { path: [...where, problem.field], message: problem.message };
  }
  return undefined;
}
