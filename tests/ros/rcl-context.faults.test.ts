import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadRclnodejs } from '../../lib/ros/rcl-load.ts';
import { call, detailOf, jointState, type MotionBody, OTHER, sleep, assertNear } from '../support/rcl-checks.ts';
import { type RclTestServer, startRclTestServer } from '../support/rcl-server.ts';
import { PROJECT_ROOT, writeSettings } from '../support/server.ts';
import { nodeEntry } from '../support/node-entry.ts';

// The rclnodejs context over its in-process STAND-IN (tests/support/rclnodejs-standin.ts, backed
// by the simulator; not ROS 2: no DDS, QoS, typesupport or serialization): the motion timeout,
// interface types that are not installed, and start-up without ROS 2. The sequence runner on ros2
// is in tests/ros/sequence-runner.test.ts.

describe('rclnodejs context: the motion timeout cancels goals and named motions', () => {
  let t: RclTestServer;
  before(async () => {
    t = await startRclTestServer({ timeouts: { server_wait_s: 0.3, fk_s: 0.3, motion_s: 0.4 } });
  });
  after(() => t.close());

  it('cancels an action goal that outlasts timeouts.motion_s: 200 success false saying so, and the arm holds', async () => {
    const reply = await call<MotionBody>(t.url, '/robot/move/joints', { joints: OTHER, speed: 0.05 });
    assert.deepEqual(reply.body, { success: false, message: 'timed out after 0.4 s: the motion was cancelled' });
    assert.deepEqual(t.standin.cancels, ['cobot/move_to_joints']);
    await sleep(1500);
    const a = (await jointState(t.url)).position;
    await sleep(200);
    assertNear((await jointState(t.url)).position, a, 1e-4, 'holding');
  });

  it('stops a named motion that outlasts it through the stop service (a service call cannot be cancelled)', async () => {
    const reply = await call<MotionBody>(t.url, '/robot/move/named', { name: 'home', speed: 0.05 });
    assert.deepEqual(reply.body, { success: false, message: 'timed out after 0.4 s: the motion was cancelled' });
    assert.equal(t.standin.requests.at(-1)?.name, 'cobot/stop');
    const log = (await call<{ lines: string[] }>(t.url, '/trajectory/logs?n=50')).body.lines.join('\n');
    assert.match(log, /call of cobot\/move_to_named abandoned: timed out/);
  });
});

describe('rclnodejs context: a stop does not wait for the stack to confirm its cancels', () => {
  let t: RclTestServer;
  before(async () => {
    t = await startRclTestServer({ timeouts: { server_wait_s: 5, fk_s: 0.3 } });
  });
  after(() => t.close());

  it("answers with cobot/stop's answer while the cancel is unconfirmed; no new goal goes out until it is; the stopped move answers then", async () => {
    // The action server takes 2 s to take a cancel (a loaded stack): the stop's answer does not wait for it.
    t.standin.knobs.cancelResponseDelayMs = 2000;
    try {
      let moveAnswered = false;
      const move = call<MotionBody>(t.url, '/robot/move/joints', { joints: OTHER, speed: 0.05 }).finally(() => {
        moveAnswered = true;
      });
      await sleep(300);
      const stop = await call<{ planner_stopped: boolean; hold_published: boolean; message: string }>(
        t.url,
        '/stop',
        {},
      );
      assert.equal(stop.status, 200);
      assert.equal(stop.body.planner_stopped, true, stop.body.message);
      assert.equal(stop.body.hold_published, true, stop.body.message);
      assert.equal(moveAnswered, false, 'the stopped move answers once its cancel is confirmed, after the stop');
      assert.deepEqual(t.standin.cancels, ['cobot/move_to_joints'], 'the cancel went out before the answer');
      // Until the stack confirms the cancel, no new goal goes out: a move is a 409 that says why.
      const busy = await fetch(`${t.url}/robot/move/joints`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ joints: OTHER, speed: 0.5 }),
      });
      assert.equal(busy.status, 409);
      assert.ok(Number(busy.headers.get('retry-after')) >= 1, 'a Retry-After, as while the arm decelerates');
      const busyBody = { status: busy.status, body: await busy.json() };
      assert.match(detailOf(busyBody), /a stopped motion goal is being cancelled on the stack \(not confirmed yet\)/);
      assert.equal(moveAnswered, false, 'the cancel is still unconfirmed');
      const moved = await move;
      assert.deepEqual(moved.body, { success: false, message: 'stopped' });
      const log = (await call<{ lines: string[] }>(t.url, '/trajectory/logs?n=100')).body.lines.join('\n');
      assert.match(log, /stop timings ms: stop service answered [\d.]+/);
      assert.match(log, /stop timings ms: cancels of 1 goal\(s\) confirmed [\d.]+/);
    } finally {
      t.standin.knobs.cancelResponseDelayMs = 0;
    }
    await sleep(1000);
    const again = await call<MotionBody>(t.url, '/robot/move/named', { name: 'work', speed: 0.5 });
    assert.equal(again.body.success, true, 'the arm is free once the cancel is confirmed');
  });
});

describe('rclnodejs context: an interface type that is not installed', () => {
  let t: RclTestServer;
  before(async () => {
    t = await startRclTestServer({
      timeouts: { server_wait_s: 0.3, fk_s: 0.3 },
      prepare: (s) => s.knobs.missingTypes.add('iiwa_msgs/action/MoveToPose'),
    });
  });
  after(() => t.close());

  it('answers 503 naming the action and its type; everything else still works', async () => {
    const reply = await call(t.url, '/robot/move/pose', { x: 0.5, y: 0, z: 0.5, b: Math.PI });
    assert.equal(reply.status, 503);
    assert.match(
      detailOf(reply),
      /cobot\/move_to_pose: cannot create a iiwa_msgs\/action\/MoveToPose action client: The message required does not exist/,
    );
    const moved = await call<MotionBody>(t.url, '/robot/move/named', { name: 'work', speed: 0.5 });
    assert.equal(moved.body.success, true);
  });
});

describe("start-up with robot.backend 'ros2'", () => {
  it('stops with one message saying how to get ROS 2 and rclnodejs when ROS 2 is not sourced', async () => {
    const s = await writeSettings({ robot: { backend: 'ros2' } });
    try {
      const env: Record<string, string> = {};
      for (const [k, v] of Object.entries(process.env))
        if (v !== undefined && k !== 'ROS_DISTRO' && k !== 'AMENT_PREFIX_PATH') env[k] = v;
      const server = nodeEntry(path.join(PROJECT_ROOT, 'server.ts'));
      const child = spawn(process.execPath, [...server.execArgv, server.file, '--settings', s.file, '--port', '0'], {
        cwd: PROJECT_ROOT,
        env: { ...env, ARMGATE_TOKEN: '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
      });
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      assert.equal(code, 1);
      const lines = stderr.trim().split('\n');
      assert.equal(lines.length, 1, stderr);
      assert.match(stderr, /ROS_DISTRO and AMENT_PREFIX_PATH are not set/);
      assert.match(stderr, /source \/opt\/ros\/<distro>\/setup\.bash/);
      // Both ways to get ROS 2 and rclnodejs: the offline build of the project, or an installed ROS 2 then npm install.
      assert.match(stderr, /run `npm run ros2:build` in .*then `\. scripts\/ros2\/env\.sh` in this shell/);
      assert.match(stderr, /source \/opt\/ros\/<distro>\/setup\.bash and run `npm install`/);
    } finally {
      await s.cleanup();
    }
  });

  it('loads the module when ROS 2 is sourced, and says why when it cannot', async () => {
    const env = { ROS_DISTRO: 'jazzy', AMENT_PREFIX_PATH: '/opt/ros/jazzy' };
    const fake = { init: async () => undefined, shutdown: () => undefined, Node: class {}, ActionClient: class {} };
    const loaded = await loadRclnodejs(env, async () => ({ default: fake }));
    assert.equal(loaded.ok && loaded.value, fake);
    const broken = await loadRclnodejs(env, async () => {
      throw new Error("Cannot find package 'rclnodejs' imported from armgate\nmore");
    });
    assert.equal(broken.ok, false);
    if (!broken.ok)
      assert.match(
        broken.error,
        /rclnodejs cannot be loaded \(Cannot find package 'rclnodejs' imported from armgate\); to get both here, run `npm run ros2:build`/,
      );
    const odd = await loadRclnodejs(env, async () => ({ default: {} }));
    assert.equal(odd.ok, false);
    if (!odd.ok) assert.match(odd.error, /lacks init\/Node\/ActionClient/);
  });
});
