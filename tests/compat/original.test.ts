/**
 * armgate as a drop-in for the robot stack's web server (lightweight-cobot's iiwa_web): started from the stack's
 * root settings file and its endpoints file (list format), answering the calls of the stack's documented clients
 * (its rest-api page's curl and Python examples, transcribed as fetch calls) with the fields those clients read, and
 * naming its MCP tools as the stack's server did when asked to. The fixtures under tests/fixtures/stack are written
 * for these tests in the stack's formats.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { parse, stringify } from 'yaml';
import { buildOpenApiDocument } from '../../lib/openapi/document.ts';
import { activeOperations, type RunningServer, startServer } from '../../lib/server/start.ts';
import { catalog } from '../../handlers/index.ts';
import { type Config, loadConfig } from '../../lib/settings/load.ts';
import { PROJECT_ROOT } from '../../lib/settings/resolve.ts';
import { csvForm, sequenceForm } from '../support/multipart.ts';
import { JOINTS } from '../support/arm.ts';

const STACK = path.join(PROJECT_ROOT, 'tests/fixtures/stack');
const ROOT_FILE = path.join(STACK, 'cobot-setting.yaml');
const AMENT = path.join(STACK, 'install');
const ENDPOINTS = path.join(AMENT, 'share/iiwa_config/config/api_endpoints.yaml');

async function load(file: string): Promise<Config> {
  const loaded = await loadConfig(file, { env: { AMENT_PREFIX_PATH: AMENT }, portOverride: 0 });
  if (!loaded.ok) return assert.fail(`the settings load: ${loaded.error}`);
  if (loaded.value.kind !== 'serve') return assert.fail('web is enabled');
  return loaded.value.config;
}

/** A copy of the stack's root file (and, when given, of its endpoints file) with changes, in a temp folder. */
async function variant(
  change: (root: Record<string, unknown>) => void,
  changeEndpoints?: (entries: Record<string, unknown>[]) => void,
): Promise<{ file: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'armgate-stack-'));
  const root = parse(await readFile(ROOT_FILE, 'utf8')) as Record<string, unknown>;
  change(root);
  if (changeEndpoints) {
    const doc = parse(await readFile(ENDPOINTS, 'utf8')) as { endpoints: Record<string, unknown>[] };
    changeEndpoints(doc.endpoints);
    await writeFile(path.join(dir, 'api_endpoints.yaml'), stringify(doc));
    (root.web as Record<string, unknown>).endpoints = 'api_endpoints.yaml';
  }
  const file = path.join(dir, 'cobot-setting.yaml');
  await writeFile(file, stringify(root));
  return { file, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

describe("the robot stack's settings files, as they are", () => {
  it('loads the root settings file with all of the stack blocks and its endpoints file in the list format', async () => {
    const config = await load(ROOT_FILE);
    assert.equal(config.robot.backend, 'sim', 'no armgate block: the simulated arm');
    // planning and controller blocks: group, frame and the SRDF the stack names.
    assert.equal(config.endpoints.planning_group, 'iiwa_arm');
    assert.equal(config.endpoints.planning_frame, 'base_link');
    assert.deepEqual(
      config.groupStates?.map((g) => g.name),
      ['home', 'work', 'transport'],
      "the group states of the stack's SRDF (controller.moveit.srdf)",
    );
    // The stack's limits file: A2, A4, A6 end at 120 degrees.
    assert.deepEqual(config.limits.maxRad, [2.9671, 2.0944, 2.9671, 2.0944, 2.9671, 2.0944, 3.0543]);
    // The endpoints file: names and types, the pose's timeout, the moves' longest timeout.
    assert.equal(config.endpoints.interfaces.stop.name, 'cobot/stop');
    assert.equal(config.endpoints.interfaces.move_to_pose.type, 'iiwa_msgs/action/MoveToPose');
    assert.equal(config.endpoints.timeouts.fk_s, 1.5);
    assert.equal(config.endpoints.timeouts.motion_s, 45);
    assert.ok(
      config.notices.some((n) => /GET \/camera\/snapshot is not a route armgate serves/.test(n)),
      `a route armgate does not serve is named: ${config.notices.join(' | ')}`,
    );
    assert.equal(config.endpoints.tcp_link, 'flange', "the stack's tcp is not in the simulated model");
    assert.ok(
      config.notices.some((n) => /'tcp' is not a link of the simulated model/.test(n)),
      'and the operator is told',
    );
  });

  it('takes the pose link from the planning block on ros2, and still refuses a typo in the web block', async () => {
    const ros2 = await variant((root) => {
      root.armgate = { backend: 'ros2' };
    });
    try {
      const config = await load(ros2.file);
      assert.equal(config.endpoints.tcp_link, 'tcp', 'child_frame of /robot/pose (and planning.pose_link)');
      assert.deepEqual(config.endpoints.srdf, { file: path.join(AMENT, 'share/iiwa_config/config/moveit/iiwa7.srdf') });
    } finally {
      await ros2.cleanup();
    }
    const typo = await variant((root) => {
      (root.web as Record<string, unknown>).trajectory_state_timout = 0.5;
    });
    try {
      const loaded = await loadConfig(typo.file, { env: { AMENT_PREFIX_PATH: AMENT } });
      assert.ok(!loaded.ok && /^web\.trajectory_state_timout: /.test(loaded.error), 'a typo names its key');
    } finally {
      await typo.cleanup();
    }
  });

  it('says how to move each key when the armgate block and the earlier places are mixed', async () => {
    const mixed = await variant((root) => {
      root.armgate = { backend: 'sim' };
      root.sim = { time_scale: 2 };
    });
    try {
      const loaded = await loadConfig(mixed.file, { env: { AMENT_PREFIX_PATH: AMENT } });
      assert.ok(!loaded.ok, 'refused');
      assert.match(loaded.error, /move sim to armgate\.sim/);
    } finally {
      await mixed.cleanup();
    }
  });

  it('removes a route with enabled: false from REST, the OpenAPI document and MCP', async () => {
    const off = await variant(
      () => {},
      (entries) => {
        for (const e of entries) if (e.path === '/robot/move/pose' || e.path === '/robot/stop') e.enabled = false;
      },
    );
    try {
      const config = await load(off.file);
      const active = activeOperations(config, catalog.operations);
      const paths = active.map((op) => op.rest.path);
      assert.ok(!paths.includes('/robot/move/pose') && !paths.includes('/robot/stop'), 'no REST route');
      assert.ok(paths.includes('/robot/move/joints') && paths.includes('/stop'), 'the others stay');
      const doc = buildOpenApiDocument(active, config.limits) as { paths: Record<string, unknown> };
      assert.ok(!('/robot/move/pose' in doc.paths) && !('/robot/stop' in doc.paths), 'not in the OpenAPI document');
      const running = await startServer(config, catalog, { log: () => {} });
      try {
        const res = await fetch(`${running.url}/robot/move/pose`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"x": 0.4, "y": 0, "z": 0.5}',
        });
        assert.equal(res.status, 404, 'POST /robot/move/pose is not served');
        const client = await mcpClient(running.url);
        try {
          const names = (await client.listTools()).tools.map((t) => t.name);
          assert.ok(!names.includes('move_to_pose') && names.includes('move_to_joints'), names.join(', '));
        } finally {
          await client.close();
        }
      } finally {
        await running.close();
      }
    } finally {
      await off.cleanup();
    }
  });
});

async function mcpClient(url: string): Promise<Client> {
  const client = new Client({ name: 'stack-client', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp/mcp`)));
  return client;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

describe("the stack's documented clients against armgate started from the stack's files", () => {
  let running: RunningServer;
  let HOST: string;
  let cleanup: () => Promise<void>;
  const T_READ = 10_000;
  const T_MOVE = 60_000;
  const json = (body: unknown): RequestInit => ({
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(T_MOVE),
  });
  /** Waits until a published trajectory has run out at `target` (the arm at rest there and free again). */
  const settle = async (target: readonly number[]) => {
    for (let i = 0; i < 200; i++) {
      const s = (await (await fetch(`${HOST}/robot/joint_states`)).json()) as {
        position: number[];
        velocity: number[];
      };
      const there = s.position.every((q, j) => Math.abs(q - (target[j] ?? 0)) < 1e-6);
      if (there && s.velocity.every((v) => Math.abs(v) < 1e-9)) return sleep(100);
      await sleep(50);
    }
    assert.fail(`the arm did not come to rest at ${target.join(', ')}`);
  };

  before(async () => {
    const v = await variant((root) => {
      root.armgate = { sim: { time_scale: 10 }, mcp: { tool_names: 'original' } };
    });
    cleanup = v.cleanup;
    running = await startServer(await load(v.file), catalog, { log: () => {} });
    HOST = running.url;
  });
  after(async () => {
    await running.close();
    await cleanup();
  });

  it('GET /robot/joint_states: name and position zip into a dict', async () => {
    const response = await fetch(`${HOST}/robot/joint_states`, { signal: AbortSignal.timeout(T_READ) });
    assert.equal(response.status, 200);
    const state = (await response.json()) as { name: string[]; position: number[] };
    const byName = Object.fromEntries(state.name.map((n, i) => [n, state.position[i]]));
    assert.deepEqual(Object.keys(byName), JOINTS, 'dict(zip(name, position))');
  });

  it("GET /robot/pose: position, euler_deg and the transform's frame", async () => {
    const pose = (await (await fetch(`${HOST}/robot/pose`)).json()) as {
      position: { x: number; y: number; z: number };
      orientation: { euler_deg: { a: number; b: number; c: number } };
      frame: { parent: string; child: string };
    };
    assert.ok(Number.isFinite(pose.position.x) && Number.isFinite(pose.orientation.euler_deg.b), 'MATLAB reads these');
    assert.deepEqual(pose.frame, { parent: 'base_link', child: 'flange' }, 'frame {parent, child}');
  });

  it('GET /robot/positions: name and description, joints by joint name', async () => {
    const list = (await (await fetch(`${HOST}/robot/positions`)).json()) as {
      name: string;
      description: string;
      group: string;
      joints: Record<string, number>;
    }[];
    for (const position of list) assert.ok(position.name && typeof position.description === 'string', position.name);
    const work = list.find((p) => p.name === 'work');
    assert.deepEqual(work?.joints, {
      joint1: 0,
      joint2: 0,
      joint3: 0,
      joint4: -1.57,
      joint5: 0,
      joint6: 1.57,
      joint7: 0,
    });
    assert.equal(work?.group, 'iiwa_arm');
  });

  it('POST /robot/move/named, /robot/move/pose and /robot/move/joints with the documented bodies', async () => {
    const named = await fetch(`${HOST}/robot/move/named`, json({ name: 'home', speed: 0.1, accel_scale: 0.0 }));
    const result = (await named.json()) as { success: boolean; message: string };
    assert.equal(named.status, 200);
    assert.ok(result.success, result.message);
    // biome-ignore lint/suspicious/noApproximativeNumericConstant: the body as the stack's documentation writes it
    const target = { x: 0.4, y: 0.0, z: 0.5, a: 0.0, b: 3.14159, c: 0.0, speed: 0.1, planner: 'ptp', frame_id: '' };
    const pose = await fetch(`${HOST}/robot/move/pose`, json(target));
    assert.equal(pose.status, 200);
    const posed = (await pose.json()) as { success: boolean; message: string };
    assert.ok(posed.success, posed.message);
    const joints = await fetch(
      `${HOST}/robot/move/joints`,
      json({ joints: [0.0, 0.5, 0.0, -1.57, 0.0, 1.57, 0.0], speed: 0.1 }),
    );
    const moved = (await joints.json()) as { success: boolean; message: string };
    assert.ok(joints.status === 200 && moved.success, moved.message);
  });

  it('takes numbers sent as numeric strings, as FastAPI did, and still refuses an unknown key', async () => {
    const res = await fetch(
      `${HOST}/robot/move/joints`,
      json({ joints: ['0', '0.5', '0', '-1.57', '0', '1.57', '0'], speed: '0.5' }),
    );
    const body = (await res.json()) as { success: boolean; message: string };
    assert.ok(res.status === 200 && body.success, JSON.stringify(body));
    const typo = await fetch(`${HOST}/robot/move/joints`, json({ joints: [0, 0.5, 0, -1.57, 0, 1.57, 0], sped: 1 }));
    assert.equal(typo.status, 422, 'a typo is not a default speed');
  });

  it('POST /trajectory/send and /trajectory/send_csv with the documented points; /trajectory/logs', async () => {
    assert.ok(
      (
        (await (await fetch(`${HOST}/robot/move/named`, json({ name: 'home', speed: 1 }))).json()) as {
          success: boolean;
        }
      ).success,
      'home first: the examples start at zeros',
    );
    const trajectory = {
      points: [
        { positions: [0, 0, 0, 0, 0, 0, 0], time_from_start: 0.0 },
        { positions: [0, 0.5, 0, -1.0, 0, 1.0, 0], time_from_start: 3.0 },
        { positions: [0, 0, 0, 0, 0, 0, 0], time_from_start: 6.0 },
      ],
      validate_limits: true,
    };
    const sent = await fetch(`${HOST}/trajectory/send`, json(trajectory));
    const body = (await sent.json()) as Record<string, unknown>;
    assert.equal(sent.status, 200, JSON.stringify(body));
    assert.equal(body.status, 'sent');
    assert.equal(body.points, 3);
    assert.equal(body.duration, 6);
    assert.equal(body.time_scale, 1);
    // It starts and ends at zeros: wait out its 6 s (at time_scale 10) before waiting for rest.
    await sleep(700);
    await settle([0, 0, 0, 0, 0, 0, 0]);
    const csv = 'joint1,joint2,joint3,joint4,joint5,joint6,joint7,t\n0,0,0,0,0,0,0,0.0\n0,0.5,0,-1.0,0,1.0,0,3.0\n';
    const upload = await fetch(`${HOST}/trajectory/send_csv?separator=%2C&validate_limits=true`, {
      method: 'POST',
      body: csvForm(csv, { filename: 'trajectory.csv' }),
    });
    const uploaded = (await upload.json()) as Record<string, unknown>;
    assert.equal(upload.status, 200, JSON.stringify(uploaded));
    assert.equal(uploaded.filename, 'trajectory.csv', 'filename, as the stack answered');
    assert.equal(uploaded.points, 2);
    await settle([0, 0.5, 0, -1.0, 0, 1.0, 0]);
    const logs = (await (await fetch(`${HOST}/trajectory/logs?n=20`)).json()) as {
      lines: string[];
      total_buffered: number;
    };
    assert.ok(logs.lines.length > 0 && logs.lines.length <= 20, 'lines');
    assert.ok(logs.total_buffered >= logs.lines.length, 'total_buffered');
  });

  it('reads CSV headers and rows as the stack did: Joint 1, TimeFromStart, blank rows, extra columns, separator \\t', async () => {
    const q = ((await (await fetch(`${HOST}/robot/joint_states`)).json()) as { position: number[] }).position;
    const row = (t: number) =>
      [...q.map((v, j) => (j === 0 ? v + 0.05 * t : v)).map((v) => v.toFixed(6)), t, 'x'].join('\t');
    const header = [
      'Joint 1',
      'Joint 2',
      'Joint 3',
      'Joint 4',
      'Joint 5',
      'Joint 6',
      'Joint 7',
      'TimeFromStart',
      'note',
    ];
    const csv = `${header.join('\t')}\n\n${row(1)}\n\n${row(2)}\n`;
    const res = await fetch(`${HOST}/trajectory/send_csv?separator=\\t`, { method: 'POST', body: csvForm(csv) });
    const body = (await res.json()) as Record<string, unknown>;
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.equal(body.points, 2);
    assert.deepEqual(body.ignored_columns, ['note'], 'the extra column is ignored and named');
    await settle(q.map((v, j) => Number((j === 0 ? v + 0.1 : v).toFixed(6))));
  });

  it('POST /sequences/start with the documented form; status, logs; POST /stop ends it', async () => {
    const config = {
      home: { joints: [0, 0, 0, -1.57, 0, 1.57, 0], speed: 0.1 },
      waypoints: [
        { x: 0.6, y: 0.1, z: 0.55, a: 3.14, b: 0.31, c: 2.79, speed: 0.2, planner: 'lin' },
        { joints: [0.5, 0.3, 0, -1.2, 0, 1.4, 0], speed: 0.2 },
      ],
    };
    const started = await fetch(`${HOST}/sequences/start`, {
      method: 'POST',
      body: sequenceForm(config, { n_iterations: '3', delay_between_iterations: '5.0' }, 'motion_sequence_config.json'),
    });
    const body = (await started.json()) as { status: string; pid: number; config: string };
    assert.equal(started.status, 200, JSON.stringify(body));
    assert.equal(body.status, 'started');
    assert.equal(body.config, 'motion_sequence_config.json', 'config, as the stack answered');
    const status = (await (await fetch(`${HOST}/sequences/status`)).json()) as { status: string };
    assert.ok(['running', 'finished'].includes(status.status), status.status);
    const logs = (await (await fetch(`${HOST}/sequences/logs?n=50`)).json()) as {
      lines: string[];
      total_buffered: number;
    };
    assert.ok(Array.isArray(logs.lines) && Number.isInteger(logs.total_buffered), 'lines and total_buffered');
    const stop = await fetch(`${HOST}/stop`, { method: 'POST', signal: AbortSignal.timeout(T_READ) });
    const stopped = (await stop.json()) as { status: string; success: boolean; message: string };
    assert.equal(stop.status, 200);
    assert.equal(stopped.status, 'stopped');
    assert.equal(stopped.success, true, 'the stop service answered');
    assert.equal(typeof stopped.message, 'string');
    const after = (await (await fetch(`${HOST}/sequences/status`)).json()) as { status: string; returncode?: number };
    assert.equal(after.status, 'finished', 'the runner has exited');
  });

  it("POST /robot/stop (the stack's stop route) answers as POST /stop", async () => {
    const res = await fetch(`${HOST}/robot/stop`, { method: 'POST' });
    const body = (await res.json()) as Record<string, unknown>;
    assert.equal(res.status, 200);
    assert.equal(body.status, 'stopped');
    assert.equal(body.success, true);
    assert.equal(typeof body.message, 'string');
  });

  it('names the MCP tools as the stack did (armgate.mcp.tool_names: original)', async () => {
    const client = await mcpClient(HOST);
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      for (const name of [
        'robot_joint_states_get',
        'robot_pose_get',
        'robot_positions_get',
        'robot_move_named_post',
        'robot_move_pose_post',
        'robot_move_joints_post',
        'trajectory_send_post',
        'trajectory_logs_get',
        'sequences_start_post',
        'sequences_status_get',
        'sequences_logs_get',
        'stop_post',
        'robot_stop_post',
      ])
        assert.ok(names.includes(name), `${name} in ${names.join(', ')}`);
      assert.ok(!names.includes('get_joint_states'), "armgate's names are not served beside them");
      assert.match(client.getInstructions() ?? '', /robot_joint_states_get/, 'the instructions say the names served');
      const tools = (await client.listTools()).tools;
      const text = tools.map((t) => t.description ?? '').join(' ');
      assert.match(text, /stop_post/, 'descriptions refer to the other tools by the names served');
      assert.doesNotMatch(
        text,
        /\b(get_trajectory_logs|list_named_positions|get_sequence_status)\b/,
        'no armgate name',
      );
      const state = (await client.callTool({ name: 'robot_joint_states_get', arguments: {} })) as {
        structuredContent?: { name?: string[] };
      };
      assert.deepEqual(state.structuredContent?.name, JOINTS, 'the tool answers');
      await assert.rejects(client.callTool({ name: 'get_joint_states', arguments: {} }), /unknown tool/);
    } finally {
      await client.close();
    }
  });
});
