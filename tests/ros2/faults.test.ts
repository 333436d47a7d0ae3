/**
 * armgate on ros2 when the stack is not there, goes away, comes back, or answers late or never, over
 * real DDS (the test stack of tests/ros/stack, faults set through its stdin). Nothing may hang: every
 * request answers within its timeouts, goals in flight answer, and armgate recovers without a restart.
 * Run by `npm run test:ros2`.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { assertProcessGone } from '../support/live.ts';
import { assertNear, call, detailOf, jointState, type MotionBody, OTHER, sleep, WORK } from '../support/rcl-checks.ts';
import { startRos2Armgate, type Ros2Armgate } from './support/armgate.ts';
import { requireRos2, TestStack, useDomain } from './support/stack.ts';
import { PROJECT_ROOT } from '../support/server.ts';

requireRos2();
useDomain(1);

/** Repeats `attempt` until it returns true or `limitMs` passes; returns whether it did. */
async function eventually(attempt: () => Promise<boolean>, limitMs: number): Promise<boolean> {
  for (const end = Date.now() + limitMs; Date.now() < end; await sleep(200)) if (await attempt()) return true;
  return false;
}

/** armgate's environment with tests/support/fault-hook.mjs preloaded: SIGUSR2 makes it throw from a timer. */
const FAULT_ENV = {
  NODE_OPTIONS:
    `${process.env.NODE_OPTIONS ?? ''} --import=${pathToFileURL(path.join(PROJECT_ROOT, 'tests/support/fault-hook.mjs')).href}`.trim(),
};

/** Sends SIGUSR2 to an armgate started with {@link FAULT_ENV}; its exit code and its last log line (the exit's). */
async function fault(armgate: Ros2Armgate): Promise<{ code: number | null; exit: Record<string, unknown> }> {
  armgate.run.child.kill('SIGUSR2');
  // Its own way out, not close()'s SIGTERM.
  const code = await armgate.run.exited;
  await armgate.close();
  const lines = armgate.run
    .out()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  const fatal = lines.filter((line) => line.level === 'fatal');
  assert.equal(fatal.length, 1, armgate.run.out());
  assert.match(String(fatal[0]?.msg), /^uncaught exception/);
  return { code, exit: lines.find((line) => line.msg === 'exiting after a fault') ?? {} };
}

/** A request timed: its status, its detail and how long it took. */
async function timed(url: string, route: string, body?: unknown) {
  const started = performance.now();
  const reply = await call<MotionBody>(url, route, body);
  return { ...reply, detail: detailOf(reply), ms: performance.now() - started };
}

describe('armgate on ros2 over real DDS: a stack that is absent, killed, restarted, late or silent', () => {
  const stack = new TestStack();
  let armgate: Ros2Armgate | undefined;
  after(async () => {
    await armgate?.close();
    await stack.stop();
  });

  it('ends at once on SIGTERM with the stack absent (the shutdown does not wait server_wait_s for the stop service)', async () => {
    const alone = await startRos2Armgate();
    const started = performance.now();
    const code = await alone.close('SIGTERM');
    const ms = performance.now() - started;
    assert.equal(code, 0);
    // server_wait_s is 5 s: waiting for the absent stop service took that long before.
    assert.ok(ms < 2500, `exited ${Math.round(ms)} ms after SIGTERM`);
  });

  it('exits 70 after a fault with the stack absent: the stop is given up after its deadline, not server_wait_s', async () => {
    const alone = await startRos2Armgate({}, FAULT_ENV);
    const { code, exit } = await fault(alone);
    assert.equal(code, 70, alone.run.err());
    // The stop service is not there: the stop waits server_wait_s (5 s) for it, the way out 2 s.
    assert.deepEqual({ stop: exit.stop, close: exit.close }, { stop: 'not done within 2000 ms', close: 'done' });
  });

  it('starts without the stack and answers 503 naming each missing interface, then works once the stack appears', async () => {
    armgate = await startRos2Armgate();
    const { url } = armgate;
    const joints = await timed(url, '/robot/joint_states');
    assert.equal(joints.status, 503, joints.detail);
    assert.match(joints.detail, /\/joint_states/);
    const pose = await timed(url, '/robot/pose');
    assert.equal(pose.status, 503, pose.detail);
    const positions = await timed(url, '/robot/positions');
    assert.equal(positions.status, 503, positions.detail);
    assert.match(positions.detail, /move_group/);
    const move = await timed(url, '/robot/move/joints', { joints: WORK, speed: 0.5 });
    assert.equal(move.status, 503, move.detail);
    assert.match(move.detail, /cobot\/move_to_joints/);
    assert.ok(move.ms < 8000, `answered in ${move.ms} ms (server_wait_s 5)`);

    await stack.start();
    assert.ok(
      await eventually(async () => (await call(url, '/robot/joint_states')).status === 200, 15_000),
      'joint states once the stack is up',
    );
    assert.equal((await call(url, '/robot/positions')).status, 200, 'positions once the stack is up');
    assert.equal((await call(url, '/robot/pose')).status, 200, 'pose once the stack is up');
    const moved = await timed(url, '/robot/move/joints', { joints: WORK, speed: 0.5 });
    assert.equal(moved.status, 200, moved.detail);
    assert.equal(moved.body.success, true, moved.body.message);
  });

  it('answers a move whose stack is killed mid-goal, and recovers when the stack is back, without a restart', async () => {
    assert.ok(armgate, 'started by the test before');
    const { url } = armgate;
    const move = timed(url, '/robot/move/joints', { joints: OTHER, speed: 0.05 });
    await sleep(600);
    await stack.stop('SIGKILL');
    const answered = await move;
    assert.ok(answered.ms < 20_000, `the move answered in ${answered.ms} ms`);
    assert.ok(
      answered.status === 503 || (answered.status === 200 && answered.body.success === false),
      `a move whose stack died does not succeed: ${answered.status} ${answered.detail}`,
    );
    const gone = await timed(url, '/robot/move/joints', { joints: WORK, speed: 0.5 });
    assert.equal(gone.status, 503, `with the stack gone: ${gone.detail}`);

    await stack.start();
    assert.ok(
      await eventually(async () => {
        const r = await call<MotionBody>(url, '/robot/move/joints', { joints: WORK, speed: 0.5 });
        return r.status === 200 && r.body.success;
      }, 20_000),
      'moves again once the stack is back',
    );
    assertNear((await jointState(url)).position, WORK, 2e-3, 'at work');
  });

  it('answers a waited trajectory whose controller dies mid-goal', async () => {
    assert.ok(armgate);
    const { url } = armgate;
    const start = (await jointState(url)).position;
    const waited = timed(url, '/trajectory/send', {
      points: [{ positions: start.map((q, i) => (i === 0 ? q + 0.3 : q)), time_from_start: 5 }],
      wait: true,
    });
    await sleep(700);
    await stack.stop('SIGKILL');
    const answer = await waited;
    assert.ok(answer.ms < 20_000, `answered in ${answer.ms} ms`);
    assert.ok(answer.status === 200 || answer.status === 503, `${answer.status} ${answer.detail}`);
    if (answer.status === 200) assert.notEqual((answer.body as { outcome?: string }).outcome, 'finished');
    await stack.start();
    assert.ok(
      await eventually(async () => (await call(url, '/robot/joint_states')).status === 200, 15_000),
      'joint states again',
    );
  });

  it('answers 503 after its timeouts when services are silent or late, and success false when goals abort or are rejected', async () => {
    assert.ok(armgate);
    const { url } = armgate;
    await stack.command({ cmd: 'fault', iface: 'compute_ik', mode: 'silent' });
    const ik = await timed(url, '/robot/ik', { x: 0.4, y: 0, z: 0.6, a: 0, b: Math.PI, c: 0 });
    assert.equal(ik.status, 503, ik.detail);
    assert.match(ik.detail, /compute_ik/);
    assert.ok(ik.ms < 6000, `ik answered in ${ik.ms} ms (ik_s 1 + fk_s 2)`);

    await stack.command({ cmd: 'fault', iface: 'compute_fk', mode: 'late', delay_s: 4 });
    const pose = await timed(url, '/robot/pose');
    assert.equal(pose.status, 503, pose.detail);
    assert.match(pose.detail, /compute_fk/);
    assert.ok(pose.ms < 4000, `pose answered in ${pose.ms} ms (fk_s 2)`);
    await stack.command({ cmd: 'clear' });
    await sleep(4500); // the late answer arrives meanwhile and must be ignored
    assert.equal((await call(url, '/robot/pose')).status, 200, 'FK answers again');

    await stack.command({ cmd: 'fault', iface: 'move_to_joints', mode: 'abort' });
    const aborted = await timed(url, '/robot/move/joints', { joints: OTHER, speed: 0.5 });
    assert.equal(aborted.status, 200, aborted.detail);
    assert.equal(aborted.body.success, false, aborted.body.message);
    await stack.command({ cmd: 'fault', iface: 'move_to_joints', mode: 'reject' });
    const rejected = await timed(url, '/robot/move/joints', { joints: OTHER, speed: 0.5 });
    assert.equal(rejected.status, 200, rejected.detail);
    assert.equal(rejected.body.success, false, rejected.body.message);
    await stack.command({ cmd: 'clear' });
    const moved = await timed(url, '/robot/move/joints', { joints: OTHER, speed: 0.5 });
    assert.equal(moved.body.success, true, moved.body.message);
    await call(url, '/robot/move/named', { name: 'work', speed: 0.5 });
  });

  it('shuts down at once with a goal in flight: the goal is cancelled on the stack, exit 0, no process left', async () => {
    assert.ok(armgate);
    const { url, run } = armgate;
    const from = stack.events.length;
    const move = call(url, '/robot/move/joints', { joints: OTHER, speed: 0.05 }).catch(() => undefined);
    await stack.waitFor((e) => e.event === 'goal', 5000, from);
    const started = performance.now();
    const pid = run.child.pid ?? 0;
    const code = await armgate.close('SIGTERM');
    armgate = undefined;
    assert.equal(code, 0);
    assert.ok(performance.now() - started < 5000, `exited in ${performance.now() - started} ms`);
    await move;
    await stack.waitFor((e) => e.event === 'cancel', 3000, from);
    assertProcessGone(pid);
    await sleep(300);
    assert.equal((await stack.state()).moving, false, 'the arm is at rest');
  });

  it('brings the arm to rest after a fault: the controller goal in flight is cancelled, not left to run on', async () => {
    await armgate?.close();
    const faulty = await startRos2Armgate({}, FAULT_ENV);
    armgate = faulty;
    const { url } = faulty;
    const pid = faulty.run.child.pid ?? 0;
    assert.ok(await eventually(async () => (await call(url, '/robot/joint_states')).status === 200, 15_000));
    const start = (await jointState(url)).position;
    const target = start.map((q, i) => (i === 0 ? q + 0.6 : q));
    const from = stack.events.length;
    // A FollowJointTrajectory goal of 30 s: without the stop on the way out, the controller would run it to the end
    // with armgate gone (a goal is not cancelled when its client dies).
    const sent = call(url, '/trajectory/send', { points: [{ positions: target, time_from_start: 30 }], wait: true });
    void sent.catch(() => undefined);
    await stack.waitFor((e) => e.event === 'goal', 10_000, from);
    assert.ok(await eventually(async () => (await stack.state()).moving, 10_000), 'the arm moves');
    const { code, exit } = await fault(faulty);
    armgate = undefined;
    assert.equal(code, 70, faulty.run.err());
    assert.equal(exit.stop, 'done', JSON.stringify(exit));
    assertProcessGone(pid);
    // The goal ends on the controller (cancelled by the stop, or ended by its hold point), not 30 s from now.
    await stack.waitFor((e) => e.event === 'cancel' || e.event === 'result', 5000, from);
    assert.ok(await eventually(async () => !(await stack.state()).moving, 10_000), 'the arm comes to rest');
    const rest = (await stack.state()).positions;
    await sleep(1000);
    const later = await stack.state();
    assert.equal(later.moving, false, 'still at rest');
    assertNear(later.positions, rest, 1e-3, 'holding after the fault');
    assert.ok(
      (rest[0] ?? 0) < (target[0] ?? 0) - 0.1,
      `stopped short of the 30 s goal's end: ${rest[0]} vs ${target[0]}`,
    );
  });
});
