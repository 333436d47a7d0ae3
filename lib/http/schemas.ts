import * as v from 'valibot';

/** A finite JSON number (JSON can carry 1e999, which parses to Infinity). */
export function finiteNumber(description: string) {
  return v.pipe(v.number(), v.finite('must be a finite number'), v.description(description));
}

/** An optional integer in [min, max] with a default (the REST face converts it from query or form text). */
export function intField(min: number, max: number, fallback: number, description: string) {
  return boundedField('an integer', min, max, fallback, description);
}

/** An optional finite number in [min, max] with a default. */
export function numberField(min: number, max: number, fallback: number, description: string) {
  return boundedField('a number', min, max, fallback, description);
}

/** An optional number in [min, max] with a default: an integer, or any finite number. */
function boundedField(
  kind: 'an integer' | 'a number',
  min: number,
  max: number,
  fallback: number,
  description: string,
) {
  const message = `must be ${kind} from ${min} to ${max}`;
  return v.optional(
    v.pipe(
      v.number(message),
      kind === 'an integer' ? v.integer(message) : v.finite(message),
      v.minValue(min, `must be at least ${min}`),
      v.maxValue(max, `must be at most ${max}`),
      v.description(description),
    ),
    fallback,
  );
}

/** An optional boolean with a default (the REST face converts true/false/1/0 from query text). */
export function boolField(fallback: boolean, description: string) {
  return v.optional(v.pipe(v.boolean('must be true or false'), v.description(description)), fallback);
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

export { jointsSchema, SpeedSchema } from '../motion/vocabulary.ts';
