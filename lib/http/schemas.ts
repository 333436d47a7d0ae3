import * as v from 'valibot';
import type { JointLimits } from '../robot/limits.ts';

/** A finite JSON number (JSON can carry 1e999, which parses to Infinity). */
export function finiteNumber(description: string) {
  return v.pipe(v.number(), v.finite('must be a finite number'), v.description(description));
}

/** An integer query parameter in [min, max] with a default, converted from its string form. */
export function queryInt(min: number, max: number, fallback: number, description: string) {
  return v.optional(
    v.pipe(
      v.string(),
      v.regex(/^[+-]?\d{1,9}$/, `must be an integer from ${min} to ${max}`),
      v.transform(Number),
      v.number(),
      v.minValue(min, `must be at least ${min}`),
      v.maxValue(max, `must be at most ${max}`),
      v.description(description),
      v.metadata({ openapi: { type: 'integer', minimum: min, maximum: max, default: fallback } }),
    ),
    String(fallback),
  );
}

/** `{"detail": "..."}`: the body of every error other than validation. */
export const ErrorDetailSchema = v.pipe(
  v.object({ detail: v.pipe(v.string(), v.description('What went wrong and what to do about it.')) }),
  v.title('ErrorDetail'),
);

/** `{"detail": [{loc, msg, type}]}`: the body of a 422. */
export const ValidationErrorSchema = v.pipe(
  v.object({
    detail: v.array(
      v.object({
        loc: v.pipe(
          v.array(v.union([v.string(), v.number()])),
          v.description("Where: 'body' or 'query', then the field path."),
        ),
        msg: v.string(),
        type: v.string(),
      }),
    ),
  }),
  v.title('ValidationError'),
);

/** The speed scale of a motion: 0.01..1.0 of the limits, default 0.1. */
export const SpeedSchema = v.optional(
  v.pipe(
    v.number(),
    v.finite('must be a finite number'),
    v.minValue(0.01, 'speed must be at least 0.01'),
    v.maxValue(1, 'speed must be at most 1.0'),
    v.description('Speed scale, 0.01 to 1.0: the fraction of the velocity limits used. Default 0.1.'),
  ),
  0.1,
);

/**
 * Exactly 7 finite joint angles in radians, each within the active joint limits; the limit
 * message names the joint, the value and the bounds.
 */
export function jointsSchema(limits: JointLimits, description: string) {
  const n = limits.jointNames.length;
  const items = limits.jointNames.map((name, i) => {
    const min = limits.minRad[i] ?? 0;
    const max = limits.maxRad[i] ?? 0;
    const outside = (issue: v.BaseIssue<unknown>) =>
      `${name} = ${String(issue.input)} rad is outside its limits [${min}, ${max}]`;
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

/** A boolean query parameter: true/false/1/0 (any case), converted, with a default. */
export function queryBool(fallback: boolean, description: string) {
  return v.optional(
    v.pipe(
      v.string(),
      v.toLowerCase(),
      v.picklist(['true', 'false', '1', '0'], 'must be true or false'),
      v.transform((s) => s === 'true' || s === '1'),
      v.description(description),
      v.metadata({ openapi: { type: 'boolean', default: fallback } }),
    ),
    String(fallback),
  );
}
