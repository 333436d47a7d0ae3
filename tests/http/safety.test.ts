/**
 * The safety envelope for every motion source, and plan then execute, end to end on the simulated
 * arm (issue 15): moves, trajectories from JSON and CSV, sequence goals and plans are held to the
 * workspace and the keep-out boxes; a dry run plans without moving and its plan runs once, only
 * from its start and before it expires. The app in memory on a clock the test steps (tests/support/stepped.ts): the
 * motions and a plan's life are times of that clock.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { mcpTransport } from '../support/mcp.ts';
import type { SteppedClock } from '../../lib/clock.ts';
import {
  getJson,
  type InMemory,
  issuesOf,
  logLines,
  maxDiff,
  post,
  positions,
  waitFor,
  WORK,
} from '../support/live.ts';
import { csvForm, sequenceForm } from '../support/multipart.ts';
import type { TestApp } from '../support/server.ts';
import { atRestOnClock, createSteppedApp, steppedTarget } from '../support/stepped.ts';

/** Joint 1 at +90 degrees swings the work pose's TCP to (0, 0.4, 0.61): into the fixture. */
const INTO_FIXTURE = [1.57, 0, 0, -1.57, 0, 1.57, 0];
const SAFE_TARGET = [0.3, 0.3, 0, -1.3, 0, 1.3, 0];
const FIXTURE = { name: 'fixture', min: [-0.25, 0.3, 0], max: [0.25, 0.8, 0.9] };
const PLAN_TTL_S = 3;

interface MoveAnswer {
  success: boolean;
  message: string;
  plan?: {
    id: string;
    planner: string;
    duration_s: number;
    start_joints: number[];
    final_joints: number[];
    path: { t_s: number[]; joints: number[][]; tcp: number[][] };
    min_clearance_m: number | null;
    expires_at: string;
  };
}

describe('safety envelope and plans on the simulated arm', () => {
  let server: TestApp;
  let clock: SteppedClock;
  /** The app, each request stepping the clock until it is answered. */
  let url: InMemory;
  let bagRoot: string;
  /** Time passing: the clock moves on. */
  const sleep = (ms: number) => clock.advance(ms);
  const atRest = (target: InMemory) => atRestOnClock(target, clock);
  before(async () => {
    bagRoot = await mkdtemp(path.join(tmpdir(), 'armgate-safety-'));
    ({ app: server, clock } = await createSteppedApp({
      sim: { time_scale: 20 },
      sequences: { bag_root: bagRoot },
      safety: { workspace: { min: [-1, -1, 0.2], max: [1, 1, 1.1] }, keep_out: [FIXTURE], plan_ttl_s: PLAN_TTL_S },
    }));
    url = steppedTarget(server, clock);
  });
  after(async () => {
    await server.close();
    await rm(bagRoot, { recursive: true, force: true });
  });

  const backToWork = async () => {
    const res = await post<MoveAnswer>(url, '/robot/move/joints', { joints: WORK, speed: 1 });
    assert.equal(res.body.success, true, `back to work: ${res.body.message}`);
    await atRest(url);
  };

  it('serves the envelope at GET /robot/safety and as an MCP resource', async () => {
    const envelope = await getJson<Record<string, unknown>>(url, '/robot/safety');
    assert.deepEqual(
      envelope,
      {
        workspace: { min: [-1, -1, 0.2], max: [1, 1, 1.1] },
        keep_out: [FIXTURE],
        link_radius_m: 0.08,
        plan_ttl_s: PLAN_TTL_S,
      },
      'the envelope as configured',
    );
    const client = new Client({ name: 'safety-test', version: '1' });
    await client.connect(mcpTransport(url));
    try {
      const read = await client.readResource({ uri: 'armgate://robot/safety' });
      const text = (read.contents[0] as { text: string }).text;
      assert.deepEqual(JSON.parse(text), envelope, 'the resource is the same envelope');
    } finally {
      await client.close();
    }
  });

  it('refuses a joint move into a keep-out box with success false naming the zone, without moving', async () => {
    const before = await positions(url);
    const res = await post<MoveAnswer>(url, '/robot/move/joints', { joints: INTO_FIXTURE, speed: 1 });
    assert.equal(res.status, 200, 'a refused motion is 200 success false');
    assert.equal(res.body.success, false, 'the move is refused');
    assert.match(res.body.message, /keep-out zone 'fixture'/, 'the message names the zone');
    assert.ok(maxDiff(await positions(url), before) < 1e-9, 'nothing moved');
  });

  it('refuses a named move whose TCP leaves the workspace (home: the TCP at z 1.27 > 1.1)', async () => {
    const before = await positions(url);
    const res = await post<MoveAnswer>(url, '/robot/move/named', { name: 'home', speed: 1 });
    assert.equal(res.body.success, false, 'the move is refused');
    assert.match(
      res.body.message,
      /leave the workspace .*z above 1\.1/,
      'the message names the workspace and the side',
    );
    assert.ok(maxDiff(await positions(url), before) < 1e-9, 'nothing moved');
  });

  it('refuses lin and ptp pose moves into the keep-out box, and ompl plans around it or says why', async () => {
    for (const planner of ['lin', 'ptp']) {
      const res = await post<MoveAnswer>(url, '/robot/move/pose', {
        x: 0,
        y: 0.45,
        z: 0.6,
        a: 0,
        b: Math.PI,
        c: 0,
        planner,
        speed: 1,
      });
      assert.equal(res.body.success, false, `${planner} into the fixture is refused`);
      assert.match(res.body.message, /fixture/, `${planner}: the message names the zone: ${res.body.message}`);
    }
    const around = await post<MoveAnswer>(url, '/robot/move/pose', {
      x: 0.3,
      y: -0.3,
      z: 0.5,
      a: 0,
      b: Math.PI,
      c: 0,
      planner: 'ompl',
      speed: 1,
    });
    assert.equal(around.body.success, true, `ompl reaches a free target: ${around.body.message}`);
    await atRest(url);
    await backToWork();
  });

  it('refuses a JSON trajectory into the keep-out box with 422 naming the first point and the zone', async () => {
    const before = await positions(url);
    const res = await post(url, '/trajectory/send', {
      points: [
        { positions: [0.5, 0, 0, -1.57, 0, 1.57, 0], time_from_start: 2 },
        { positions: INTO_FIXTURE, time_from_start: 4 },
      ],
    });
    assert.equal(res.status, 422, `refused: ${JSON.stringify(res.body)}`);
    const [issue] = issuesOf(res.body);
    assert.deepEqual(
      issue?.loc,
      ['body', 'points', 1, 'positions'],
      'the first point whose approach leaves the envelope',
    );
    assert.match(issue?.msg ?? '', /^point 1: .*keep-out zone 'fixture'/, 'the message names the point and the zone');
    assert.equal(issue?.type, 'envelope_keep_out');
    await sleep(100);
    assert.ok(maxDiff(await positions(url), before) < 1e-9, 'nothing moved');
  });

  it('refuses a CSV trajectory leaving the workspace with 422 naming the row, also without validate_limits', async () => {
    const csv = 't,joint1,joint2,joint3,joint4,joint5,joint6,joint7\n2,0,0,0,-0.8,0,0.8,0\n4,0,0,0,0,0,0,0\n';
    for (const query of ['', '?validate_limits=false']) {
      const res = await post(url, `/trajectory/send_csv${query}`, csvForm(csv));
      assert.equal(res.status, 422, `refused (${query}): ${JSON.stringify(res.body)}`);
      const [issue] = issuesOf(res.body);
      assert.equal(issue?.loc[0], 'body', 'in the body');
      assert.equal(issue?.loc[1], 'file', 'in the file');
      assert.match(issue?.msg ?? '', /^row \d: the TCP would leave the workspace/, `names the row: ${issue?.msg}`);
    }
    assert.ok(maxDiff(await positions(url), WORK) < 1e-3, 'still at work');
  });

  it('fails a sequence goal into the keep-out box with the reason in the runner log', async () => {
    const config = { home: { joints: [...WORK], speed: 1 }, waypoints: [{ joints: INTO_FIXTURE, speed: 1 }] };
    const started = await post<{ status: string; pid: number }>(
      url,
      '/sequences/start',
      sequenceForm(config, { n_iterations: '1', delay_between_iterations: '0' }),
    );
    assert.equal(started.status, 200, `started: ${JSON.stringify(started.body)}`);
    // The runner is a process of its own: polled in the machine's time (each poll steps the clock a little).
    const done = await waitFor(
      'the sequence to finish',
      () => getJson<{ status: string; returncode?: number }>(url, '/sequences/status'),
      (s) => s.status === 'finished',
      30_000,
      25,
    );
    assert.equal(done.returncode, 1, 'a motion failed');
    const log = (await logLines(url, '/sequences/logs', 200)).join('\n');
    assert.match(log, /keep-out zone 'fixture'/, 'the runner log names the zone');
    assert.ok(maxDiff(await positions(url), WORK) < 1e-3, 'the arm stayed at work (home is work)');
  });

  it('plans with dry_run without moving, then executes exactly that plan once', async () => {
    const before = await positions(url);
    const planned = await post<MoveAnswer>(url, '/robot/move/joints', { joints: SAFE_TARGET, speed: 1, dry_run: true });
    assert.equal(planned.status, 200);
    assert.equal(planned.body.success, true, `planned: ${planned.body.message}`);
    const plan = planned.body.plan;
    assert.ok(plan, 'the answer carries the plan');
    assert.equal(plan.planner, 'ptp');
    assert.ok(maxDiff(plan.start_joints, before) < 1e-9, 'the plan starts where the arm is');
    assert.ok(maxDiff(plan.final_joints, SAFE_TARGET) < 1e-9, 'and ends at the target');
    assert.ok(plan.duration_s > 0, 'it takes time');
    assert.ok(plan.path.joints.length >= 2 && plan.path.joints.length <= 50, 'a downsampled path');
    assert.equal(plan.path.tcp.length, plan.path.joints.length, 'a TCP point per path point');
    assert.ok(typeof plan.min_clearance_m === 'number' && plan.min_clearance_m > 0, 'its clearance to the envelope');
    assert.ok(Date.parse(plan.expires_at) > clock.epochMs(), 'it expires later');
    await sleep(100);
    assert.ok(maxDiff(await positions(url), before) < 1e-9, 'the dry run moved nothing');

    const runFromMs = clock.epochMs();
    const run = await post<MoveAnswer>(url, `/robot/plans/${plan.id}/execute`);
    const runToMs = clock.epochMs();
    assert.equal(run.status, 200, JSON.stringify(run.body));
    assert.equal(run.body.success, true, `executed: ${run.body.message}`);
    await atRest(url);
    assert.ok(maxDiff(await positions(url), SAFE_TARGET) < 1e-3, 'the arm is at the plan end');

    const replay = await post<{ detail: string }>(url, `/robot/plans/${plan.id}/execute`);
    assert.equal(replay.status, 409, 'a plan runs once');
    assert.match(replay.body.detail, /already executed/);
    // When it ran is a time of the app's clock, as its expiry is.
    const executedAtMs = Date.parse(/executed at (\S+);/.exec(replay.body.detail)?.[1] ?? '');
    assert.ok(
      executedAtMs >= Math.floor(runFromMs) && executedAtMs <= runToMs,
      `executed at ${new Date(executedAtMs).toISOString()}, while the clock went from ${new Date(runFromMs).toISOString()} to ${new Date(runToMs).toISOString()}`,
    );
    await backToWork();
  });

  it('refuses a stale plan with 409 once the arm has left its start, nothing moved', async () => {
    const first = await post<MoveAnswer>(url, '/robot/move/joints', { joints: SAFE_TARGET, speed: 1 });
    assert.equal(first.body.success, true, first.body.message);
    await atRest(url);
    const planned = await post<MoveAnswer>(url, '/robot/move/named', { name: 'work', speed: 1, dry_run: true });
    assert.equal(planned.body.success, true, planned.body.message);
    const id = planned.body.plan?.id ?? '';
    const elsewhere = [-0.3, 0.3, 0, -1.3, 0, 1.3, 0];
    const moved = await post<MoveAnswer>(url, '/robot/move/joints', { joints: elsewhere, speed: 1 });
    assert.equal(moved.body.success, true, moved.body.message);
    await atRest(url);
    const stale = await post<{ detail: string }>(url, `/robot/plans/${id}/execute`);
    assert.equal(stale.status, 409, JSON.stringify(stale.body));
    assert.match(stale.body.detail, /no longer at the start/);
    assert.ok(maxDiff(await positions(url), elsewhere) < 1e-3, 'nothing moved');
    await backToWork();
  });

  it('answers 404 for an unknown plan and for an expired one', async () => {
    const unknown = await post<{ detail: string }>(url, '/robot/plans/no-such-plan/execute');
    assert.equal(unknown.status, 404);
    const planned = await post<MoveAnswer>(url, '/robot/move/joints', { joints: SAFE_TARGET, speed: 1, dry_run: true });
    assert.equal(planned.body.success, true, planned.body.message);
    await sleep(PLAN_TTL_S * 1000 + 300);
    const expired = await post<{ detail: string }>(url, `/robot/plans/${planned.body.plan?.id}/execute`);
    assert.equal(expired.status, 404, JSON.stringify(expired.body));
    assert.match(expired.body.detail, /expired/);
    assert.ok(maxDiff(await positions(url), WORK) < 1e-3, 'nothing moved');
  });

  it('refuses a dry run through the keep-out box: success false naming the zone, no plan', async () => {
    const res = await post<MoveAnswer>(url, '/robot/move/joints', { joints: INTO_FIXTURE, speed: 1, dry_run: true });
    assert.equal(res.body.success, false);
    assert.match(res.body.message, /fixture/);
    assert.equal(res.body.plan, undefined, 'no plan');
  });

  it('plans over MCP with dry_run and executes with the execute_plan tool', async () => {
    const client = new Client({ name: 'safety-test', version: '1' });
    await client.connect(mcpTransport(url));
    try {
      const planned = (await client.callTool({
        name: 'move_to_joints',
        arguments: { joints: SAFE_TARGET, speed: 1, dry_run: true },
      })) as { structuredContent?: MoveAnswer };
      const plan = planned.structuredContent?.plan;
      assert.ok(plan, `a plan: ${JSON.stringify(planned)}`);
      assert.ok(maxDiff(await positions(url), WORK) < 1e-3, 'nothing moved yet');
      const run = (await client.callTool({ name: 'execute_plan', arguments: { id: plan.id } })) as {
        isError?: boolean;
        structuredContent?: MoveAnswer;
      };
      assert.ok(!run.isError, JSON.stringify(run));
      assert.equal(run.structuredContent?.success, true, 'executed');
    } finally {
      await client.close();
    }
    await atRest(url);
    assert.ok(maxDiff(await positions(url), SAFE_TARGET) < 1e-3, 'at the plan end');
    await backToWork();
  });
});
