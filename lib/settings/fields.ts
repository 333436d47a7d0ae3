/**
 * The settings' field schemas, written once: a number in a range, a count, a port, a flag, a non-empty text. Each
 * message says what is expected, so the settings file's reader (lib/settings/load.ts) can name the key and the fix.
 */
import * as v from 'valibot';

/** A finite number; `what` names it in the messages ('expected seconds', 'expected a finite seconds'). */
export const finite = (what: string) => v.pipe(v.number(`expected ${what}`), v.finite(`expected a finite ${what}`));

/** An optional finite number from `min` to `max` with a default; `unit` follows the range in the message (' s', ''). */
export function between(what: string, min: number, max: number, unit: string, fallback: number) {
  const message = `expected ${min}..${max}${unit}`;
  return v.optional(v.pipe(finite(what), v.minValue(min, message), v.maxValue(max, message)), fallback);
}

/** An optional finite number above 0 and at most `max` with a default; `unit` names it in the message ('m/s'). */
export function aboveZero(what: string, unit: string, max: number, fallback: number) {
  const message = `expected 0 < ${unit} <= ${max}`;
  return v.optional(v.pipe(finite(what), v.gtValue(0, message), v.maxValue(max, message)), fallback);
}

/** An optional whole number of `what` from `min` to `max` with a default; `unit` follows the range in the message. */
export function count(what: string, min: number, max: number, fallback: number, unit = '') {
  const message = `expected ${min}..${max}${unit}`;
  return v.optional(
    v.pipe(
      v.number(`expected a number of ${what}`),
      v.integer('expected an integer'),
      v.minValue(min, message),
      v.maxValue(max, message),
    ),
    fallback,
  );
}

/** A TCP port, 0..65535 (0: any free port). */
export const port = v.pipe(
  v.number('expected a port number'),
  v.integer('expected an integer port'),
  v.minValue(0, 'expected 0..65535'),
  v.maxValue(65535, 'expected 0..65535'),
);

/** An optional true or false with a default. */
export const flag = (fallback: boolean) => v.optional(v.boolean('expected true or false'), fallback);

/** A string that is not empty; `what` names it in the message ('a host name or address'). */
export const nonEmptyText = (what: string) => v.pipe(v.string(`expected ${what}`), v.nonEmpty('must not be empty'));
