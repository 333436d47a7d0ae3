import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Ajv } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import * as v from 'valibot';
import { jsonSchema } from '../../lib/openapi/json-schema.ts';

const DRAFTS = { 'draft-07': () => new Ajv({ strict: true }), '2020-12': () => new Ajv2020({ strict: true }) };

/** The schema compiled under Ajv strict in both drafts; throws on any strict-mode complaint. */
function compileBoth(schema: object) {
  return Object.entries(DRAFTS).map(([draft, make]) => {
    const ajv = make();
    addFormats.default(ajv);
    return { draft, validate: ajv.compile(schema) };
  });
}

/** Asserts that both drafts accept exactly what valibot accepts, instance by instance. */
function agrees(schema: v.GenericSchema, instances: readonly unknown[]) {
  for (const { draft, validate } of compileBoth(jsonSchema(schema)))
    for (const instance of instances) {
      const expected = v.safeParse(schema, instance).success;
      assert.equal(validate(instance), expected, `${draft}: ${JSON.stringify(instance)} should be ${expected}`);
    }
}

/** Every key anywhere in the tree. */
function keysOf(node: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(node)) for (const item of node) keysOf(item, into);
  else if (typeof node === 'object' && node !== null)
    for (const [key, value] of Object.entries(node)) {
      into.add(key);
      keysOf(value, into);
    }
  return into;
}

const bounded = (min: number, max: number, description: string) =>
  v.pipe(v.number(), v.minValue(min), v.maxValue(max), v.description(description));

describe('jsonSchema', () => {
  it('writes a fixed-length tuple as one items schema with minItems = maxItems, per-position bounds in the description', () => {
    const tuple = v.pipe(
      v.array(v.unknown()),
      v.length(3),
      v.strictTuple([bounded(-1, 1, 'a in -1..1.'), bounded(-2, 2, 'b in -2..2.'), bounded(-1, 1, 'c in -1..1.')]),
      v.description('Three values.'),
    );
    const schema = jsonSchema(tuple);
    assert.deepEqual(schema, {
      type: 'array',
      items: { type: 'number', minimum: -2, maximum: 2 },
      minItems: 3,
      maxItems: 3,
      description: 'Three values. Item by item: a in -1..1. b in -2..2. c in -1..1.',
    });
    agrees(tuple, [[0, 0, 0], [1, 2, -1], [0, 0], [0, 0, 0, 0], [0, 3, 0], [0, 'x', 0], 'abc']);
  });

  it('leaves a value inside the widest bounds but outside its own position to the description', () => {
    const tuple = v.strictTuple([bounded(-1, 1, 'a.'), bounded(-2, 2, 'b.')]);
    for (const { draft, validate } of compileBoth(jsonSchema(tuple)))
      assert.ok(validate([1.5, 0]), `${draft} accepts a = 1.5 (valibot does not: its bound is in the description)`);
    assert.equal(v.safeParse(tuple, [1.5, 0]).success, false);
  });

  it('keeps prefixItems (each position bounded) when asked, for 2020-12-only documents such as OpenAPI 3.1', () => {
    const tuple = v.strictTuple([bounded(-1, 1, 'a.'), bounded(-2, 2, 'b.')]);
    const schema = jsonSchema(tuple, { prefixItems: true });
    assert.deepEqual(schema.prefixItems, [
      { type: 'number', minimum: -1, maximum: 1, description: 'a.' },
      { type: 'number', minimum: -2, maximum: 2, description: 'b.' },
    ]);
    const ajv = new Ajv2020({ strict: true });
    const validate = ajv.compile(schema as object);
    for (const instance of [[0, 0], [1.5, 0], [0, 0, 0], [0]])
      assert.equal(
        validate(instance),
        v.safeParse(tuple, instance).success,
        `2020-12 agrees on ${JSON.stringify(instance)}`,
      );
  });

  it('keeps a tuple of equal items as that item, without per-position text', () => {
    const item = v.pipe(v.number(), v.minValue(0));
    assert.deepEqual(jsonSchema(v.strictTuple([item, item])), {
      type: 'array',
      items: { type: 'number', minimum: 0 },
      minItems: 2,
      maxItems: 2,
    });
    agrees(v.strictTuple([item, item]), [[1, 2], [1], [1, 2, 3], [-1, 0]]);
  });

  it('writes a tuple of unlike items as an anyOf of them', () => {
    const tuple = v.strictTuple([v.string(), v.number()]);
    const schema = jsonSchema(tuple);
    assert.deepEqual(schema.items, { anyOf: [{ type: 'string' }, { type: 'number' }] });
    compileBoth(schema);
  });

  it('documents a text field under its metadata.openapi type: integer, numeric default, no pattern, description kept', () => {
    const field = v.object({
      n: v.optional(
        v.pipe(
          v.string(),
          v.regex(/^\d{1,9}$/),
          v.transform(Number),
          v.number(),
          v.minValue(1),
          v.maxValue(1000),
          v.description('How many lines.'),
          v.metadata({ openapi: { type: 'integer', minimum: 1, maximum: 1000, default: 50 } }),
        ),
        '50',
      ),
      flag: v.optional(
        v.pipe(v.string(), v.picklist(['true', 'false']), v.metadata({ openapi: { type: 'boolean', default: true } })),
        'true',
      ),
    });
    const schema = jsonSchema(field);
    assert.deepEqual(schema.properties, {
      n: { type: 'integer', minimum: 1, maximum: 1000, default: 50, description: 'How many lines.' },
      flag: { type: 'boolean', default: true },
    });
    for (const { draft, validate } of compileBoth(schema)) {
      assert.ok(validate({ n: 20, flag: false }), `${draft} accepts n 20`);
      assert.ok(!validate({ n: 2.5 }), `${draft} rejects n 2.5`);
      assert.ok(!validate({ n: 0 }), `${draft} rejects n 0`);
      assert.ok(!validate({ n: '20' }), `${draft} rejects the text form`);
    }
  });

  it('writes v.integer() as type integer', () => {
    agrees(v.pipe(v.number(), v.integer(), v.minValue(1)), [1, 2, 2.5, 0, '1']);
    assert.equal(jsonSchema(v.pipe(v.number(), v.integer())).type, 'integer');
  });

  it('inlines lazy definitions: no $ref, no $defs', () => {
    const point = v.strictObject({ x: v.number() });
    const schema = v.object({ home: v.lazy(() => point), waypoints: v.array(v.lazy(() => point)) });
    const keys = keysOf(jsonSchema(schema));
    assert.ok(!keys.has('$ref') && !keys.has('$defs'), `no references: ${[...keys].join(', ')}`);
    agrees(schema, [{ home: { x: 1 }, waypoints: [{ x: 2 }] }, { home: { x: 1, y: 2 }, waypoints: [] }, { home: {} }]);
  });

  it('throws on a recursive schema, which cannot be inlined', () => {
    type Tree = { children: Tree[] };
    const tree: v.GenericSchema<Tree> = v.object({ children: v.array(v.lazy(() => tree)) });
    assert.throws(() => jsonSchema(tree), /recursive/);
  });

  it('takes a documented anyOf (with tuples inside) in place of a lazy choice, and drops non-JSON-Schema metadata', () => {
    const joints = v.strictObject({ joints: v.strictTuple([bounded(-1, 1, 'j1.'), bounded(-2, 2, 'j2.')]) });
    const pose = v.strictObject({ x: v.number() });
    const point = v.pipe(
      v.lazy((input) => (typeof input === 'object' && input !== null && 'joints' in input ? joints : pose)),
      v.metadata({
        openapi: {
          anyOf: [
            {
              type: 'object',
              properties: {
                joints: {
                  type: 'array',
                  prefixItems: [
                    { type: 'number', minimum: -1, maximum: 1 },
                    { type: 'number', minimum: -2, maximum: 2 },
                  ],
                  items: false,
                  minItems: 2,
                },
              },
              required: ['joints'],
              additionalProperties: false,
            },
            { type: 'object', properties: { x: { type: 'number' } }, required: ['x'], additionalProperties: false },
          ],
        },
        internal: 'not a keyword',
      }),
    );
    const schema = jsonSchema(v.object({ home: point }));
    const keys = keysOf(schema);
    for (const key of ['$ref', '$defs', 'prefixItems', 'openapi', 'internal'])
      assert.ok(!keys.has(key), `${key} is gone: ${[...keys].join(', ')}`);
    agrees(v.object({ home: point }), [
      { home: { joints: [0, 0] } },
      { home: { x: 1 } },
      { home: { joints: [0] } },
      {},
    ]);
  });

  it('keeps descriptions, titles and examples, drops $schema', () => {
    const schema = jsonSchema(
      v.pipe(v.object({ a: v.pipe(v.string(), v.examples(['x'])) }), v.title('T'), v.description('D')),
    );
    assert.equal(schema.title, 'T');
    assert.equal(schema.description, 'D');
    assert.deepEqual(schema.properties?.a, { type: 'string', examples: ['x'] });
    assert.ok(!('$schema' in schema), 'no $schema');
  });
});
