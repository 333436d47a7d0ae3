/**
 * POST /stop end to end on a live server over the simulated arm (issue 4): when idle, during a
 * motion request, during a trajectory and during a sequence (no runner process left, the bag still
 * valid), without joint states, and shutting the server down during a sequence (close(), SIGTERM
 * and SIGINT of the command line server).
 */
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { assertJointState, readBag, streamRecords } from '../support/bag.ts';
import {
  assertNoJump,
  assertProcessGone,
  atRest,
  getJson,
  jointStates,
  LOG_LINE,
  logLines,
  maxDiff,
  post,
  processExists,
  sampleJointStates,
  sleep,
  waitFor,
  WORK,
  type Target,
} from '../support/live.ts';
import { sequenceForm } from '../support/multipart.ts';
import { listeningUrl, runServerCli } from '../support/cli.ts';
import { createTestApp, type TestApp, writeSettings } from '../support/server.ts';

const TIME_SCALE = 10;
/** A sequence long enough to be stopped: 100 iterations between two joint points. */
const LONG_SEQUENCE = {
  home: { joints: [...WORK], speed: 0.3 },
  waypoints: [{ joints: [0.5, 0.3, 0, -1.2, 0, 1.2, 0.3], speed: 0.3 }],
};

interface StopResult {
  message: string;
  sequence_stopped: boolean;
  hold_published: boolean;
  planner_stopped: boolean;
}

interface Status {
  status: string;
  returncode?: number;
  pid?: number;
  point?: string;
  iteration?: number;
}

async function stop(url: Target): Promise<StopResult> {
  const res = await post<StopResult>(url, '/stop');
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.deepEqual(Object.keys(res.body).sort(), [
    'hold_published',
    'message',
    'planner_stopped',
    'sequence_stopped',
    'status',
    'success',
  ]);
  assert.equal((res.body as { status?: string }).status, 'stopped', "the robot stack's status field");
  assert.equal(
    (res.body as { success?: boolean }).success,
    res.body.planner_stopped,
    'success is the stop service answer',
  );
  assert.equal(typeof res.body.message, 'string');
  return res.body;
}

/** Waits until some joint moves. */
function moving(url: Target): Promise<unknown> {
  return waitFor(
    'the arm to move',
    () => jointStates(url),
    (s) => s.velocity.some((v) => v !== 0),
    5000,
    5,
  );
}

/** Starts a long sequence (optionally recording a bag) and waits until it is past 'starting'. */
async function startLongSequence(url: Target, fields: Record<string, string> = {}): Promise<number> {
  const res = await post<{ status: string; pid: number }>(
    url,
    '/sequences/start',
    sequenceForm(LONG_SEQUENCE, { n_iterations: '100', delay_between_iterations: '0', ...fields }),
  );
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.status, 'started');
  await waitFor(
    'the sequence to run a point',
    () => getJson<Status>(url, '/sequences/status'),
    (s) => s.status === 'running' && s.point !== 'starting',
    15_000,
    10,
  );
  return res.body.pid;
}

/** The bag of a stopped run is closed and valid: indexed reader, stream reader, decodable joint states. */
async function assertValidBag(folder: string): Promise<void> {
  const bag = await readBag(folder);
  const states = bag.messages.filter((m) => m.topic === '/joint_states');
  assert.ok(states.length > 0, 'joint states were recorded');
  for (const m of states) assertJointState(m.decoded);
  assert.equal(bag.metadata.message_count, bag.messages.length);
  await streamRecords(path.join(folder, bag.mcapFile));
}

describe('POST /stop on the simulated arm', () => {
  let server: TestApp;
  let url: Target;
  let bagRoot: string;
  const trajectoryLog = (n = 50) => logLines(url, '/trajectory/logs', n);

  before(async () => {
    bagRoot = await mkdtemp(path.join(tmpdir(), 'armgate-test-stop-bags-'));
    server = await createTestApp({ sim: { time_scale: TIME_SCALE }, sequences: { bag_root: bagRoot } });
    url = server;
  });
  after(async () => {
    await server.close();
    await rm(bagRoot, { recursive: true, force: true });
  });

  it('answers 200 with message, sequence_stopped, hold_published and planner_stopped when idle, and the arm stays', async () => {
    const before = await atRest(url);
    for (let k = 0; k < 2; k++) {
      const result = await stop(url);
      assert.equal(result.sequence_stopped, false);
      assert.equal(result.hold_published, true);
      assert.equal(result.planner_stopped, true);
      assert.match(result.message, /no sequence was running/);
      assert.match(result.message, /hold point published/);
      assert.match(result.message, /planner stopped/);
    }
    await sleep(50);
    const now = await jointStates(url);
    assert.deepEqual(now.position, before.position);
    assert.ok(now.velocity.every((v) => v === 0));
    assert.ok((await trajectoryLog(10)).some((l) => /stop: hold point at the current position published/.test(l)));
    assert.deepEqual(await getJson(url, '/sequences/status'), { status: 'idle' });
  });

  const moves: [string, string, unknown, number][] = [
    ['move/named', '/robot/move/named', { name: 'transport', speed: 0.05 }, 0.05],
    ['move/joints', '/robot/move/joints', { joints: [1.2, 0.5, 0.5, -0.8, 0.5, 0.8, 1.0], speed: 0.05 }, 0.05],
  ];
  for (const [name, endpoint, body, speed] of moves) {
    it(`stops a slow ${name}: it answers success false 'stopped', the arm comes to rest at once and never jumps`, async () => {
      const start = (await atRest(url)).position;
      const move = post<{ success: boolean; message: string }>(url, endpoint, body);
      let sampling = true;
      let samples: Promise<Awaited<ReturnType<typeof sampleJointStates>>> = Promise.resolve([]);
      const live: Awaited<typeof samples> = [];
      try {
        await moving(url);
        samples = sampleJointStates(url, () => !sampling, 10, live);
        // Counted, not timed: a loaded machine answers fewer reads in a given time.
        await waitFor(
          '6 samples of the motion',
          async () => live.length,
          (n) => n >= 6,
          15_000,
          10,
        );
        const stoppedAt = performance.now();
        const result = await stop(url);
        assert.deepEqual(result, {
          message: 'no sequence was running; hold point published; planner stopped',
          sequence_stopped: false,
          hold_published: true,
          planner_stopped: true,
          status: 'stopped',
          success: true,
        });
        const answer = await move;
        assert.equal(answer.status, 200);
        assert.deepEqual(answer.body, { success: false, message: 'stopped' });
        const rest = await atRest(url, 1000);
        const restMs = performance.now() - stoppedAt;
        assert.ok(restMs < 500, `at rest ${restMs.toFixed(0)} ms after the stop`);
        // Samples at rest too: at least 10 in all, 2 of them after the rest.
        const atRestCount = live.length;
        await waitFor(
          'samples at rest',
          async () => live.length,
          (n) => n >= Math.max(10, atRestCount + 2),
          15_000,
          10,
        );
        sampling = false;
        const taken = await samples;
        assert.ok(taken.length >= 10, `${taken.length} samples`);
        assert.ok(
          taken.some((s) => s.state.velocity.some((v) => v !== 0)),
          'samples cover the motion',
        );
        assertNoJump(taken, speed, TIME_SCALE);
        assert.ok(maxDiff(rest.position, start) > 1e-3, 'the arm had moved');
        // It holds where it stopped, short of the goal.
        await sleep(100);
        assert.deepEqual((await jointStates(url)).position, rest.position, 'it holds');
        const lines = await trajectoryLog(20);
        assert.ok(
          lines.some((l) => /stop: hold point at the current position published/.test(l)),
          lines.join('\n'),
        );
        assert.ok(
          lines.some((l) => /controller: holding position/.test(l)),
          lines.join('\n'),
        );
      } finally {
        sampling = false;
        await samples;
        await move;
      }
      // The arm takes commands again.
      const back = await post<{ success: boolean; message: string }>(url, '/robot/move/joints', {
        joints: WORK,
        speed: 1,
      });
      assert.equal(back.status, 200);
      assert.equal(back.body.success, true, back.body.message);
    });
  }

  it('stops a long trajectory: the controller decelerates and holds short of the trajectory end, without a jump', async () => {
    const start = (await atRest(url)).position;
    const goal = start.map((q, j) => (j === 0 ? q + 1.0 : j === 5 ? q - 0.5 : q));
    const sent = await post(url, '/trajectory/send', { points: [{ positions: goal, time_from_start: 20 }] });
    assert.equal(sent.status, 200);
    let sampling = true;
    const samples = sampleJointStates(url, () => !sampling, 10);
    try {
      await sleep(300);
      const result = await stop(url);
      assert.equal(result.sequence_stopped, false);
      assert.equal(result.hold_published, true);
      assert.equal(result.planner_stopped, true);
      const rest = await atRest(url, 1000);
      await sleep(100);
      sampling = false;
      const taken = await samples;
      // 1 rad in 20 s at most: well under 5 % of joint1's velocity limit.
      assertNoJump(taken, 0.05, TIME_SCALE);
      const j1 = rest.position[0] ?? 0;
      assert.ok(j1 > (start[0] ?? 0) + 0.05 && j1 < (goal[0] ?? 0) - 0.3, `stopped part way: joint1 at ${j1}`);
      await sleep(300);
      assert.deepEqual((await jointStates(url)).position, rest.position, 'it holds');
      const lines = (await trajectoryLog(20)).map((l) => LOG_LINE.exec(l)?.[2] ?? l);
      const accepted = lines.findLastIndex((l) =>
        /^controller: accepted trajectory #\d+ \(1 points, 20\.000 s\)$/.test(l),
      );
      assert.ok(accepted >= 0, lines.join('\n'));
      const after = lines.slice(accepted);
      // The hold point is a one-point trajectory timed to decelerate within the limits (never a 0 s step).
      const hold = after.findIndex((l) => /^controller: accepted trajectory #\d+ \(1 points, 0\.\d+ s\)$/.test(l));
      assert.ok(hold > 0, after.join('\n'));
      assert.ok(
        after.slice(hold).some((l) => /^controller: holding position \[/.test(l)),
        after.join('\n'),
      );
      assert.ok(after.includes('stop: hold point at the current position published'), after.join('\n'));
      assert.ok(!after.some((l) => /finished/.test(l)), 'the trajectory did not finish');
    } finally {
      sampling = false;
      await samples;
    }
    const back = await post<{ success: boolean }>(url, '/robot/move/joints', { joints: WORK, speed: 1 });
    assert.equal(back.body.success, true);
  });

  it('stops a sequence: sequence_stopped true, finished with returncode 143, no runner process or group left, the bag closed and readable', async () => {
    const pid = await startLongSequence(url, { bag_path: 'stopped-run' });
    assert.ok(processExists(pid));
    await sleep(200);
    const stoppedAt = performance.now();
    const result = await stop(url);
    const stopMs = performance.now() - stoppedAt;
    assert.equal(result.sequence_stopped, true);
    assert.equal(result.hold_published, true);
    assert.equal(result.planner_stopped, true);
    assert.match(result.message, /^sequence runner stopped; hold point published; planner stopped$/);
    assert.ok(stopMs < 3000, `the runner exited on SIGTERM without needing SIGKILL (${stopMs.toFixed(0)} ms)`);
    const status = await getJson<Status>(url, '/sequences/status');
    assert.equal(status.status, 'finished');
    assert.equal(status.returncode, 143);
    assert.equal(status.pid, pid);
    assertProcessGone(pid);
    const lines = (await logLines(url, '/sequences/logs', 1000)).map((l) => LOG_LINE.exec(l)?.[2] ?? l);
    const own = lines.slice(lines.findIndex((l) => l.includes(`runner started (pid ${pid})`)));
    assert.ok(
      own.some((l) => /stopped by (armgate|SIGTERM)/.test(l)),
      own.join('\n'),
    );
    assert.ok(own.includes('bag closed'), own.join('\n'));
    assert.ok(!own.some((l) => /SIGKILL/.test(l)), own.join('\n'));
    assert.equal(own.at(-1), `runner ${pid} exited with code 143`);
    await assertValidBag(path.join(bagRoot, 'stopped-run'));
    await atRest(url, 1000);
    // The arm and the sequences are free again.
    const back = await post<{ success: boolean }>(url, '/robot/move/joints', { joints: WORK, speed: 1 });
    assert.equal(back.status, 200);
    assert.equal(back.body.success, true);
    const again = await stop(url);
    assert.equal(again.sequence_stopped, false, 'a second stop finds no sequence');
  });

  it('stops a sequence without a bag just the same', async () => {
    // The hold point of the previous test's last stop holds the arm for its 0.1 s (a sequence start meanwhile is a 409).
    await sleep(300);
    const pid = await startLongSequence(url);
    const result = await stop(url);
    assert.equal(result.sequence_stopped, true);
    assert.equal((await getJson<Status>(url, '/sequences/status')).returncode, 143);
    assertProcessGone(pid);
  });
});

describe('POST /stop without joint states', () => {
  it('publishes an empty trajectory instead of a hold point', async () => {
    const server = await createTestApp({ sim: { time_scale: TIME_SCALE, publish_joint_states: false } });
    try {
      const result = await stop(server);
      assert.equal(result.sequence_stopped, false);
      assert.equal(result.hold_published, true);
      assert.equal(result.planner_stopped, true);
      assert.match(result.message, /empty trajectory published \(no joint state\)/);
      const lines = await logLines(server, '/trajectory/logs', 10);
      assert.ok(
        lines.some((l) => /stop: empty trajectory \(no current joint state\) published/.test(l)),
        lines.join('\n'),
      );
    } finally {
      await server.close();
    }
  });
});

describe('shutting the server down during a sequence', () => {
  let bagRoot: string;
  before(async () => {
    bagRoot = await mkdtemp(path.join(tmpdir(), 'armgate-test-shutdown-bags-'));
  });
  after(async () => {
    await rm(bagRoot, { recursive: true, force: true });
  });

  it('close() leaves no runner process or group, and the bag is closed and readable', async () => {
    const server = await createTestApp({ sim: { time_scale: TIME_SCALE }, sequences: { bag_root: bagRoot } });
    let pid = 0;
    try {
      pid = await startLongSequence(server, { bag_path: 'closed-run' });
      assert.ok(processExists(pid));
      await sleep(100);
    } finally {
      await server.close();
    }
    assertProcessGone(pid);
    await assertValidBag(path.join(bagRoot, 'closed-run'));
  });

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`${signal} to the command line server leaves no runner process or group, and the bag is closed`, async () => {
      const settings = await writeSettings({ sim: { time_scale: TIME_SCALE }, sequences: { bag_root: bagRoot } });
      const cli = runServerCli(['--settings', settings.file, '--port', '0']);
      let pid = 0;
      try {
        const base = await listeningUrl(cli, 30_000);
        const folder = `${signal.toLowerCase()}-run`;
        pid = await startLongSequence(base, { bag_path: folder });
        assert.ok(processExists(pid));
        await sleep(100);
        cli.child.kill(signal);
        assert.equal(await cli.exited, 0, cli.err());
        assertProcessGone(pid);
        assert.match(cli.out(), new RegExp(`armgate: ${signal}, shutting down`));
        await assertValidBag(path.join(bagRoot, folder));
      } finally {
        if (cli.child.exitCode === null) cli.child.kill('SIGKILL');
        await cli.exited;
        if (pid > 0 && processExists(-pid)) process.kill(-pid, 'SIGKILL');
        await settings.cleanup();
      }
      assert.deepEqual((await readdir(bagRoot)).includes(`${signal.toLowerCase()}-run`), true);
    });
  }
});
