/**
 * Inverse kinematics on request (POST /robot/ik, solve_ik) and confirmed completion of trajectories
 * (wait on /trajectory/send and /trajectory/send_csv, and the send_trajectory tool), on a live
 * server over the simulated arm. The trajectories and the MCP agents' motions run on a clock the test steps
 * (tests/support/stepped.ts); inverse kinematics is compute time of the machine's and stays on its clock.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { mcpTransport } from '../support/mcp.ts';
import { matFromAbc } from '../../lib/kinematics/rotation.ts';
import { dhFlangePose } from '../support/dh.ts';
import type { SteppedClock } from '../../lib/clock.ts';
import { atRest, type InMemory, issuesOf, jointStates, maxDiff, post, WORK } from '../support/live.ts';
import { createTestApp, type TestApp } from '../support/server.ts';
import {
  atRestOnClock,
  createSteppedApp,
  movingOnClock,
  steppedTarget,
  steppedUntilSettled,
} from '../support/stepped.ts';

const TIME_SCALE = 10;

interface IkResult {
  success: boolean;
  joints?: number[];
  message: string;
}
interface Sent {
  status: string;
  points: number;
  outcome?: string;
  message?: string;
  duration_s?: number;
}

/** Largest difference between the DH pose of `joints` and the target (m for position, matrix entries for rotation). */
function poseError(
  joints: readonly number[],
  target: { x: number; y: number; z: number; a: number; b: number; c: number },
) {
  const fk = dhFlangePose(joints);
  const rotation = matFromAbc(new Float64Array(9), target.a, target.b, target.c);
  const position = Math.max(
    Math.abs((fk.position[0] ?? 0) - target.x),
    Math.abs((fk.position[1] ?? 0) - target.y),
    Math.abs((fk.position[2] ?? 0) - target.z),
  );
  let orientation = 0;
  for (let i = 0; i < 9; i++) orientation = Math.max(orientation, Math.abs((fk.rotation[i] ?? 0) - (rotation[i] ?? 0)));
  return { position, orientation };
}

describe('POST /robot/ik and solve_ik on the simulated arm', () => {
  let server: TestApp;
  before(async () => {
    server = await createTestApp({ sim: { time_scale: TIME_SCALE } });
    await atRest(server);
  });
  after(async () => {
    await server.close();
  });

  it('solves a reachable pose without moving the arm: FK of the answer is the pose', async () => {
    const before = (await jointStates(server)).position;
    const targets = [
      { x: 0.5, y: 0, z: 0.5, a: 0, b: Math.PI, c: 0 },
      { x: 0.4, y: 0.3, z: 0.6, a: 0.5, b: 2.5, c: -0.2 },
      { x: 0.3, y: -0.4, z: 0.3, a: -1, b: Math.PI, c: 0.3 },
    ];
    for (const target of targets) {
      const { status, body } = await post<IkResult>(server, '/robot/ik', target);
      assert.equal(status, 200, JSON.stringify(body));
      assert.equal(body.success, true, body.message);
      assert.equal(body.joints?.length, 7);
      const error = poseError(body.joints ?? [], target);
      assert.ok(error.position < 1e-4, `position error ${error.position} m for ${JSON.stringify(target)}`);
      assert.ok(error.orientation < 1e-3, `orientation error ${error.orientation} for ${JSON.stringify(target)}`);
    }
    assert.ok(maxDiff((await jointStates(server)).position, before) < 1e-9, 'the arm did not move');
  });

  it('answers success false with the reason for an unreachable pose, at once', async () => {
    const started = performance.now();
    const { status, body } = await post<IkResult>(server, '/robot/ik', { x: 1.5, y: 0, z: 0.5 });
    assert.equal(status, 200);
    assert.equal(body.success, false);
    assert.equal(body.joints, undefined);
    assert.match(body.message, /reach/);
    assert.ok(performance.now() - started < 500, 'fails fast');
  });

  it('returns the seed itself when the seed already solves the pose', async () => {
    const seed = [0.3, 0.5, -0.2, -1.2, 0.4, 1.1, 0.2];
    const fk = dhFlangePose(seed);
    // ABC of the seed's rotation (R = Rz(A) Ry(B) Rx(C)).
    const r = fk.rotation;
    const b = Math.asin(-(r[6] ?? 0));
    const a = Math.atan2(r[3] ?? 0, r[0] ?? 0);
    const c = Math.atan2(r[7] ?? 0, r[8] ?? 0);
    const [x, y, z] = fk.position as [number, number, number];
    const { body } = await post<IkResult>(server, '/robot/ik', { x, y, z, a, b, c, seed });
    assert.equal(body.success, true, body.message);
    assert.ok(maxDiff(body.joints ?? [], seed) < 1e-3, `${body.joints} vs the seed ${seed}`);
  });

  for (const [what, body, loc] of [
    ['a seed of 6 angles', { x: 0.5, y: 0, z: 0.5, seed: [0, 0, 0, 0, 0, 0] }, ['body', 'seed']],
    ['a seed beyond joint4', { x: 0.5, y: 0, z: 0.5, seed: [0, 0, 0, -2.5, 0, 0, 0] }, ['body', 'seed', 3]],
    ['x missing', { y: 0, z: 0.5 }, ['body', 'x']],
    ['an unknown frame', { x: 0.5, y: 0, z: 0.5, frame_id: 'camera' }, ['body', 'frame_id']],
    ['collision_check as text', { x: 0.5, y: 0, z: 0.5, collision_check: 'yes' }, ['body', 'collision_check']],
  ] as const) {
    it(`422 for ${what}, naming ${loc.join('.')}`, async () => {
      const reply = await post(server, '/robot/ik', body);
      assert.equal(reply.status, 422, JSON.stringify(reply.body));
      assert.deepEqual(issuesOf(reply.body)[0]?.loc, loc);
    });
  }

  it('is the solve_ik tool over MCP, read-only by its annotations', async () => {
    const client = new Client({ name: 'ik-test', version: '1' });
    await client.connect(mcpTransport(server));
    try {
      const tool = (await client.listTools()).tools.find((t) => t.name === 'solve_ik');
      assert.equal(tool?.annotations?.readOnlyHint, true);
      const target = { x: 0.5, y: 0.1, z: 0.45, a: 0, b: Math.PI, c: 0 };
      const result = await client.callTool({ name: 'solve_ik', arguments: target });
      const answer = result.structuredContent as unknown as IkResult;
      assert.equal(answer.success, true, answer.message);
      assert.ok(poseError(answer.joints ?? [], target).position < 1e-4);
    } finally {
      await client.close();
    }
  });
});

describe('confirmed completion of trajectories (wait)', () => {
  let app: TestApp;
  let clock: SteppedClock;
  /** The app, each request stepping the clock until it is answered. */
  let server: InMemory;
  const sleep = (ms: number) => clock.advance(ms);
  const atRest = (target: InMemory, limitMs = 5000) => atRestOnClock(target, clock, limitMs);
  before(async () => {
    ({ app, clock } = await createSteppedApp({ sim: { time_scale: TIME_SCALE } }));
    server = steppedTarget(app, clock);
    await atRest(server);
  });
  after(async () => {
    await app.close();
  });

  const away = (q: readonly number[], d: number) => q.map((v, j) => (j === 0 ? v + d : v));
  /** Until the arm moves: a trajectory is checked in a worker thread, in the machine's time, before it runs. */
  const moving = () => movingOnClock(app, clock);

  it('without wait answers at publication, with no outcome', async () => {
    const start = (await atRest(server)).position;
    const { status, body } = await post<Sent>(server, '/trajectory/send', {
      points: [{ positions: away(start, 0.05), time_from_start: 2 }],
    });
    assert.equal(status, 200);
    assert.equal(body.status, 'sent');
    assert.equal(body.outcome, undefined);
    await atRest(server);
  });

  it('with wait answers finished once the controller reached the last point', async () => {
    const start = (await atRest(server)).position;
    const goal = away(start, 0.1);
    const started = clock.nowMs();
    const { status, body } = await post<Sent>(server, '/trajectory/send', {
      points: [{ positions: goal, time_from_start: 2 }],
      wait: true,
    });
    assert.equal(status, 200, JSON.stringify(body));
    assert.equal(body.outcome, 'finished', body.message);
    // The app's clock (the time the trajectory runs on).
    const wallS = (clock.nowMs() - started) / 1000;
    assert.ok(wallS >= 2 / TIME_SCALE - 0.02, `answered after ${wallS} s, the trajectory takes ${2 / TIME_SCALE} s`);
    assert.ok(maxDiff((await jointStates(server)).position, goal) < 1e-3, 'the arm is at the last point');
  });

  it('with wait answers stopped when /stop ends the trajectory, and the arm rests short of its end', async () => {
    const start = (await atRest(server)).position;
    const goal = away(start, -0.8);
    // Sent without stepping: the clock moves with the test's own waits and requests, in their order.
    const waited = post<Sent>(app, '/trajectory/send', {
      points: [{ positions: goal, time_from_start: 20 }],
      wait: true,
    });
    await moving();
    await sleep(300);
    const busy = await post(server, '/robot/move/named', { name: 'home' });
    assert.equal(busy.status, 409, 'a waited trajectory holds the arm');
    assert.equal((await post(server, '/stop')).status, 200);
    const { status, body } = await steppedUntilSettled(clock, waited, 'the waited trajectory');
    assert.equal(status, 200);
    assert.equal(body.outcome, 'stopped', body.message);
    const rest = (await atRest(server)).position;
    assert.ok(maxDiff(rest, goal) > 0.3, 'stopped well short of the end');
  });

  it('with wait answers preempted when a newer trajectory replaces it (the newer one runs)', async () => {
    const start = (await atRest(server)).position;
    // Sent without stepping: the clock moves with the test's own waits and requests, in their order.
    const waited = post<Sent>(app, '/trajectory/send', {
      points: [{ positions: away(start, 0.8), time_from_start: 20 }],
      wait: true,
    });
    await moving();
    await sleep(300);
    const newer = await post<Sent>(server, '/trajectory/send', {
      points: [{ positions: away(start, 0.05), time_from_start: 1 }],
    });
    assert.equal(newer.status, 200, `a newer trajectory preempts a waited one: ${JSON.stringify(newer.body)}`);
    const { status, body } = await steppedUntilSettled(clock, waited, 'the waited trajectory');
    assert.equal(status, 200);
    assert.equal(body.outcome, 'preempted', body.message);
    const rest = (await atRest(server)).position;
    assert.ok(maxDiff(rest, away(start, 0.05)) < 1e-3, 'the newer trajectory ran to its end');
  });

  it('with wait answers refused when the controller does not accept the trajectory', async () => {
    const start = (await atRest(server)).position;
    // Unchecked, a first point at t = 0 far from the arm: the controller refuses it.
    const { status, body } = await post<Sent>(server, '/trajectory/send', {
      points: [
        { positions: away(start, 0.5), time_from_start: 0 },
        { positions: away(start, 0.6), time_from_start: 1 },
      ],
      validate_limits: false,
      wait: true,
    });
    assert.equal(status, 200, JSON.stringify(body));
    assert.equal(body.outcome, 'refused', body.message);
    assert.ok(maxDiff((await jointStates(server)).position, start) < 1e-6, 'nothing moved');
  });

  it('takes wait as a query parameter of send_csv', async () => {
    const start = (await atRest(server)).position;
    const goal = away(start, 0.05);
    const csv = `t,${start.map((_, j) => `joint${j + 1}`).join(',')}\n1,${goal.join(',')}\n`;
    const form = new FormData();
    form.set('file', new Blob([csv], { type: 'text/csv' }), 'small.csv');
    const res = await server.request('/trajectory/send_csv?wait=true', { method: 'POST', body: form });
    const body = (await res.json()) as Sent & { file: string };
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.equal(body.outcome, 'finished', body.message);
    assert.equal(body.file, 'small.csv');
    const bad = await server.request('/trajectory/send_csv?wait=maybe', { method: 'POST', body: form });
    assert.equal(bad.status, 422);
    assert.deepEqual(issuesOf(await bad.json())[0]?.loc, ['query', 'wait']);
  });
});

describe('agents over MCP: cancellation and progress', () => {
  let app: TestApp;
  let clock: SteppedClock;
  /** The app, each request stepping the clock until it is answered (the MCP client's own requests do not). */
  let server: InMemory;
  let client: Client;
  const sleep = (ms: number) => clock.advance(ms);
  const atRest = (target: InMemory, limitMs = 5000) => atRestOnClock(target, clock, limitMs);
  before(async () => {
    ({ app, clock } = await createSteppedApp({ sim: { time_scale: 2 } }));
    server = steppedTarget(app, clock);
    client = new Client({ name: 'agent-test', version: '1' });
    await client.connect(mcpTransport(app));
    await atRest(server);
  });
  after(async () => {
    await client.close();
    await app.close();
  });

  it('cancelling a motion tool call stops the arm short of its goal, as stop does', async () => {
    const goal = [0.8, 0, 0, -1.57, 0, 1.57, 0];
    const controller = new AbortController();
    const call = client.callTool({ name: 'move_to_joints', arguments: { joints: goal, speed: 0.1 } }, undefined, {
      signal: controller.signal,
    });
    // The call is planned in the machine's time: the 600 ms of the clock count from the motion's start.
    await movingOnClock(server, clock);
    await sleep(600);
    controller.abort('the agent changed its mind');
    await assert.rejects(call);
    const rest = (await atRest(server, 5000)).position;
    assert.ok(maxDiff(rest, goal) > 0.2, `the arm rests short of the goal: ${rest}`);
    assert.ok(maxDiff(rest, WORK) > 1e-3, 'it had moved');
    const after = await post<{ status: number }>(server, '/robot/move/joints', { joints: WORK, speed: 1 });
    assert.equal(after.status, 200, 'the arm is free again after the cancelled call');
  });

  it('sends progress notifications at least once a second while a motion runs', async () => {
    await atRest(server);
    const seen: { progress: number; total?: number | undefined; message?: string | undefined }[] = [];
    const result = await steppedUntilSettled(
      clock,
      client.callTool(
        { name: 'move_to_joints', arguments: { joints: [0.3, 0, 0, -1.57, 0, 1.57, 0], speed: 0.2 } },
        undefined,
        { onprogress: (p) => seen.push(p), timeout: 60_000 },
      ),
      'the move_to_joints call',
    );
    assert.equal((result.structuredContent as { success: boolean }).success, true);
    assert.ok(seen.length >= 2, `${seen.length} progress notifications`);
    for (let k = 1; k < seen.length; k++)
      assert.ok((seen[k]?.progress ?? 0) > (seen[k - 1]?.progress ?? 0), 'progress increases');
  });
});
