/**
 * Pause of a sequence on robot.backend ros2, where the runner sends its goals from its own node
 * (issue 24): the runner acknowledges the pause only once it has applied it, and the pause answers
 * only after every runner did. Through the live server over the rclnodejs stand-in (the real runner
 * process, the real supervisor): a pause while the runner's next goal is on its way to a server that
 * answers goal requests late (the arm at rest: between two goals); a runner that does not answer
 * (SIGSTOP) is stopped with everything else and the pause answers 503; a stop while the pause waits
 * for the runner ends both at once.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  assertNear,
  call,
  detailOf,
  jointState,
  OTHER,
  sleep,
  WORK,
  finished,
  type SequenceStatus,
} from '../support/rcl-checks.ts';
import { processExists } from '../support/live.ts';
import { type RclTestServer, startRclTestServer } from '../support/rcl-server.ts';

async function start(url: string, config: object, iterations = 1): Promise<number> {
  const form = new FormData();
  form.set('config', new Blob([JSON.stringify(config)]), 'config.json');
  form.set('n_iterations', String(iterations));
  form.set('delay_between_iterations', '0');
  const res = await fetch(`${url}/sequences/start`, { method: 'POST', body: form });
  const text = await res.text();
  assert.equal(res.status, 200, text);
  return (JSON.parse(text) as { pid: number }).pid;
}

/** Leaves no runner behind whatever a test did to it (SIGSTOP included). */
function killIfAlive(pid: number): void {
  if (processExists(pid)) process.kill(pid, 'SIGKILL');
}

/** The next move is accepted and succeeds (nothing stayed paused or held). */
async function assertNextMoveGoes(url: string): Promise<void> {
  const moved = await call<{ success: boolean; message: string }>(url, '/robot/move/joints', {
    joints: WORK,
    speed: 0.5,
  });
  assert.equal(moved.status, 200, detailOf(moved));
  assert.equal(moved.body.success, true, moved.body.message);
}

describe('pause of a sequence on ros2: the runner confirms it before the pause answers', () => {
  let t: RclTestServer;
  let bagRoot: string;
  before(async () => {
    bagRoot = await mkdtemp(path.join(tmpdir(), 'armgate-rcl-pause-'));
    t = await startRclTestServer({
      sim: { sim: { time_scale: 5 }, sequences: { bag_root: bagRoot } },
      timeouts: { server_wait_s: 1 },
    });
  });
  after(async () => {
    await t.close();
    await rm(bagRoot, { recursive: true, force: true });
  });

  /** Waits until the arm rests (no activity on the simulator behind the stand-in). */
  /** A runner whose first goal moves the arm, then stopped by SIGSTOP (it confirms nothing any more); its pid. */
  async function frozenRunner(): Promise<number> {
    await atRest();
    const pid = await start(t.url, { home: { joints: OTHER, speed: 0.02 }, waypoints: [] }, 5);
    try {
      for (let i = 0; i < 200 && !t.sim.armActivity(); i++) await sleep(25);
      assert.ok(t.sim.armActivity(), "the runner's goal moves the arm");
      process.kill(pid, 'SIGSTOP');
      return pid;
    } catch (e) {
      killIfAlive(pid);
      throw e;
    }
  }

  async function atRest(limitMs = 5000): Promise<void> {
    for (const end = Date.now() + limitMs; t.sim.armActivity() && Date.now() < end; ) await sleep(25);
    assert.equal(t.sim.armActivity(), undefined, 'the arm is at rest');
  }

  it('between two goals (the next one on its way to the server): answers once its cancel is confirmed; nothing executes after the answer; resume ends the run 0', async () => {
    await atRest();
    const sent = t.standin.requests.length;
    const executed = t.standin.executions.length;
    const cancels = t.standin.cancels.length;
    // Each goal request is answered 600 ms late: the runner's next goal is on its way while the arm rests.
    t.standin.knobs.goalResponseDelayMs = 600;
    try {
      await start(t.url, { home: { joints: WORK, speed: 0.5 }, waypoints: [{ joints: OTHER, speed: 0.5 }] });
      // Home was reached and the goal of waypoint 1 sent: the runner is between two goals. Waited for as long as home
      // takes (on a loaded machine the simulator runs behind the clock; the limit is a hang guard, not a bound).
      for (const end = Date.now() + 60_000; t.standin.requests.length < sent + 2 && Date.now() < end; ) await sleep(5);
      assert.equal(t.standin.requests.length, sent + 2, 'the goal of waypoint 1 went out');
      assert.equal(t.sim.armActivity(), undefined, 'the arm rests between the two goals');
      const asked = Date.now();
      const paused = await call<{ paused: boolean; message: string }>(t.url, '/robot/pause', {});
      const answeredAt = Date.now();
      // What the runner had cancelled when the pause answered (the stand-in records a cancel as it is asked).
      const cancelledByAnswer = t.standin.cancels.slice(cancels);
      assert.equal(paused.status, 200, detailOf(paused));
      assert.equal(paused.body.paused, true, paused.body.message);
      const held = (await jointState(t.url)).position;
      await sleep(1200);
      const late = t.standin.executions.slice(executed).filter((e) => e.atMs > answeredAt);
      assert.deepEqual(late, [], 'no goal began to execute after the pause answered');
      // The pause waited for the late goal's cancel: the runner can cancel waypoint 1's goal only once the goal's answer
      // came (600 ms after its request), and had when the pause answered; an order, however long the machine's load
      // made the wait.
      assert.deepEqual(
        cancelledByAnswer,
        ['cobot/move_to_joints'],
        `the pause answered ${answeredAt - asked} ms after it was asked, before the runner cancelled waypoint 1's goal`,
      );
      assert.deepEqual(
        t.standin.cancels.slice(cancels),
        ['cobot/move_to_joints'],
        "the runner cancelled waypoint 1's goal",
      );
      assert.equal(t.standin.requests.length, sent + 2, 'no goal was sent while paused');
      assert.equal(t.sim.armActivity(), undefined, 'the arm rests while paused');
      assertNear((await jointState(t.url)).position, held, 1e-4, 'it holds while paused');
      assert.equal((await call<SequenceStatus>(t.url, '/sequences/status')).body.status, 'paused');
    } finally {
      t.standin.knobs.goalResponseDelayMs = 0;
    }
    const resumed = await call(t.url, '/robot/resume', {});
    assert.equal(resumed.status, 200, detailOf(resumed));
    const { status, logs } = await finished(t.url);
    assert.equal(status.returncode, 0, logs);
    assert.deepEqual(
      t.standin.requests.slice(sent).map((r) => r.name),
      ['cobot/move_to_joints', 'cobot/move_to_joints', 'cobot/move_to_joints', 'cobot/move_to_joints'],
      'home, waypoint 1 (paused), waypoint 1 again, home',
    );
    assertNear((await jointState(t.url)).position, WORK, 1e-3, 'the run ended at home');
  });

  it('a runner that does not confirm the pause (SIGSTOP) within its bound: everything is stopped, the pause answers 503, nothing stays paused', async () => {
    const pid = await frozenRunner();
    try {
      const asked = Date.now();
      const paused = await call(t.url, '/robot/pause', {});
      const tookMs = Date.now() - asked;
      assert.equal(paused.status, 503, detailOf(paused));
      assert.match(
        detailOf(paused),
        new RegExp(`the sequence runner \\(pid ${pid}\\) did not confirm the pause within 3 s: everything was stopped`),
      );
      // Bounded by the server's own timeline, not by a wall-clock margin (the machine's load stretches the waits):
      // 3 s for the acknowledgement, then the stop's 3 s between SIGTERM and SIGKILL of the stopped runner (both
      // timers: never shorter), and the answer only once the runner is gone, nothing else after.
      assert.ok(tookMs >= 2900, `answered after ${tookMs} ms: before the acknowledgement's bound`);
      const status = (await call<SequenceStatus>(t.url, '/sequences/status')).body;
      const logs = (await call<{ lines: string[] }>(t.url, '/sequences/logs?n=200')).body.lines;
      assert.equal(status.status, 'finished', 'the run had ended when the pause answered');
      assert.notEqual(status.returncode, 0, 'the stopped run does not report success');
      const stampOf = (what: RegExp) => {
        const line = logs.find((l) => what.test(l));
        assert.ok(line, `the sequence log says ${what}:\n${logs.join('\n')}`);
        return Date.parse(line.slice(0, line.indexOf(' ')));
      };
      const killedAt = stampOf(/runner did not exit within 3 s of SIGTERM: SIGKILL$/);
      const exitedAt = stampOf(new RegExp(`runner ${pid} exited with code 137$`));
      assert.ok(
        killedAt - asked >= 5900,
        `SIGKILL ${killedAt - asked} ms after the pause: the 3 s bound and the 3 s grace`,
      );
      assert.ok(exitedAt >= killedAt, 'the runner exited after SIGKILL');
      assert.ok(
        asked + tookMs - exitedAt < 2000,
        `the pause answered ${asked + tookMs - exitedAt} ms after the runner's exit (${tookMs} ms in all)`,
      );
      assert.equal(processExists(pid), false, 'no runner process is left');
      await atRest(2000);
      const a = (await jointState(t.url)).position;
      await sleep(300);
      assertNear((await jointState(t.url)).position, a, 1e-4, 'the arm holds after the stop');
      const resumed = await call(t.url, '/robot/resume', {});
      assert.equal(resumed.status, 409, 'nothing is paused');
      await assertNextMoveGoes(t.url);
    } finally {
      killIfAlive(pid);
    }
  });

  it('a stop while the pause waits for the runner ends both at once', async () => {
    const pid = await frozenRunner();
    try {
      const askedAt = Date.now();
      const pausing = call<{ paused: boolean; message: string }>(t.url, '/robot/pause', {});
      let pauseAnsweredAt = 0;
      void pausing.then(() => {
        pauseAnsweredAt = Date.now();
      });
      await sleep(300);
      const stopAt = Date.now();
      const stopped = await call<{ sequence_stopped: boolean; message: string }>(t.url, '/stop', {});
      assert.equal(stopped.status, 200, detailOf(stopped));
      assert.equal(stopped.body.sequence_stopped, true, stopped.body.message);
      const paused = await pausing;
      assert.equal(paused.status, 200, detailOf(paused));
      assert.equal(paused.body.paused, false, paused.body.message);
      assert.match(paused.body.message, /a stop ended the motion/);
      // Ended by the stop at once, not by either bound a stop could otherwise end it after: the runner's acknowledgement
      // bound (a 3 s timer the server starts once the pause reached it) or the runner's exit (SIGKILL 3 s after the
      // stop reached it). Both come 3 s after the pause was asked at the soonest, however loaded the machine.
      assert.ok(
        pauseAnsweredAt - askedAt < 3000,
        `the pause answered ${pauseAnsweredAt - askedAt} ms after it was asked, ${pauseAnsweredAt - stopAt} ms after the stop`,
      );
      const { status, logs } = await finished(t.url);
      assert.equal(status.status, 'finished', logs);
      assert.equal(processExists(pid), false, 'no runner process is left');
      await atRest(2000);
      assert.equal((await call(t.url, '/robot/resume', {})).status, 409, 'nothing is paused');
      // The stop had the last word: the execution rate is the override's, the next move goes.
      await assertNextMoveGoes(t.url);
    } finally {
      killIfAlive(pid);
    }
  });
});
