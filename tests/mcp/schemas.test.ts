import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { mcpClient, mcpTransport } from '../support/mcp.ts';
import { Ajv, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { createTestApp, type TestApp } from '../support/server.ts';
import { operations } from '../../handlers/index.ts';

/** A JSON Schema (or any JSON value met while walking one). */
type Node = Record<string, unknown>;
interface ListedTool {
  name: string;
  inputSchema: Node;
  outputSchema?: Node;
}

const DRAFTS = {
  'draft-07': () => new Ajv({ strict: true }),
  '2020-12': () => new Ajv2020({ strict: true }),
} as const;

/** What compiling a schema in a draft gave: its validator, or what the compile threw. */
const compiled = new Map<string, { validate: ValidateFunction } | { error: unknown }>();

/**
 * One Ajv a draft, with the standard formats. Strict Ajv checks every schema against its draft's meta-schema, which it
 * compiles once an instance (~20 ms, the 2020-12 one above all): an instance a schema spent most of this file's CPU
 * there. Each schema is removed from it once compiled (its `$id` too), so that every compile starts from the same
 * instance, as in one of its own.
 */
const ajvs = new Map<keyof typeof DRAFTS, Ajv | Ajv2020>();
function ajvOf(draft: keyof typeof DRAFTS): Ajv | Ajv2020 {
  let ajv = ajvs.get(draft);
  if (ajv === undefined) {
    ajv = DRAFTS[draft]();
    addFormats.default(ajv);
    ajvs.set(draft, ajv);
  }
  return ajv;
}

/**
 * Compiles under Ajv strict mode (unknown keywords, formats, types and tuples all refused) with the standard formats
 * (ajvOf). The same schema in the same draft is compiled once and its outcome kept (the suite asks for ~100 schemas
 * ~420 times; Ajv's code generation was ~6 s of CPU): a validator keeps no state between calls but its last `errors`.
 */
function compile(draft: keyof typeof DRAFTS, schema: object): ValidateFunction {
  const key = `${draft}\n${JSON.stringify(schema)}`;
  let outcome = compiled.get(key);
  if (outcome === undefined) {
    const ajv = ajvOf(draft);
    try {
      outcome = { validate: ajv.compile(schema) };
    } catch (error) {
      outcome = { error };
    } finally {
      ajv.removeSchema(schema);
    }
    compiled.set(key, outcome);
  }
  if ('error' in outcome) throw outcome.error;
  return outcome.validate;
}

const isNode = (x: unknown): x is Node => typeof x === 'object' && x !== null && !Array.isArray(x);

/** Every subschema of a schema, itself included, with its path. */
function* subschemas(node: unknown, path = ''): Generator<[string, Node]> {
  if (!isNode(node)) return;
  yield [path, node];
  for (const key of ['items', 'additionalProperties', 'not', 'contains', 'propertyNames'])
    yield* subschemas(node[key], `${path}/${key}`);
  for (const key of ['anyOf', 'oneOf', 'allOf', 'prefixItems']) {
    const list = node[key];
    if (Array.isArray(list)) for (const [i, sub] of list.entries()) yield* subschemas(sub, `${path}/${key}/${i}`);
  }
  const properties = node.properties;
  if (isNode(properties))
    for (const [name, sub] of Object.entries(properties)) yield* subschemas(sub, `${path}/properties/${name}`);
}

const J = [0.5, 0.3, 0, -1.2, 0, 1.2, 0.3];
/** Per tool: arguments its input schema accepts, and arguments it rejects (with why). */
const CALLS: Record<string, { good: Node; bad: [string, Node][] }> = {
  get_joint_states: { good: {}, bad: [['an unknown argument', { joint: 1 }]] },
  get_tcp_pose: { good: {}, bad: [['an unknown argument', { frame: 'tool0' }]] },
  list_named_positions: { good: {}, bad: [['an unknown argument', { group: 'iiwa_arm' }]] },
  get_sequence_status: { good: {}, bad: [['an unknown argument', { pid: 1 }]] },
  stop: { good: {}, bad: [['an unknown argument', { now: true }]] },
  pause: { good: {}, bad: [['an unknown argument', { now: true }]] },
  resume: { good: {}, bad: [['an unknown argument', { now: true }]] },
  get_override: { good: {}, bad: [['an unknown argument', { percent: 5 }]] },
  jog: {
    good: { joint: 2, delta: 0.05 },
    bad: [
      ['an unknown argument', { joint: 2, delta: 0.05, speed: 1 }],
      ['no delta', { joint: 2 }],
      ['joint 8', { joint: 8, delta: 0.05 }],
      ['a step above 0.2', { joint: 2, delta: 0.3 }],
      ['an unknown axis', { axis: 'w', delta: 0.01 }],
    ],
  },
  set_override: {
    good: { percent: 100 },
    bad: [
      ['percent above 100', { percent: 101 }],
      ['percent 0', { percent: 0 }],
      ['a fraction', { percent: 50.5 }],
      ['no percent', {}],
    ],
  },
  save_position: {
    good: { name: 'taught_1', joints: Object.fromEntries(J.map((q, i) => [`joint${i + 1}`, q])) },
    bad: [
      ['no name', {}],
      ['a name with a space', { name: 'a b' }],
      ['a name starting with a digit', { name: '1st' }],
      ['joints as an array', { name: 'p', joints: J }],
      ['joint7 missing', { name: 'p', joints: { joint1: 0, joint2: 0, joint3: 0, joint4: 0, joint5: 0, joint6: 0 } }],
      [
        'joint2 = 2.5 rad, beyond its limit',
        { name: 'p', joints: { joint1: 0, joint2: 2.5, joint3: 0, joint4: 0, joint5: 0, joint6: 0, joint7: 0 } },
      ],
      [
        'an unknown joint',
        {
          name: 'p',
          joints: { joint1: 0, joint2: 0, joint3: 0, joint4: 0, joint5: 0, joint6: 0, joint7: 0, joint8: 0 },
        },
      ],
    ],
  },
  delete_position: {
    good: { name: 'taught_1' },
    bad: [
      ['no name', {}],
      ['a name of 65 characters', { name: 'x'.repeat(65) }],
    ],
  },
  move_to_named_position: {
    good: { name: 'home', speed: 0.2 },
    bad: [
      ['speed above 1', { name: 'home', speed: 2 }],
      ['no name', { speed: 0.2 }],
    ],
  },
  move_to_pose: {
    good: { x: 0.5, y: 0.1, z: 0.5, a: 0, b: Math.PI, c: 0, planner: 'lin', speed: 0.2 },
    bad: [
      ['an unknown planner', { x: 0.5, y: 0, z: 0.5, planner: 'spline' }],
      ['no z', { x: 0.5, y: 0 }],
    ],
  },
  move_to_joints: {
    good: { joints: J, speed: 0.3 },
    bad: [
      ['6 joints', { joints: J.slice(0, 6) }],
      ['8 joints', { joints: [...J, 0] }],
      ['joint7 = 3.5 rad, beyond every limit', { joints: [0, 0, 0, 0, 0, 0, 3.5] }],
      // A number as decimal text ('0') is taken on every face (docs/api.md, numbers sent as strings); a word is not.
      ['a joint as a word', { joints: ['zero', 0, 0, 0, 0, 0, 0] }],
    ],
  },
  solve_ik: {
    good: { x: 0.5, y: 0.1, z: 0.5, b: Math.PI, seed: J, collision_check: false },
    bad: [
      ['no x', { y: 0, z: 0.5 }],
      ['a seed of 6 joints', { x: 0.5, y: 0, z: 0.5, seed: J.slice(0, 6) }],
      ['collision_check as text', { x: 0.5, y: 0, z: 0.5, collision_check: 'yes' }],
    ],
  },
  execute_plan: {
    good: { id: 'Zq3Xk0b1Jm2AcVd8sEw9Tg' },
    bad: [
      ['no id', {}],
      ['an id with a slash', { id: 'a/b' }],
    ],
  },
  send_trajectory: {
    good: { points: [{ positions: [0, 0, 0, -1.57, 0, 1.57, 0.5], time_from_start: 1 }], validate_limits: true },
    bad: [
      ['a point of 8 positions', { points: [{ positions: [0, 0, 0, -1.57, 0, 1.57, 0.5, 0], time_from_start: 1 }] }],
      ['no points', { points: [] }],
    ],
  },
  start_sequence: {
    good: {
      config: {
        home: { joints: [0, 0, 0, -1.57, 0, 1.57, 0], speed: 0.3 },
        waypoints: [
          { joints: [0.5, 0.2, 0, -1.2, 0, 1.4, 0], speed: 0.3 },
          { x: 0.5, y: 0.1, z: 0.5, a: 0, b: Math.PI, c: 0, planner: 'lin', speed: 0.2 },
        ],
      },
      n_iterations: 2,
      delay_between_iterations: 1,
    },
    bad: [
      ['a non-integer n_iterations', { config: { home: { joints: J }, waypoints: [] }, n_iterations: 2.5 }],
      ['a home of 6 joints', { config: { home: { joints: J.slice(0, 6) }, waypoints: [] } }],
      ['a waypoint with a pose and joints', { config: { home: { joints: J }, waypoints: [{ joints: J, x: 0.5 }] } }],
    ],
  },
  get_sequence_logs: {
    good: { n: 100 },
    bad: [
      ['a non-integer n', { n: 2.5 }],
      ['n 0', { n: 0 }],
    ],
  },
  get_trajectory_logs: {
    good: { n: 300 },
    bad: [
      ['n above 300', { n: 301 }],
      ['a negative n', { n: -1 }],
    ],
  },
};
/** The catalog's operations served as tools, by name. */
const TOOL_OPS = new Map(operations.filter((op) => op.mcp).map((op) => [op.name, op]));
/** Tools without input (their schema takes no argument). */
const ARGUMENT_FREE = [...TOOL_OPS.values()].filter((op) => !op.input).map((op) => op.name);

/**
 * A tool's known-good call and known-bad ones: its entry in CALLS, or, for a tool the table does not name (a new
 * handler file), derived from its operation: no input takes `{}`, an input takes its REST binding's example; an unknown
 * argument is refused by either.
 */
function callsOf(name: string): { good: Node; bad: [string, Node][] } {
  const given = CALLS[name];
  if (given) return given;
  const op = TOOL_OPS.get(name);
  assert.ok(op, `${name} is an operation of the catalog`);
  if (!op.input) return { good: {}, bad: [['an unknown argument', { unexpected: true }]] };
  const example = op.rest.example;
  assert.ok(example, `${name}: its REST binding's example is its known-good call (or give it an entry in CALLS)`);
  return { good: { ...example }, bad: [['an unknown argument', { ...example, unexpected: true }]] };
}

/** Tools whose known-good call does not move the arm (the reads, and pause): called for real too. */
const HARMLESS = [...[...TOOL_OPS.values()].filter((op) => op.effect === 'read').map((op) => op.name), 'pause'];

/** Keywords OpenAI's strict function calling (Structured Outputs) documents. */
const OPENAI_STRICT = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'enum',
  'const',
  'anyOf',
  '$ref',
  '$defs',
  'description',
  'title',
  'pattern',
  'format',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minItems',
  'maxItems',
]);
/** Fields of Gemini's `parameters` Schema (a subset of the OpenAPI 3.0 Schema object). */
const GEMINI_PARAMETERS = new Set([
  'type',
  'format',
  'title',
  'description',
  'nullable',
  'enum',
  'maxItems',
  'minItems',
  'properties',
  'required',
  'minProperties',
  'maxProperties',
  'minLength',
  'maxLength',
  'pattern',
  'example',
  'anyOf',
  'propertyOrdering',
  'default',
  'items',
  'minimum',
  'maximum',
]);
/** Keywords Gemini documents for `parametersJsonSchema` (JSON Schema); others are not enforced when generating. */
const GEMINI_JSON_SCHEMA = new Set([
  'type',
  'title',
  'description',
  'enum',
  'format',
  'minimum',
  'maximum',
  'minItems',
  'maxItems',
  'items',
  'prefixItems',
  'properties',
  'required',
  'propertyOrdering',
  'additionalProperties',
  'anyOf',
  '$ref',
  '$defs',
]);

/** Why a tool's input schema is not accepted as it is by a target (empty when it is). */
function misfits(schema: Node, target: 'openai-strict' | 'gemini-parameters' | 'gemini-json-schema'): string[] {
  const reasons = new Set<string>();
  if (schema.type !== 'object' || 'anyOf' in schema) reasons.add('root is not a plain object');
  const allowed = {
    'openai-strict': OPENAI_STRICT,
    'gemini-parameters': GEMINI_PARAMETERS,
    'gemini-json-schema': GEMINI_JSON_SCHEMA,
  }[target];
  for (const [path, node] of subschemas(schema)) {
    for (const key of Object.keys(node)) if (!allowed.has(key)) reasons.add(`keyword ${key}`);
    if (node.type !== 'object') continue;
    const names = Object.keys(isNode(node.properties) ? node.properties : {});
    if (target === 'openai-strict') {
      if (node.additionalProperties !== false) reasons.add(`${path}: additionalProperties is not false`);
      const required = new Set((node.required as string[] | undefined) ?? []);
      const optional = names.filter((n) => !required.has(n));
      if (optional.length) reasons.add(`${path || 'root'}: optional ${optional.join(', ')}`);
    }
    if (target === 'gemini-parameters' && names.length === 0)
      reasons.add('an object with no properties (omit parameters instead)');
  }
  return [...reasons];
}

describe('tool and OpenAPI schemas under strict JSON Schema validators, and the function-calling report', () => {
  let server: TestApp;
  let client: Client;
  let tools: ListedTool[] = [];
  before(async () => {
    server = await createTestApp({ sim: { time_scale: 20 } });
    client = mcpClient('armgate-schemas-test');
    await client.connect(mcpTransport(server));
    tools = (await client.listTools()).tools as ListedTool[];
  });
  after(async () => {
    await client.close();
    await server.close();
  });

  it('compiles every input and output schema under Ajv strict in draft-07 and 2020-12', () => {
    assert.deepEqual(
      tools.map((t) => t.name).sort(),
      [...TOOL_OPS.keys()].sort(),
      `tools: ${tools.map((t) => t.name).join(', ')}`,
    );
    for (const name of Object.keys(CALLS)) assert.ok(TOOL_OPS.has(name), `the table's ${name} is a tool`);
    for (const tool of tools)
      for (const [kind, schema] of [
        ['input', tool.inputSchema],
        ['output', tool.outputSchema],
      ] as const) {
        assert.ok(schema, `${tool.name} has an ${kind} schema`);
        for (const draft of Object.keys(DRAFTS) as (keyof typeof DRAFTS)[])
          assert.doesNotThrow(() => compile(draft, schema), `${tool.name} ${kind} schema compiles in ${draft}`);
      }
  });

  it('accepts a known-good call and rejects known-bad ones per tool, in both drafts', () => {
    for (const tool of tools) {
      const calls = callsOf(tool.name);
      for (const draft of Object.keys(DRAFTS) as (keyof typeof DRAFTS)[]) {
        const validate = compile(draft, tool.inputSchema);
        assert.ok(
          validate(calls.good),
          `${draft} ${tool.name} accepts ${JSON.stringify(calls.good)}: ${JSON.stringify(validate.errors)}`,
        );
        for (const [why, args] of calls.bad) assert.ok(!validate(args), `${draft} ${tool.name} rejects ${why}`);
      }
    }
  });

  it('keeps per-joint bounds: the widest in items, each joint in the description, exactly 7', () => {
    const joints = tools.find((t) => t.name === 'move_to_joints')?.inputSchema.properties as Node | undefined;
    const schema = joints?.joints as Node | undefined;
    assert.ok(schema, 'move_to_joints has joints');
    assert.deepEqual([schema.type, schema.minItems, schema.maxItems], ['array', 7, 7]);
    assert.deepEqual(schema.items, { type: 'number', minimum: -3.05, maximum: 3.05 });
    for (const bound of [
      'joint1 (J1) in radians, -2.97 to 2.97',
      'joint2 (J2) in radians, -2.1 to 2.1',
      'joint7 (J7) in radians, -3.05 to 3.05',
    ])
      assert.ok(String(schema.description).includes(bound), `description names ${bound}`);
  });

  it('gives every default a value its own schema accepts, and integers as integer', () => {
    for (const tool of tools)
      for (const [path, node] of subschemas(tool.inputSchema)) {
        if (!('default' in node)) continue;
        const { default: value, ...rest } = node;
        assert.ok(
          compile('2020-12', rest)(value),
          `${tool.name} ${path}: default ${JSON.stringify(value)} fits its schema`,
        );
      }
    const integers = (name: string, field: string) =>
      ((tools.find((t) => t.name === name)?.inputSchema.properties as Node | undefined)?.[field] as Node | undefined)
        ?.type;
    assert.equal(integers('get_sequence_logs', 'n'), 'integer');
    assert.equal(integers('get_trajectory_logs', 'n'), 'integer');
    assert.equal(integers('start_sequence', 'n_iterations'), 'integer');
  });

  it('refuses each known-bad call through the tool too (the server validates as the schema says)', async () => {
    for (const tool of tools) {
      for (const [why, args] of callsOf(tool.name).bad) {
        // No arguments: refused by the schema (the server refuses an extra one too, but stop and pause act anyway:
        // tests/mcp/tools.test.ts).
        if (ARGUMENT_FREE.includes(tool.name)) continue;
        const result = await client.callTool({ name: tool.name, arguments: args }).then(
          (r) => ({ rejected: r.isError === true, text: JSON.stringify(r.content) }),
          (error: unknown) => ({ rejected: true, text: String(error) }),
        );
        assert.ok(result.rejected, `${tool.name} refuses ${why}: ${result.text}`);
        assert.ok(
          !/busy|holds the arm/i.test(result.text),
          `${tool.name} refuses ${why} as invalid, not busy: ${result.text}`,
        );
      }
    }
  });

  it('answers the known-good call of every tool that does not move the arm, with results fitting the output schema', async () => {
    for (const name of HARMLESS) {
      const tool = tools.find((t) => t.name === name);
      assert.ok(tool?.outputSchema, `${name} listed with an output schema`);
      const result = await client.callTool({ name, arguments: callsOf(name).good });
      assert.ok(result.isError !== true, `${name} succeeds: ${JSON.stringify(result.content)}`);
      for (const draft of Object.keys(DRAFTS) as (keyof typeof DRAFTS)[]) {
        const validate = compile(draft, tool.outputSchema);
        assert.ok(
          validate(result.structuredContent),
          `${draft} ${name} result fits: ${JSON.stringify(validate.errors)}`,
        );
      }
    }
  });

  it('answers a real call of every tool, motions included, with structured content fitting its declared output schema', async () => {
    const covered = new Set<string>();
    /** Calls a tool for real and checks its structured content against the output schema it lists, in both drafts. */
    const call = async (name: string, args: Node): Promise<Node> => {
      const tool = tools.find((t) => t.name === name);
      assert.ok(tool?.outputSchema, `${name} listed with an output schema`);
      const result = await client.callTool({ name, arguments: args });
      assert.ok(result.isError !== true, `${name} succeeds: ${JSON.stringify(result.content)}`);
      assert.ok(isNode(result.structuredContent), `${name} answers structured content`);
      for (const draft of Object.keys(DRAFTS) as (keyof typeof DRAFTS)[]) {
        const validate = compile(draft, tool.outputSchema);
        assert.ok(
          validate(result.structuredContent),
          `${draft} ${name} result fits: ${JSON.stringify(validate.errors)}`,
        );
      }
      covered.add(name);
      return result.structuredContent;
    };
    const good = (name: string): Node => callsOf(name).good;
    for (const name of HARMLESS) await call(name, good(name));
    await call('send_trajectory', { ...good('send_trajectory'), wait: true });
    await call('solve_ik', good('solve_ik'));
    const dry = await call('move_to_joints', { ...good('move_to_joints'), dry_run: true });
    const plan = dry.plan as { id?: unknown } | undefined;
    assert.equal(typeof plan?.id, 'string', 'a dry run answers a plan');
    await call('execute_plan', { id: plan?.id as string });
    await call('move_to_named_position', good('move_to_named_position'));
    // Teach where the arm stands (home, at rest), move to it by name, then delete it.
    await call('save_position', { name: 'taught_here' });
    await call('save_position', good('save_position'));
    await call('move_to_named_position', { name: 'taught_1', speed: 1 });
    await call('delete_position', good('delete_position'));
    await call('move_to_pose', good('move_to_pose'));
    await call('move_to_joints', good('move_to_joints'));
    await call('start_sequence', good('start_sequence'));
    await call('stop', good('stop'));
    assert.equal((await call('jog', good('jog'))).success, true, 'the step was made');
    // A slow move paused and resumed: pause answers at rest on the path, resume while it is paused.
    const slow = client.callTool({ name: 'move_to_joints', arguments: { joints: [-0.3, ...J.slice(1)], speed: 0.1 } });
    const moving = async () => {
      for (let i = 0; i < 500; i++) {
        const s = (await client.callTool({ name: 'get_joint_states', arguments: {} })).structuredContent as Node;
        if ((s.velocity as number[]).some((v) => v !== 0)) return;
        await new Promise((r) => setTimeout(r, 20));
      }
      assert.fail('the slow move never started');
    };
    await moving();
    assert.equal((await call('pause', {})).paused, true, 'the move paused');
    await call('resume', {});
    await call('set_override', good('set_override'));
    assert.equal(((await slow).structuredContent as Node).success, true, 'the resumed move ends at its goal');
    assert.deepEqual([...covered].sort(), tools.map((t) => t.name).sort(), 'every tool is called');
  });

  it('compiles every schema in /openapi.json (parameters, request and response bodies, components) under 2020-12 strict', async () => {
    const doc = (await (await server.request(`/openapi.json`)).json()) as {
      openapi: string;
      paths: Record<string, Record<string, Node>>;
      components?: { schemas?: Record<string, Node> };
    };
    assert.match(doc.openapi, /^3\.1\./);
    const found: [string, Node][] = Object.entries(doc.components?.schemas ?? {}).map(([k, s]) => [
      `components/${k}`,
      s,
    ]);
    for (const [path, item] of Object.entries(doc.paths))
      for (const [method, op] of Object.entries(item)) {
        const where = `${method.toUpperCase()} ${path}`;
        for (const p of (op.parameters as Node[] | undefined) ?? [])
          found.push([`${where} ?${p.name}`, p.schema as Node]);
        const body = (op.requestBody as Node | undefined)?.content as Record<string, Node> | undefined;
        for (const [type, media] of Object.entries(body ?? {}))
          found.push([`${where} body ${type}`, media.schema as Node]);
        for (const [status, response] of Object.entries((op.responses as Record<string, Node>) ?? {}))
          for (const [type, media] of Object.entries((response.content as Record<string, Node>) ?? {}))
            found.push([`${where} ${status} ${type}`, media.schema as Node]);
      }
    assert.ok(found.length > 40, `${found.length} schemas found`);
    const uploads: string[] = [];
    for (const [where, schema] of found) {
      assert.ok(isNode(schema), `${where} has a schema`);
      assert.doesNotThrow(() => compile('2020-12', schema), `${where} compiles in 2020-12 strict`);
      for (const [path, node] of subschemas(schema)) {
        assert.ok(!('openapi' in node) && !('$ref' in node), `${where} ${path}: no metadata leak, no $ref`);
        if (node.format === 'binary') uploads.push(`${where} ${path}`);
      }
    }
    assert.deepEqual(
      uploads.sort(),
      [
        'POST /sequences/start body multipart/form-data /properties/config',
        'POST /trajectory/send_csv body multipart/form-data /properties/file',
      ],
      'the uploads are binary strings (a file picker in Swagger UI)',
    );
  });

  it('reports: OpenAI strict takes the argument-free tools, execute_plan and set_override; Gemini takes every tool as parametersJsonSchema, none as parameters', (t) => {
    const rows = tools.map((tool) => ({
      tool: tool.name,
      openaiStrict: misfits(tool.inputSchema, 'openai-strict'),
      geminiParameters: misfits(tool.inputSchema, 'gemini-parameters'),
      geminiJsonSchema: misfits(tool.inputSchema, 'gemini-json-schema'),
    }));
    const cell = (reasons: string[]) => (reasons.length ? `no: ${reasons.join('; ')}` : 'yes');
    for (const r of rows) {
      t.diagnostic(`${r.tool}: OpenAI strict ${cell(r.openaiStrict)}`);
      t.diagnostic(`${r.tool}: Gemini parameters ${cell(r.geminiParameters)}`);
      t.diagnostic(
        `${r.tool}: Gemini parametersJsonSchema yes${r.geminiJsonSchema.length ? ` (not enforced: ${r.geminiJsonSchema.join(', ')})` : ''}`,
      );
    }
    const fitting = (key: 'openaiStrict' | 'geminiParameters') =>
      rows
        .filter((r) => r[key].length === 0)
        .map((r) => r.tool)
        .sort();
    assert.deepEqual(fitting('openaiStrict'), [...ARGUMENT_FREE, 'execute_plan', 'set_override'].sort());
    assert.deepEqual(
      fitting('geminiParameters'),
      [],
      'additionalProperties is no field of the Gemini parameters Schema',
    );
    for (const row of rows) {
      assert.ok(!row.geminiJsonSchema.includes('root is not a plain object'), `${row.tool}: an object root for Gemini`);
      assert.ok(!row.openaiStrict.includes('root is not a plain object'), `${row.tool}: an object root for OpenAI`);
      assert.ok(
        !row.openaiStrict.some((r) => r.includes('additionalProperties')),
        `${row.tool}: every object is closed`,
      );
    }
  });
});
