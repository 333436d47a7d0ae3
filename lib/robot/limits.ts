import * as v from 'valibot';
import { err, ok, type Result } from '../result.ts';
import { describeIssue } from '../describe-issue.ts';

/** Per-joint limits in J1..J7 order (radians, rad/s, rad/s^2, rad/s^3) plus Cartesian limits. */
export interface JointLimits {
  readonly jointNames: readonly string[];
  readonly minRad: readonly number[];
  readonly maxRad: readonly number[];
  readonly maxVelRadS: readonly number[];
  readonly maxAccRadS2: readonly number[];
  readonly maxJerkRadS3: readonly number[];
  readonly cartesian: CartesianLimits;
}

/** Pilz-style Cartesian limits: translation m/s, m/s^2 and rotation rad/s. */
export interface CartesianLimits {
  readonly maxTransVelMS: number;
  readonly maxTransAccMS2: number;
  readonly maxTransDecMS2: number;
  readonly maxRotVelRadS: number;
}

const positive = v.pipe(
  v.number('expected a number'),
  v.finite('expected a finite number'),
  v.gtValue(0, 'must be > 0'),
);
const finite = v.pipe(v.number('expected a number'), v.finite('expected a finite number'));

const JointEntry = v.looseObject({
  has_position_limits: v.optional(v.boolean(), true),
  min_position: finite,
  max_position: finite,
  has_velocity_limits: v.optional(v.boolean(), true),
  max_velocity: positive,
  has_acceleration_limits: v.optional(v.boolean(), true),
  max_acceleration: positive,
  has_jerk_limits: v.optional(v.boolean(), false),
  max_jerk: v.optional(positive),
});

const LimitsFile = v.looseObject({
  joint_limits: v.record(v.string(), JointEntry, 'expected a map of joint name to limits'),
  cartesian_limits: v.optional(
    v.looseObject({
      max_trans_vel: v.optional(positive, 1.0),
      max_trans_acc: v.optional(positive, 2.25),
      max_trans_dec: v.optional(finite, -5.0),
      max_rot_vel: v.optional(positive, 1.57),
    }),
    {},
  ),
});

/**
 * Builds the joint limits for `jointNames` from a parsed joint_limits.yaml (MoveIt format with
 * position limits). Each joint must be present with min <= max; jerk defaults to 10 x acceleration.
 */
export function parseJointLimits(doc: unknown, jointNames: readonly string[]): Result<JointLimits, string> {
  const parsed = v.safeParse(LimitsFile, doc);
  if (!parsed.success) return err(describeIssue('', parsed.issues));
  const file = parsed.output;
  const minRad: number[] = [];
  const maxRad: number[] = [];
  const maxVel: number[] = [];
  const maxAcc: number[] = [];
  const maxJerk: number[] = [];
  for (const name of jointNames) {
    const entry = file.joint_limits[name];
    if (!entry)
      return err(
        `joint_limits.${name}: missing (the file names ${Object.keys(file.joint_limits).join(', ') || 'no joints'})`,
      );
    if (entry.min_position > entry.max_position) {
      return err(
        `joint_limits.${name}: min_position ${entry.min_position} is greater than max_position ${entry.max_position}`,
      );
    }
    minRad.push(entry.min_position);
    maxRad.push(entry.max_position);
    maxVel.push(entry.max_velocity);
    maxAcc.push(entry.max_acceleration);
    maxJerk.push(entry.max_jerk ?? entry.max_acceleration * 10);
  }
  const c = file.cartesian_limits;
  return ok({
    jointNames: [...jointNames],
    minRad,
    maxRad,
    maxVelRadS: maxVel,
    maxAccRadS2: maxAcc,
    maxJerkRadS3: maxJerk,
    cartesian: {
      maxTransVelMS: c.max_trans_vel,
      maxTransAccMS2: c.max_trans_acc,
      maxTransDecMS2: Math.abs(c.max_trans_dec),
      maxRotVelRadS: c.max_rot_vel,
    },
  });
}

/** A joint position outside its range: the joint (index and name), the value and the range (rad). */
export interface JointRangeViolation {
  readonly index: number;
  readonly joint: string;
  readonly value: unknown;
  readonly min: number;
  readonly max: number;
}

/** The position range of joint `i` (rad). */
export function jointRange(limits: JointLimits, i: number): { readonly min: number; readonly max: number } {
  return { min: limits.minRad[i] ?? 0, max: limits.maxRad[i] ?? 0 };
}

/** True when `value` is a finite angle within joint `i`'s range: the one joint-limit check. */
export function withinJointRange(limits: JointLimits, i: number, value: unknown): boolean {
  const { min, max } = jointRange(limits, i);
  return typeof value === 'number' && Number.isFinite(value) && value >= min && value <= max;
}

/**
 * The first joint of `positionsRad` (in the limits' joint order) that is not a finite angle within its range; a
 * missing value counts as outside. Undefined when every joint is within its range.
 */
export function findLimitViolation(
  limits: JointLimits,
  positionsRad: ArrayLike<number | undefined>,
): JointRangeViolation | undefined {
  for (let i = 0; i < limits.jointNames.length; i++) {
    const value = positionsRad[i];
    if (!withinJointRange(limits, i, value))
      return { index: i, joint: limits.jointNames[i] ?? `joint${i + 1}`, value, ...jointRange(limits, i) };
  }
  return undefined;
}

/** A violation in words: `joint2 = 3.2 rad is outside its limits [-2.09, 2.09]`. */
export function describeLimitViolation(violation: Omit<JointRangeViolation, 'index'>): string {
  return `${violation.joint} = ${String(violation.value)} rad is outside its limits [${violation.min}, ${violation.max}]`;
}

/** Caches what is built from the limits (a schema with their bounds) per limits object, so it is built once. */
export function perLimits<T>(factory: (limits: JointLimits) => T): (limits: JointLimits) => T {
  const cache = new WeakMap<JointLimits, T>();
  return (limits) => {
    let built = cache.get(limits);
    if (built === undefined) {
      built = factory(limits);
      cache.set(limits, built);
    }
    return built;
  };
}
