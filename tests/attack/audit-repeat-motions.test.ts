/**
 * Attacks on the audit trail's repeats (lib/audit/quiet.ts): a call alike the caller's last one, nothing changed since,
 * is counted on the refusals' file instead of written on the trail. A call that moved the arm must never be one: a
 * trajectory sent again replays its motion, a move cut short by a stop and sent again moves the arm on, a jog command
 * sent again after a stop starts a new jog, a resume after a pause of the motion it resumed before moves it on. Each of
 * them is a line of its own on the trail's file.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createTestApp, type TestApp } from '../support/server.ts';

const ADMIN = 'atk4-admin-token-1a2b3c4d5e';
const WORK = [0, 0.6, 0, -1.2, 0, 1.0, 0];

type Line = { operation: string; why?: string; more_like_it?: number; outcome: { status: number; success: boolean } };

describe('the audit trail: a call that moved the arm is never counted as a repeat', () => {
  let app: TestApp;
  let dir: string;
  let file: string;
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'armgate-atk4-repeats-'));
    file = path.join(dir, 'audit.jsonl');
    app = await createTestApp({ web: { token: ADMIN }, audit: { path: file, max_bytes: 1 << 20, reads: false } });
  });
  after(async () => {
    await app.close();
    await rm(dir, { recursive: true, force: true });
  });

  const call = (method: string, route: string, body?: unknown) =>
    app.request(route, {
      method,
      headers: {
        authorization: `Bearer ${ADMIN}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const state = async () =>
    (await (await call('GET', '/robot/joint_states')).json()) as { position: number[]; velocity: number[] };
  const joints = async () => (await state()).position;
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  /** Waits until a motion may start again (a trajectory or a stop's braking over): at rest, a dry run answers 200. */
  const atRest = async () => {
    for (let tries = 0; tries < 400; tries++) {
      const probe = await call('POST', '/robot/move/joints', { joints: WORK, dry_run: true });
      await probe.body?.cancel();
      if (probe.status === 200 && (await state()).velocity.every((v) => Math.abs(v) < 1e-6)) return;
      await sleep(50);
    }
    assert.fail('the arm came to rest');
  };
  /**
   * Waits until joint `j` is `by` off `from` (a motion under way has moved the arm); returns how far it got. Bounded by
   * tries, not time: on a loaded machine a motion may start a while after its request was sent.
   */
  const movedOff = async (j: number, from: number, by: number) => {
    let now = from;
    for (let tries = 0; tries < 400 && Math.abs(now - from) < by; tries++) {
      await sleep(10);
      now = (await joints())[j] ?? 0;
    }
    return Math.abs(now - from);
  };
  /** The trail's lines of `operation` (effects: no `why`), after a flush. */
  const effects = async (operation: string) => {
    await app.services.audit?.flush();
    const text = await readFile(file, 'utf8');
    return text
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Line)
      .filter((l) => l.operation === operation && l.why === undefined);
  };

  it('the same trajectory sent three times (without wait), replayed each time, is three lines of the trail', async () => {
    const trajectory = {
      points: [
        { positions: [0.3, 0, 0, -1.57, 0, 1.57, 0], time_from_start: 1 },
        { positions: [0, 0, 0, -1.57, 0, 1.57, 0], time_from_start: 2 },
      ],
    };
    for (let k = 0; k < 3; k++) {
      await atRest();
      const sent = await call('POST', '/trajectory/send', trajectory);
      const answer = (await sent.json()) as { status?: string };
      assert.equal(sent.status, 200, `trajectory ${k}: ${JSON.stringify(answer)}`);
      assert.equal(answer.status, 'sent', `trajectory ${k} was sent`);
      // The replay: joint1 swings out towards 0.3 again.
      let reached = 0;
      for (let tries = 0; tries < 200 && reached <= 0.1; tries++) {
        reached = Math.max(reached, (await joints())[0] ?? 0);
        await sleep(10);
      }
      assert.ok(reached > 0.1, `trajectory ${k} moved the arm (joint1 reached ${reached})`);
    }
    await atRest();
    const lines = (await effects('send_trajectory')).filter((l) => l.outcome.status === 200);
    assert.equal(lines.length, 3, 'each replay of the trajectory is a line of the trail');
  });

  it('a move cut short by a stop, sent again and cut short again, moved the arm both times: two lines', async () => {
    const before = (await effects('move_to_joints')).length;
    await atRest();
    const where: number[][] = [];
    for (let k = 0; k < 2; k++) {
      const from = (await joints())[1] ?? 0;
      const moving = call('POST', '/robot/move/joints', { joints: WORK, speed: 0.05 });
      // The stop comes once the move has moved the arm (not after a fixed time: on a loaded machine the move may not
      // have started by then, and a stop before it takes the arm cuts nothing short).
      const off = await movedOff(1, from, 1e-4);
      assert.ok(off >= 1e-4, `move ${k} moved joint2 before the stop (${off})`);
      const stopped = await call('POST', '/stop');
      assert.equal(stopped.status, 200, `stop ${k}: ${await stopped.text()}`);
      const moved = await moving;
      const answer = (await moved.json()) as { success: boolean };
      assert.equal(moved.status, 200, `move ${k}: ${JSON.stringify(answer)}`);
      assert.equal(answer.success, false, `move ${k} was cut short`);
      await atRest();
      where.push(await joints());
    }
    assert.notDeepEqual(where[0], where[1], 'the second move moved the arm');
    assert.equal((await effects('move_to_joints')).length - before, 2, 'both moves are lines of the trail');
  });

  it('a jog command sent again after a stop ended its jog starts a new jog: a line each', async () => {
    const before = (await effects('jog_command')).length;
    await atRest();
    const command = { joints: [0.4, 0, 0, 0, 0, 0, 0], ttl_ms: 500 };
    const where: number[] = [];
    for (let k = 0; k < 2; k++) {
      const start = (await joints())[0] ?? 0;
      const jogged = await call('POST', '/robot/jog', command);
      assert.equal(jogged.status, 200, `jog ${k}: ${await jogged.text()}`);
      let now = start;
      for (let tries = 0; tries < 200 && now - start < 0.02; tries++) {
        now = (await joints())[0] ?? 0;
        await sleep(10);
      }
      const stopped = await call('POST', '/stop');
      assert.equal(stopped.status, 200, `stop ${k}: ${await stopped.text()}`);
      await atRest();
      where.push(now - start);
    }
    assert.ok(
      where.every((d) => d >= 0.02),
      `each jog moved joint1 (${where.join(', ')})`,
    );
    assert.equal((await effects('jog_command')).length - before, 2, 'both jogs are lines of the trail');
  });

  it('a motion paused and resumed three times: each pause and each resume (it moved the arm on) is a line', async () => {
    const before = { pause: (await effects('pause')).length, resume: (await effects('resume')).length };
    await atRest();
    const from = (await joints())[1] ?? 0;
    const moving = call('POST', '/robot/move/joints', { joints: [0, 0.9, 0, -1.0, 0, 1.0, 0], speed: 0.05 });
    const moved: number[] = [];
    try {
      // The first pause comes once the motion has moved the arm (on a loaded machine it may start late).
      const off = await movedOff(1, from, 1e-4);
      assert.ok(off >= 1e-4, `the motion moved joint2 before the first pause (${off})`);
      for (let k = 0; k < 3; k++) {
        await sleep(200);
        const paused = await call('POST', '/robot/pause');
        const pausedAnswer = (await paused.json()) as { paused?: boolean };
        assert.equal(paused.status, 200, `pause ${k}: ${JSON.stringify(pausedAnswer)}`);
        assert.equal(pausedAnswer.paused, true, `pause ${k} paused the motion: ${JSON.stringify(pausedAnswer)}`);
        const at = (await joints())[1] ?? 0;
        const resumed = await call('POST', '/robot/resume');
        const resumedAnswer = (await resumed.json()) as { resumed?: boolean };
        assert.equal(resumed.status, 200, `resume ${k}: ${JSON.stringify(resumedAnswer)}`);
        assert.equal(resumedAnswer.resumed, true, `resume ${k} resumed it`);
        let now = at;
        for (let tries = 0; tries < 200 && Math.abs(now - at) < 0.005; tries++) {
          await sleep(10);
          now = (await joints())[1] ?? 0;
        }
        moved.push(Math.abs(now - at));
      }
    } finally {
      await (await call('POST', '/stop')).body?.cancel();
      await (await moving).body?.cancel();
    }
    assert.ok(
      moved.every((d) => d >= 0.005),
      `each resume moved the arm on (${moved.join(', ')})`,
    );
    assert.equal((await effects('pause')).length - before.pause, 3, 'each pause is a line of the trail');
    assert.equal((await effects('resume')).length - before.resume, 3, 'each resume is a line of the trail');
  });
});
