import assert from 'node:assert/strict';
import { mkdtemp, open, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse as parseSchema } from '@foxglove/rosmsg';
import { MessageReader } from '@foxglove/rosmsg2-serialization';
import { McapIndexedReader } from '@mcap/core';
import { startTestServer, type TestServer } from '../support/server.ts';

const WORK = [0, 0, 0, -1.57, 0, 1.57, 0];
const CONFIG = {
  home: { joints: WORK, speed: 0.5 },
  waypoints: [
    { joints: [0.4, 0.2, 0, -1.3, 0, 1.4, 0], speed: 0.5 },
    { x: 0.5, y: 0.1, z: 0.5, a: 0, b: Math.PI, c: 0, planner: 'lin', speed: 0.3 },
  ],
};

function form(config: unknown, fields: Record<string, string> = {}): FormData {
  const f = new FormData();
  f.set('config', new Blob([typeof config === 'string' ? config : JSON.stringify(config)]), 'config.json');
  for (const [k, v] of Object.entries(fields)) f.set(k, v);
  return f;
}

interface Status {
  status: string;
  returncode?: number;
  pid?: number;
  iteration?: number;
  point?: string;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function waitFor<T>(get: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await get();
    if (ok(v) || Date.now() > deadline) return v;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('sequences and stop on the simulated arm', () => {
  let server: TestServer;
  let url: string;
  let bagRoot: string;
  const status = async () => (await (await fetch(`${url}/sequences/status`)).json()) as Status;
  const logs = async () => ((await (await fetch(`${url}/sequences/logs?n=1000`)).json()) as { lines: string[] }).lines;
  before(async () => {
    bagRoot = await mkdtemp(path.join(tmpdir(), 'armgate-bags-'));
    server = await startTestServer({ sim: { time_scale: 10 }, sequences: { bag_root: bagRoot } });
    url = server.url;
  });
  after(async () => {
    await server.close();
    await rm(bagRoot, { recursive: true, force: true });
  });

  it('runs a sequence from idle to running to finished with returncode 0, holding the arm meanwhile, and records a readable bag', async () => {
    assert.deepEqual(await status(), { status: 'idle' });
    const marker = `temp-check-${process.pid}-${Date.now()}`;
    const ourConfigFolders = async () => {
      const found: string[] = [];
      for (const d of (await readdir(tmpdir())).filter((n) => n.startsWith('armgate-sequence-'))) {
        const text = await readFile(path.join(tmpdir(), d, 'config.json'), 'utf8').catch(() => '');
        if (text.includes(marker)) found.push(d);
      }
      return found;
    };
    const res = await fetch(`${url}/sequences/start`, { method: 'POST', body: form({ ...CONFIG, name: marker }, { n_iterations: '2', delay_between_iterations: '0.1', bag_path: 'runA' }) });
    assert.equal(res.status, 200);
    const started = (await res.json()) as { status: string; pid: number };
    assert.equal(started.status, 'started');
    const running = await waitFor(status, (s) => s.status === 'running' && (s.iteration ?? 0) >= 1);
    assert.equal(running.status, 'running');
    assert.equal(running.pid, started.pid);
    assert.equal((await ourConfigFolders()).length, 1, 'the configuration is in a private temporary folder while the runner runs');
    const again = await fetch(`${url}/sequences/start`, { method: 'POST', body: form(CONFIG) });
    assert.equal(again.status, 409);
    await again.body?.cancel();
    const move = await fetch(`${url}/robot/move/named`, { method: 'POST', body: JSON.stringify({ name: 'home' }) });
    assert.equal(move.status, 409);
    await move.body?.cancel();
    const read = await fetch(`${url}/robot/joint_states`);
    assert.equal(read.status, 200);
    await read.body?.cancel();
    const finished = await waitFor(status, (s) => s.status === 'finished');
    assert.equal(finished.status, 'finished');
    assert.equal(finished.returncode, 0, (await logs()).join('\n'));
    const lines = await logs();
    assert.ok(lines.some((l) => /iteration 2\/2: waypoint 2 reached/.test(l)));
    assert.ok(lines.some((l) => /sequence finished/.test(l)));
    assert.equal(alive(started.pid), false);
    assert.deepEqual(await waitFor(ourConfigFolders, (f) => f.length === 0, 3000), [], 'the uploaded configuration folder is removed');

    const folder = path.join(bagRoot, 'runA');
    const files = await readdir(folder);
    assert.ok(files.includes('metadata.yaml') && files.includes('runA_0.mcap'), files.join(','));
    const handle = await open(path.join(folder, 'runA_0.mcap'));
    try {
      const reader = await McapIndexedReader.Initialize({
        readable: {
          size: async () => BigInt((await handle.stat()).size),
          read: async (offset: bigint, length: bigint) => {
            const buffer = new Uint8Array(Number(length));
            await handle.read(buffer, 0, Number(length), Number(offset));
            return buffer;
          },
        },
      });
      const channel = [...reader.channelsById.values()].find((c) => c.topic === '/joint_states');
      assert.ok(channel);
      const schema = reader.schemasById.get(channel.schemaId);
      assert.equal(schema?.name, 'sensor_msgs/msg/JointState');
      const decoder = new MessageReader(parseSchema(new TextDecoder().decode(schema?.data), { ros2: true }));
      let count = 0;
      for await (const message of reader.readMessages({ topics: ['/joint_states'] })) {
        const msg = decoder.readMessage(message.data) as { name: string[]; position: Float64Array | number[] };
        assert.equal(msg.name.length, 7);
        assert.ok(Array.from(msg.position).every(Number.isFinite));
        count++;
      }
      assert.ok(count > 5, `${count} joint states recorded`);
    } finally {
      await handle.close();
    }
  });

  const invalid: [string, unknown, Record<string, string>, RegExp][] = [
    ['invalid JSON', '{"home": ', {}, /not valid JSON/],
    ['a missing home', { waypoints: [] }, {}, /home/],
    ['waypoints that are not an array', { home: CONFIG.home, waypoints: {} }, {}, /waypoints/],
    ['a point with 6 joints', { home: { joints: [0, 0, 0, 0, 0, 0] }, waypoints: [] }, {}, /exactly 7/],
    ['a joint beyond its limit', { home: CONFIG.home, waypoints: [{ joints: [0, 0, 0, -2.5, 0, 0, 0] }] }, {}, /waypoints\.0\.joints\.3 .*joint4/],
    ['speed 2', { home: { joints: WORK, speed: 2 }, waypoints: [] }, {}, /speed/],
    ['an unknown planner', { home: CONFIG.home, waypoints: [{ x: 0.5, y: 0, z: 0.5, a: 0, b: 3, c: 0, planner: 'rrt' }] }, {}, /planner/],
    ['n_iterations 0', CONFIG, { n_iterations: '0' }, /n_iterations/],
    ['a negative delay', CONFIG, { delay_between_iterations: '-1' }, /delay_between_iterations/],
    ['a bag path that climbs out', CONFIG, { bag_path: '../x' }, /bag_path/],
    ['an absolute bag path elsewhere', CONFIG, { bag_path: '/etc/x' }, /bag_path/],
    ['an unknown topic', CONFIG, { bag_path: 'runB', topics: '/nope' }, /\/nope/],
  ];
  for (const [name, config, fields, pattern] of invalid) {
    it(`rejects ${name} with 422 and starts nothing`, async () => {
      const res = await fetch(`${url}/sequences/start`, { method: 'POST', body: form(config, fields) });
      assert.equal(res.status, 422);
      const body = (await res.json()) as { detail: { loc: (string | number)[]; msg: string }[] };
      assert.match(body.detail.map((d) => `${d.loc.join('.')} ${d.msg}`).join('\n'), pattern);
      assert.notEqual((await status()).status, 'running');
    });
  }

  it('ends a failing sequence with a non-zero returncode and names the point in the logs', async () => {
    const config = { home: CONFIG.home, waypoints: [{ x: 2, y: 0, z: 0.5, a: 0, b: Math.PI, c: 0 }] };
    const res = await fetch(`${url}/sequences/start`, { method: 'POST', body: form(config, { n_iterations: '1' }) });
    assert.equal(res.status, 200);
    const finished = await waitFor(status, (s) => s.status === 'finished');
    assert.equal(finished.returncode, 1);
    assert.ok((await logs()).some((l) => /waypoint 1 failed/.test(l)));
  });

  it('ends with returncode 3 when the joints action is not served', async () => {
    const res = await fetch(`${url}/sequences/start`, { method: 'POST', body: form(CONFIG, { n_iterations: '1', joints_action: 'nope/move' }) });
    assert.equal(res.status, 200);
    const finished = await waitFor(status, (s) => s.status === 'finished');
    assert.equal(finished.returncode, 3);
    assert.ok((await logs()).some((l) => /no action server 'nope\/move'/.test(l)));
  });

  it('answers /stop when idle with the four fields', async () => {
    const res = await fetch(`${url}/stop`, { method: 'POST' });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { message: 'no sequence was running; hold point published; planner stopped', sequence_stopped: false, hold_published: true, planner_stopped: true });
  });

  it('stops a move: it answers success false "stopped" and the arm comes to rest without a jump', async () => {
    const move = fetch(`${url}/robot/move/named`, { method: 'POST', body: JSON.stringify({ name: 'transport', speed: 0.05 }) });
    await new Promise((resolve) => setTimeout(resolve, 400));
    const samples: number[][] = [];
    const stop = await fetch(`${url}/stop`, { method: 'POST' });
    assert.equal(stop.status, 200);
    await stop.body?.cancel();
    assert.deepEqual(await (await move).json(), { success: false, message: 'stopped' });
    for (let k = 0; k < 10; k++) {
      samples.push(((await (await fetch(`${url}/robot/joint_states`)).json()) as { position: number[] }).position);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const state = (await (await fetch(`${url}/robot/joint_states`)).json()) as { velocity: number[] };
    assert.ok(state.velocity.every((v) => v === 0), 'at rest');
    for (let k = 1; k < samples.length; k++) {
      const step = Math.max(...(samples[k] ?? []).map((q, i) => Math.abs(q - (samples[k - 1]?.[i] ?? 0))));
      assert.ok(step < 0.05, `no jump between samples (${step} rad)`);
    }
  });

  it('stops a trajectory: the controller decelerates and holds short of the trajectory end', async () => {
    const start = ((await (await fetch(`${url}/robot/joint_states`)).json()) as { position: number[] }).position;
    const goal = [...start];
    goal[0] = (goal[0] ?? 0) + 1.0;
    const sent = await fetch(`${url}/trajectory/send`, { method: 'POST', body: JSON.stringify({ points: [{ positions: goal, time_from_start: 20 }] }) });
    assert.equal(sent.status, 200);
    await sent.body?.cancel();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const stop = (await (await fetch(`${url}/stop`, { method: 'POST' })).json()) as { hold_published: boolean };
    assert.equal(stop.hold_published, true);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const state = (await (await fetch(`${url}/robot/joint_states`)).json()) as { position: number[]; velocity: number[] };
    assert.ok(state.velocity.every((v) => v === 0), 'at rest');
    assert.ok((state.position[0] ?? 0) > (start[0] ?? 0) + 0.01 && (state.position[0] ?? 0) < (goal[0] ?? 0) - 0.1, `stopped part way: ${state.position[0]}`);
    const logs = ((await (await fetch(`${url}/trajectory/logs?n=10`)).json()) as { lines: string[] }).lines;
    assert.ok(logs.some((l) => /hold point received/.test(l)));
  });

  it('stops a sequence: the runner and its process group are gone, returncode 143, and the bag is still complete', async () => {
    const res = await fetch(`${url}/sequences/start`, { method: 'POST', body: form(CONFIG, { n_iterations: '100', bag_path: 'stopped' }) });
    const { pid } = (await res.json()) as { pid: number };
    await waitFor(status, (s) => s.status === 'running' && s.point !== 'starting');
    const stop = (await (await fetch(`${url}/stop`, { method: 'POST' })).json()) as { sequence_stopped: boolean };
    assert.equal(stop.sequence_stopped, true);
    const finished = await status();
    assert.equal(finished.status, 'finished');
    assert.equal(finished.returncode, 143);
    assert.equal(alive(pid), false);
    assert.throws(() => process.kill(-pid, 0));
    const files = await readdir(path.join(bagRoot, 'stopped'));
    assert.ok(files.includes('metadata.yaml'), files.join(','));
  });

  it('leaves no runner behind when the server closes during a sequence', async () => {
    const other = await startTestServer({ sim: { time_scale: 10 }, sequences: { bag_root: bagRoot } });
    const res = await fetch(`${other.url}/sequences/start`, { method: 'POST', body: form(CONFIG, { n_iterations: '100' }) });
    const { pid } = (await res.json()) as { pid: number };
    assert.equal(alive(pid), true);
    await other.close();
    assert.equal(alive(pid), false);
  });
});
