import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { mcpTransport } from '../support/mcp.ts';
import type { TestApp } from '../support/server.ts';
import type { InMemory, Target } from '../support/live.ts';
import type { SteppedClock } from '../../lib/clock.ts';
import { createSteppedApp, steppedTarget, steppedUntilSettled, waitOnClock } from '../support/stepped.ts';
import { operations } from '../../handlers/index.ts';

const TOKEN = 'mcp-token-31a';
/** The tools the spec names (each must be served). */
const SPEC_TOOLS = [
  'get_joint_states',
  'get_tcp_pose',
  'list_named_positions',
  'save_position',
  'delete_position',
  'move_to_named_position',
  'move_to_pose',
  'move_to_joints',
  'jog',
  'solve_ik',
  'execute_plan',
  'send_trajectory',
  'start_sequence',
  'get_sequence_status',
  'get_sequence_logs',
  'get_trajectory_logs',
  'stop',
  'pause',
  'resume',
  'get_override',
  'set_override',
];
/** The tools served: one per operation of the catalog with an MCP binding (a new handler file adds its own). */
const TOOLS = operations.filter((op) => op.mcp).map((op) => op.name);

interface ToolResult {
  isError?: boolean;
  content: { type: string; text?: string }[];
  structuredContent?: Record<string, unknown>;
}

async function connect(url: Target, token?: string): Promise<Client> {
  const client = new Client({ name: 'armgate-test', version: '1' });
  await client.connect(
    mcpTransport(url, token ? { requestInit: { headers: { authorization: `Bearer ${token}` } } } : {}),
  );
  return client;
}

const text = (r: ToolResult) => r.content.map((c) => c.text ?? '').join(' ');

/** The app in memory on a clock the test steps (tests/support/stepped.ts): each MCP request steps it until answered. */
describe('MCP interface at /mcp/mcp', () => {
  let server: TestApp;
  let clock: SteppedClock;
  let app: InMemory;
  let client: Client;
  const call = async (name: string, args: Record<string, unknown> = {}) =>
    (await client.callTool({ name, arguments: args })) as ToolResult;
  before(async () => {
    ({ app: server, clock } = await createSteppedApp({ web: { token: TOKEN }, sim: { time_scale: 20 } }));
    app = steppedTarget(server, clock);
    client = await connect(app, TOKEN);
  });
  after(async () => {
    await client.close();
    await server.close();
  });

  it('lists a tool per capability with descriptions, input schemas carrying the joint bounds, and output schemas', async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), [...TOOLS].sort());
    for (const name of SPEC_TOOLS) assert.ok(TOOLS.includes(name), `the spec's ${name} is served`);
    for (const tool of tools) {
      assert.ok((tool.description ?? '').length > 60, tool.name);
      assert.equal(tool.inputSchema.type, 'object');
      assert.ok(tool.outputSchema, `${tool.name} has an output schema`);
    }
    const joints = tools.find((t) => t.name === 'move_to_joints')?.inputSchema.properties?.joints as {
      items: { minimum: number; maximum: number };
      minItems: number;
      maxItems: number;
      description: string;
    };
    assert.deepEqual(
      [joints.items.minimum, joints.items.maximum, joints.minItems, joints.maxItems],
      [-3.05, 3.05, 7, 7],
    );
    assert.match(joints.description, /joint2 \(J2\) in radians, -2\.1 to 2\.1/);
  });

  it('reads state with the same content as the REST twins', async () => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    const states = await call('get_joint_states');
    assert.equal(states.isError, undefined);
    const rest = (await (await server.request(`/robot/joint_states`, { headers: auth })).json()) as Record<
      string,
      unknown
    >;
    assert.deepEqual(Object.keys(states.structuredContent ?? {}), Object.keys(rest));
    assert.deepEqual(states.structuredContent?.position, rest.position);
    const positions = await call('list_named_positions');
    assert.deepEqual(
      positions.structuredContent?.positions,
      await (await server.request(`/robot/positions`, { headers: auth })).json(),
    );
    const pose = await call('get_tcp_pose');
    assert.ok(((pose.structuredContent?.position as { z: number } | undefined)?.z ?? 0) > 0.5);
  });

  it('moves the simulated arm for real and reports the result', async () => {
    const home = await call('move_to_named_position', { name: 'home', speed: 1 });
    assert.deepEqual(home.structuredContent, { success: true, message: 'motion finished at the goal' });
    assert.match(text(home), /succeeded/);
    const after = await call('get_joint_states');
    for (const q of (after.structuredContent?.position as number[] | undefined) ?? [NaN]) assert.ok(Math.abs(q) < 1e-3);
    const joints = await call('move_to_joints', { joints: [0, 0, 0, -1.57, 0, 1.57, 0], speed: 1 });
    assert.equal(joints.structuredContent?.success, true);
    const lin = await call('move_to_pose', {
      x: 0.45,
      y: 0.05,
      z: 0.6,
      a: 0,
      b: Math.PI,
      c: 0,
      planner: 'lin',
      speed: 0.5,
    });
    assert.equal(lin.structuredContent?.success, true, text(lin));
  });

  it('publishes a trajectory and shows it in the trajectory log', async () => {
    const sent = await call('send_trajectory', {
      points: [{ positions: [0, 0, 0, -1.57, 0, 1.57, 0.2], time_from_start: 1 }],
    });
    assert.equal(sent.structuredContent?.status, 'sent');
    const logs = await call('get_trajectory_logs', { n: 5 });
    assert.ok(
      ((logs.structuredContent?.lines as string[] | undefined) ?? []).some((l) => /publishing 1 points/.test(l)),
    );
    // Its 1 s (50 ms at time_scale 20) run out on the clock before the next test.
    await clock.advance(200);
  });

  it('runs a sequence given inline and follows it to finished', async () => {
    const started = await call('start_sequence', {
      config: {
        home: { joints: [0, 0, 0, -1.57, 0, 1.57, 0], speed: 1 },
        waypoints: [{ joints: [0.2, 0, 0, -1.57, 0, 1.57, 0], speed: 1 }],
      },
      n_iterations: 1,
      delay_between_iterations: 0,
    });
    assert.equal(started.structuredContent?.status, 'started', text(started));
    // The runner is a process of its own: polled in the machine's time while the clock steps its motions.
    const status = await waitOnClock(
      clock,
      'the sequence to finish',
      () => call('get_sequence_status'),
      (s) => s.structuredContent?.status === 'finished',
      10_000,
      10,
      10_000,
    );
    assert.equal(status.structuredContent?.returncode, 0);
    const logs = await call('get_sequence_logs', { n: 100 });
    assert.ok(((logs.structuredContent?.lines as string[] | undefined) ?? []).some((l) => /sequence finished/.test(l)));
  });

  it('gives tool errors, not protocol errors, for invalid calls, naming the field', async () => {
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ['move_to_joints', { joints: [0, 0, 0, 0, 0, 0] }, /joints: expected exactly 7/],
      ['move_to_joints', { joints: [0, 0, 0, 0, 0, 0, 0], speed: 5 }, /speed/],
      ['move_to_named_position', { name: 'nowhere' }, /known: home, work, transport/],
      ['start_sequence', { config: { home: { joints: [0] }, waypoints: [] } }, /config\.home\.joints/],
      [
        'move_to_joints',
        { joints: [0, 0, 0, 0, 0, 0, 0], sped: 1 },
        /sped: unknown key "sped" \(did you mean "speed"\?\); the keys are joints, speed/,
      ],
      [
        'start_sequence',
        { config: { home: { joints: [0, 0, 0, 0, 0, 0, 0] }, waypoints: [], homee: 1 } },
        /config\.homee: unknown key "homee" \(did you mean "home"\?\); the keys are /,
      ],
    ];
    for (const [name, args, pattern] of cases) {
      const r = await call(name, args);
      assert.equal(r.isError, true, name);
      assert.match(text(r), pattern);
    }
    // An unknown tool is a protocol error (JSON-RPC invalid params), as the MCP specification says.
    await assert.rejects(call('no_such_tool'), (e: { code?: number; message?: string }) => {
      assert.equal(e.code, -32602);
      assert.match(e.message ?? '', /unknown tool 'no_such_tool'; tools: get_joint_states/);
      return true;
    });
  });

  it('refuses an argument a tool without input does not take, as REST refuses the query; stop and pause act anyway', async () => {
    for (const [name, args] of [
      ['get_joint_states', { x: 1 }],
      ['resume', { speed: 2 }],
    ] as const) {
      const r = await call(name, args);
      assert.equal(r.isError, true, `${name} ${JSON.stringify(args)}`);
      assert.match(text(r), new RegExp(`unknown argument '${Object.keys(args)[0]}'; the ${name} tool takes none`));
    }
    for (const name of ['stop', 'pause']) {
      const r = await call(name, { reason: 'whatever' });
      assert.notEqual(r.isError, true, `${name} with an argument: ${text(r)}`);
    }
    const states = await call('get_joint_states', {});
    assert.notEqual(states.isError, true, 'no arguments: served');
  });

  it('gives a tool error that says what to do when the arm is busy', async () => {
    const slow = server.request(`/robot/move/named`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'transport', speed: 0.05 }),
    });
    // The slow move holds the arm (its plan is computed in the machine's time, the clock standing still).
    for (let i = 0; i < 500 && server.services.arbiter.activity() === undefined; i++)
      await new Promise((resolve) => setTimeout(resolve, 2));
    assert.ok(server.services.arbiter.activity() !== undefined, 'the slow move holds the arm');
    const busy = await call('move_to_joints', { joints: [0, 0, 0, -1.57, 0, 1.57, 0] });
    assert.equal(busy.isError, true);
    assert.match(text(busy), /busy.*stop/i);
    const stopped = await call('stop');
    assert.deepEqual(Object.keys(stopped.structuredContent ?? {}).sort(), [
      'hold_published',
      'message',
      'planner_stopped',
      'sequence_stopped',
      'status',
      'success',
    ]);
    await (await steppedUntilSettled(clock, slow, 'the stopped move')).json();
  });

  it('serves the four resources as JSON', async () => {
    const { resources } = await client.listResources();
    assert.equal(resources.length, 4);
    for (const r of resources) {
      const read = await client.readResource({ uri: r.uri });
      const first = read.contents[0] as { text?: string } | undefined;
      assert.ok(first?.text && JSON.parse(first.text), r.uri);
    }
    await assert.rejects(client.readResource({ uri: 'armgate://robot/nothing' }), (e: { code?: number }) => {
      assert.equal(e.code, -32002, 'an unknown resource is -32002 (resource not found)');
      return true;
    });
    const limits = await client.readResource({ uri: 'armgate://robot/joint_limits' });
    const body = JSON.parse((limits.contents[0] as { text: string }).text) as { joints: { max_rad: number }[] };
    assert.equal(body.joints[3]?.max_rad, 2.1);
  });

  it('refuses clients without the token with 401', async () => {
    await assert.rejects(connect(server));
    const raw = await server.request(`/mcp/mcp`, { method: 'POST', body: '{}' });
    assert.equal(raw.status, 401);
    assert.equal(raw.headers.get('www-authenticate'), 'Bearer');
    await raw.body?.cancel();
  });

  it('serves many concurrent clients', async () => {
    const clients = await Promise.all(Array.from({ length: 10 }, () => connect(app, TOKEN)));
    try {
      const results = await Promise.all(
        clients.flatMap((c) =>
          Array.from(
            { length: 5 },
            () => c.callTool({ name: 'get_joint_states', arguments: {} }) as Promise<ToolResult>,
          ),
        ),
      );
      assert.ok(results.every((r) => r.isError === undefined && Array.isArray(r.structuredContent?.position)));
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
  });
});
