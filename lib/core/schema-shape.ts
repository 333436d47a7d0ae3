import type * as v from 'valibot';

interface Shaped {
  readonly type: string;
  readonly entries?: Readonly<Record<string, v.GenericSchema>>;
  readonly wrapped?: Shaped;
}

/** The entries of an object schema (piped or not); empty for any other schema. */
export function objectEntries(schema: v.GenericSchema): Readonly<Record<string, v.GenericSchema>> {
  return (schema as unknown as Shaped).entries ?? {};
}

/** The scalar JSON type an entry holds once optional wrappers are removed: 'number', 'boolean', 'string' or undefined. */
export function scalarType(entry: v.GenericSchema): string | undefined {
  let shaped = entry as unknown as Shaped;
  while (shaped.wrapped && /optional|nullable|nullish/.test(shaped.type)) shaped = shaped.wrapped;
  return ['number', 'boolean', 'string'].includes(shaped.type) ? shaped.type : undefined;
}

/** True when an object entry may be omitted. */
export function isOptional(entry: v.GenericSchema): boolean {
  return /optional|nullish/.test((entry as unknown as Shaped).type);
}

interface Walkable extends Shaped {
  readonly kind?: string;
  readonly item?: v.GenericSchema;
  readonly items?: readonly v.GenericSchema[];
  readonly pipe?: readonly Walkable[];
}

/** A decimal number as text (what query, form and JSON strings are converted from). */
export const NUMERIC = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d{1,3})?$/;

/**
 * A JSON value with the numbers and booleans that arrived as strings converted where the schema wants a number or a
 * boolean ("0.5" -> 0.5, "true" -> true), as FastAPI accepted them, through objects, arrays and tuples. Anything else
 * is left for the schema to judge (an unknown key stays unknown, "fast" stays a string and is refused). The one rule of
 * every face: lib/core/invoke.ts applies it before validating (docs/api.md, numbers sent as strings). What holds no
 * such string is returned as it is (no copy: a jog socket's commands come 100 a second).
 */
export function coerceScalarStrings(schema: v.GenericSchema, value: unknown): unknown {
  let shaped = schema as unknown as Walkable;
  while (shaped.wrapped && /optional|nullable|nullish/.test(shaped.type)) shaped = shaped.wrapped as Walkable;
  // A schema piped into another (an array checked as a tuple) shapes the value by the last one.
  const piped = shaped.pipe?.slice(1).findLast((step) => step.kind === 'schema');
  if (piped) shaped = piped;
  if (typeof value === 'string') {
    const text = value.trim();
    if (shaped.type === 'number' && NUMERIC.test(text)) return Number(text);
    if (shaped.type === 'boolean' && (text === 'true' || text === 'false')) return text === 'true';
    return value;
  }
  if (Array.isArray(value)) {
    const itemOf = shaped.item
      ? () => shaped.item as v.GenericSchema
      : shaped.items
        ? (i: number) => shaped.items?.[i]
        : undefined;
    if (!itemOf) return value;
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const entry = itemOf(i);
      const item: unknown = value[i];
      const converted = entry ? coerceScalarStrings(entry, item) : item;
      if (converted !== item) {
        out ??= value.slice();
        out[i] = converted;
      }
    }
    return out ?? value;
  }
  if (typeof value === 'object' && value !== null && shaped.entries) {
    let out: Record<string, unknown> | undefined;
    for (const key in value) {
      if (!Object.hasOwn(value, key)) continue;
      const entry = shaped.entries[key];
      const item = (value as Record<string, unknown>)[key];
      const converted = entry ? coerceScalarStrings(entry, item) : item;
      if (converted === item) continue;
      // No prototype: a "__proto__" key (JSON.parse keeps it as a key of its own) stays a key, so the schema sees it
      // and refuses it as unknown, instead of an assignment that would set the object's prototype and drop the key.
      out ??= ownEntries(value);
      out[key] = converted;
    }
    return out ?? value;
  }
  return value;
}

/** An object's own enumerable keys and values as an object without prototype (a "__proto__" key stays a key). */
function ownEntries(value: object): Record<string, unknown> {
  const out = Object.create(null) as Record<string, unknown>;
  for (const [key, item] of Object.entries(value)) out[key] = item;
  return out;
}

/**
 * The keys an object schema takes at `path` (object keys and array indexes from the root), through optional wrappers,
 * pipes, arrays and tuples; undefined where the path leads to no single object schema (a union, a record).
 */
export function keysAt(schema: v.GenericSchema, path: readonly unknown[]): string[] | undefined {
  let shaped = schema as unknown as Walkable;
  for (let i = 0; ; i++) {
    while (shaped.wrapped && /optional|nullable|nullish/.test(shaped.type)) shaped = shaped.wrapped as Walkable;
    const piped = shaped.pipe?.slice(1).findLast((step) => step.kind === 'schema');
    if (piped) shaped = piped;
    if (i === path.length) return shaped.entries ? Object.keys(shaped.entries) : undefined;
    const key = path[i];
    const next =
      typeof key === 'number'
        ? (shaped.item ?? shaped.items?.[key])
        : typeof key === 'string'
          ? shaped.entries?.[key]
          : undefined;
    if (!next) return undefined;
    shaped = next as unknown as Walkable;
  }
}
