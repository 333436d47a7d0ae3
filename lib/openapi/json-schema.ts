import { type JsonSchema, type OverrideActionContext, toJsonSchema } from '@valibot/to-json-schema';
import type * as v from 'valibot';

type Definition = JsonSchema | boolean;
type Defs = Readonly<Record<string, Definition>>;

/** Keywords with the same meaning in draft-07 and draft 2020-12; every other key is dropped. */
const PORTABLE = new Set([
  'type',
  'enum',
  'const',
  'multipleOf',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'maxLength',
  'minLength',
  'pattern',
  'format',
  'contentEncoding',
  'contentMediaType',
  'maxItems',
  'minItems',
  'uniqueItems',
  'maxProperties',
  'minProperties',
  'required',
  'title',
  'description',
  'default',
  'examples',
  'readOnly',
  'writeOnly',
]);
/** Keywords whose value is one subschema, a list of subschemas, or a map of them. */
const ONE = new Set(['items', 'additionalProperties', 'propertyNames', 'contains', 'not', 'if', 'then', 'else']);
const LIST = new Set(['anyOf', 'oneOf', 'allOf']);
const MAP = new Set(['properties', 'patternProperties']);

/**
 * Fields that travel as text (query parameters, form fields) document their JSON type in
 * `v.metadata({openapi})`. The converter never calls `overrideSchema` for piped schemas, so the
 * documented schema replaces the text form at the metadata action (keeping title and description).
 */
function overrideAction({ valibotAction, jsonSchema }: OverrideActionContext): JsonSchema | undefined {
  if (valibotAction.type !== 'metadata') return undefined;
  const documented = (valibotAction as { metadata?: { openapi?: unknown } }).metadata?.openapi;
  if (typeof documented !== 'object' || documented === null) return undefined;
  const { title, description } = jsonSchema;
  return { ...(documented as JsonSchema), ...(title ? { title } : {}), ...(description ? { description } : {}) };
}

/** The definition a local `$ref` (`#/$defs/<id>`) points to; a dangling one is a bug. */
function target(ref: string, defs: Defs): Definition {
  const id = ref.startsWith('#/$defs/') ? ref.slice(8).replaceAll('~1', '/').replaceAll('~0', '~') : undefined;
  const found = id === undefined ? undefined : defs[id];
  if (found === undefined) throw new Error(`jsonSchema: unresolvable $ref ${ref}`);
  return found;
}

/** A string default of a field documented as a number or boolean (the text form's default), as that type. */
function typedDefault(schema: JsonSchema): unknown {
  const value = schema.default;
  if (typeof value !== 'string') return value;
  if ((schema.type === 'integer' || schema.type === 'number') && value.trim() !== '' && Number.isFinite(Number(value)))
    return Number(value);
  if (schema.type === 'boolean' && ['true', 'false', '1', '0'].includes(value.toLowerCase()))
    return value.toLowerCase() === 'true' || value === '1';
  return value;
}

/** A schema without its description and bounds: items equal in this form differ only in their ranges. */
function shapeOf(d: Definition): string {
  if (typeof d === 'boolean') return String(d);
  const { description: _d, minimum: _min, maximum: _max, ...shape } = d;
  return JSON.stringify(shape);
}

/**
 * A tuple as one `items` schema, which draft-07 and 2020-12 read alike (`prefixItems` is 2020-12
 * only, an `items` list draft-07 only), with its length in `minItems`/`maxItems`. Equal items stay
 * as they are; items that differ only in their bounds become one schema of the widest bounds, the
 * bounds of each position written into the description; other items become an `anyOf`.
 */
function tupleAsItems(schema: JsonSchema, prefix: Definition[]): JsonSchema {
  const { prefixItems: _p, items: rest, ...others } = schema;
  const fixed = rest === false;
  const objects = prefix.filter((d): d is JsonSchema => typeof d !== 'boolean');
  const widest = (key: 'minimum' | 'maximum', pick: (...n: number[]) => number) =>
    objects.every((d) => typeof d[key] === 'number') ? { [key]: pick(...objects.map((d) => d[key] as number)) } : {};
  const first = prefix[0] ?? true;
  let items: Definition;
  let positions: string | undefined;
  if (fixed && new Set(prefix.map((d) => JSON.stringify(d))).size <= 1) items = first;
  else {
    positions = prefix
      .map((d, i) =>
        typeof d === 'boolean' ? `[${i}] ${d}.` : (d.description ?? `[${i}] ${d.minimum} to ${d.maximum}.`),
      )
      .join(' ');
    if (fixed && objects.length === prefix.length && new Set(prefix.map(shapeOf)).size === 1) {
      const { description: _d, minimum: _min, maximum: _max, ...shape } = first as JsonSchema;
      items = { ...shape, ...widest('minimum', Math.min), ...widest('maximum', Math.max) };
    } else {
      const all = fixed || Array.isArray(rest) ? prefix : [...prefix, rest ?? true];
      items = { anyOf: [...new Map(all.map((d) => [JSON.stringify(d), d])).values()] };
    }
  }
  const description = [schema.description, positions && `Item by item: ${positions}`].filter(Boolean).join(' ');
  return {
    ...others,
    items,
    minItems: Math.max(schema.minItems ?? 0, prefix.length),
    ...(fixed ? { maxItems: Math.min(schema.maxItems ?? prefix.length, prefix.length) } : {}),
    ...(description ? { description } : {}),
  };
}

/** Options of {@link jsonSchema}. */
export interface JsonSchemaOptions {
  /** Keep tuples as `prefixItems` (each position's bounds in the schema): valid in 2020-12 only, e.g. OpenAPI 3.1. */
  readonly prefixItems?: boolean;
}

/** The schema with `$ref`s inlined, tuples as one `items` schema, documented defaults typed and non-standard keys dropped. */
function portable(node: Definition, defs: Defs, resolving: readonly string[], options: JsonSchemaOptions): Definition {
  if (typeof node === 'boolean') return node;
  if (node.$ref !== undefined) {
    if (resolving.includes(node.$ref))
      throw new Error(`jsonSchema: recursive schema at ${node.$ref} cannot be inlined`);
    const { $ref, ...siblings } = node;
    const resolved = target($ref, defs);
    if (typeof resolved === 'boolean') return resolved;
    return portable({ ...resolved, ...siblings }, defs, [...resolving, $ref], options);
  }
  const schema = Array.isArray(node.prefixItems) && !options.prefixItems ? tupleAsItems(node, node.prefixItems) : node;
  const out: Record<string, unknown> = {};
  const sub = (d: unknown) => portable(d as Definition, defs, resolving, options);
  for (const [key, value] of Object.entries(schema)) {
    if (value === undefined) continue;
    if (ONE.has(key)) out[key] = sub(value);
    else if (LIST.has(key) || (key === 'prefixItems' && options.prefixItems))
      out[key] = (value as Definition[]).map(sub);
    else if (MAP.has(key)) out[key] = Object.fromEntries(Object.entries(value).map(([k, d]) => [k, sub(d)]));
    else if (PORTABLE.has(key)) out[key] = value;
  }
  if (Array.isArray(out.required) && out.required.length === 0) delete out.required;
  if ('default' in out) out.default = typedDefault(schema);
  return out as JsonSchema;
}

/**
 * JSON Schema of a valibot schema that draft-07 and draft 2020-12 validators read alike: no
 * `$ref` (definitions inlined), no `$schema`, only keywords both drafts define, tuples as one
 * `items` schema with `minItems`/`maxItems` (per-position bounds in the description), and fields
 * sent as text (query, form) under their documented JSON type from `v.metadata({openapi})`.
 * With `prefixItems: true` tuples stay `prefixItems` + `items: false` (2020-12 only).
 */
export function jsonSchema(schema: v.GenericSchema, options: JsonSchemaOptions = {}): JsonSchema {
  const { $defs = {}, ...root } = toJsonSchema(schema, {
    target: 'draft-2020-12',
    errorMode: 'ignore',
    overrideAction,
  });
  return portable(root, $defs, [], options) as JsonSchema;
}
