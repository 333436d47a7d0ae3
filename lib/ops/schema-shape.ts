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
