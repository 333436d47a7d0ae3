import * as v from 'valibot';

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
        loc: v.pipe(v.array(v.union([v.string(), v.number()])), v.description("Where: 'body' or 'query', then the field path.")),
        msg: v.string(),
        type: v.string(),
      }),
    ),
  }),
  v.title('ValidationError'),
);
