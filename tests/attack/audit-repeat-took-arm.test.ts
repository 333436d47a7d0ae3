/**
 * Attacks on the audit trail's repeats (lib/audit/quiet.ts) after the rule was restated (a call that took the arm is
 * never a repeat, but a move to where its caller's last alike move left the arm): motions sent again in the ways the
 * rule could still miss, each through the app in memory on a clock the test steps (tests/support/stepped.ts). Every
 * call that moved the arm must be a line of the trail's file; the calls that moved nothing (refused while the arm was
 * held, a move to where the arm already is) are on the refusals' file.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { refusalsPath } from '../../lib/audit/trail.ts';
import type { SteppedClock } from '../../lib/clock.ts';
import { trailLines } from '../support/audit.ts';
import { maxDiff } from '../support/live.ts';
import { sequenceForm } from '../support/multipart.ts';
import { createSteppedApp, steppedUntilSettled, waitOnClock } from '../support/stepped.ts';
import type { TestApp } from '../support/server.ts';

const TOKENS = { ann: 'took-arm-ann-token-4f1c9e2a', bob: 'took-arm-bob-token-8d3b7a60' };
const X = [0.3, 0.3, 0, -1.3, 0, 1.3, 0];
const Y = [-0.3, 0.5, 0, -1.1, 0, 1.1, 0];

type Line = {
  principal: string;
  operation: string;
  why?: string;
  more_like_it?: number;
  input?: Record<string, unknown>;
  outcome: { status: number; success: boolean; message?: string };
};

describe('the audit trail: a call that took the arm is never a repeat', () => {
  let app: TestApp;
  let clock: SteppedClock;
  let dir: string;
  let file: string;
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'armgate-took-arm-'));
    file = path.join(dir, 'audit.jsonl');
    ({ app, clock } = await createSteppedApp({
      web: {
        token: 'took-arm-admin-token-0a9b8c7d',
        tokens: [
          { name: 'ann', token: TOKENS.ann, role: 'operate' },
          { name: 'bob', token: TOKENS.bob, role: 'operate' },
        ],
      },
      audit: { path: file, max_bytes: 1 << 20, reads: false },
    }));
  });
  after(async () => {
    await app.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** A request of `who`, not waited for. */
  const send = (who: keyof typeof TOKENS, method: string, route: string, body?: unknown) =>
    app.request(route, {
      method,
      headers: {
        authorization: `Bearer ${TOKENS[who]}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  /** Its answer, the clock stepped until it comes (a move answers at its goal, a pause at rest): status and body. */
  const answer = async (pending: Promise<Response>, what = 'the answer') => {
    const res = await steppedUntilSettled(clock, pending, what);
    const text = await res.text();
    return { status: res.status, body: (text === '' ? {} : JSON.parse(text)) as Record<string, unknown> };
  };
  const call = (who: keyof typeof TOKENS, method: string, route: string, body?: unknown) =>
    answer(send(who, method, route, body), `${who} ${method} ${route}`);
  const state = async () =>
    (await (await send('ann', 'GET', '/robot/joint_states')).json()) as { position: number[]; velocity: number[] };
  /** Until the arm rests and is free (a jog over, a stop's braking over). */
  const atRest = () =>
    waitOnClock(
      clock,
      'the arm at rest and free',
      async () => app.services.jog?.owner() === undefined && (await state()).velocity.every((v) => v === 0),
      (free) => free,
    );
  /** The lines of `operation` since `from` (a count of lines) on the trail's file (effects) or the refusals' file. */
  const lines = async (operation: string, refusals = false) => {
    await app.services.audit?.flush();
    return (await trailLines<Line>(refusals ? refusalsPath(file) : file)).filter((l) => l.operation === operation);
  };
  /** How many calls a set of lines stands for (a counted line's more_like_it). */
  const calls = (of: Line[]) => of.reduce((sum, l) => sum + (l.more_like_it ?? 1), 0);

  it('the same move from two tokens at once, to X, Y, X, Y: each round one moves the arm (a line), one is refused', async () => {
    const before = (await lines('move_to_joints')).length;
    const beforeRefused = await lines('move_to_joints', true);
    for (const target of [X, Y, X, Y]) {
      await atRest();
      const from = (await state()).position;
      const both = await Promise.all(
        (['ann', 'bob'] as const).map((who) => call(who, 'POST', '/robot/move/joints', { joints: target, speed: 1 })),
      );
      assert.deepEqual(both.map((r) => r.status).sort(), [200, 409], JSON.stringify(both));
      assert.equal(both.find((r) => r.status === 200)?.body.success, true, 'the move ran to its goal');
      assert.ok(maxDiff(from, target) > 0.1 && maxDiff((await state()).position, target) < 1e-3, 'it moved the arm');
    }
    const moved = (await lines('move_to_joints')).slice(before);
    assert.deepEqual(
      moved.map((l) => [l.outcome.status, l.outcome.success]),
      [
        [200, true],
        [200, true],
        [200, true],
        [200, true],
      ],
      'each move that moved the arm is a line',
    );
    const refused = (await lines('move_to_joints', true)).slice(beforeRefused.length);
    assert.equal(calls(refused.filter((l) => l.why === 'refused' && l.outcome.status === 409)), 4, 'the 409s');
    assert.ok(!refused.some((l) => l.why === 'repeat'), 'no move counted as a repeat');
  });

  it('the same move sent again while a pause holds the arm is refused; at its goal after the resume it moved nothing', async () => {
    await atRest();
    const start = (await state()).position;
    const target = maxDiff(start, X) > 0.1 ? X : Y;
    const before = (await lines('move_to_joints')).length;
    const beforeQuiet = (await lines('move_to_joints', true)).length;
    const moving = send('ann', 'POST', '/robot/move/joints', { joints: target, speed: 0.3 });
    await waitOnClock(clock, 'the arm moving', state, (s) => s.velocity.some((v) => v !== 0));
    assert.equal((await call('bob', 'POST', '/robot/pause')).body.paused, true, 'paused');
    const again = await call('ann', 'POST', '/robot/move/joints', { joints: target, speed: 0.3 });
    assert.equal(again.status, 409, 'the paused motion holds the arm');
    assert.equal((await call('bob', 'POST', '/robot/resume')).status, 200);
    const first = await answer(moving, 'the paused move');
    assert.equal(first.body.success, true, 'the paused move reached its goal');
    // At its goal: the same move again moved nothing (a line: its outcome is not the last one's, "already at the goal"),
    // and again (a repeat); after bob moved the arm away, it moves it back (a line).
    for (let k = 0; k < 2; k++) {
      const atGoal = await call('ann', 'POST', '/robot/move/joints', { joints: target, speed: 0.3 });
      assert.equal(atGoal.body.success, true);
    }
    assert.equal((await call('bob', 'POST', '/robot/move/joints', { joints: start, speed: 1 })).body.success, true);
    const back = await call('ann', 'POST', '/robot/move/joints', { joints: target, speed: 0.3 });
    assert.equal(back.body.success, true);
    assert.ok(maxDiff((await state()).position, target) < 1e-3, 'back at the goal');
    const ann = (await lines('move_to_joints')).slice(before).filter((l) => l.principal === 'ann');
    assert.deepEqual(
      ann.map((l) => l.outcome.message),
      ['motion finished at the goal', 'already at the goal', 'motion finished at the goal'],
      'the paused move, the first at its goal and the move back are lines of the trail',
    );
    const quiet = (await lines('move_to_joints', true)).slice(beforeQuiet).filter((l) => l.principal === 'ann');
    assert.deepEqual(
      quiet.map((l) => [l.why, l.outcome.status]),
      [
        ['refused', 409],
        ['repeat', 200],
      ],
      'the move refused while paused, and the second at its goal',
    );
  });

  it('a jog started twice by the same command, the first ended by its ttl: two jogs, each a line', async () => {
    await atRest();
    const jogs = (await lines('jog')).length;
    const commands = (await lines('jog_command')).length;
    const command = { joints: [0.5, 0, 0, 0, 0, 0, 0], ttl_ms: 100 };
    const moved: number[] = [];
    for (let k = 0; k < 2; k++) {
      const from = (await state()).position[0] ?? 0;
      assert.equal((await call('ann', 'POST', '/robot/jog', command)).status, 200);
      await atRest();
      moved.push(Math.abs(((await state()).position[0] ?? 0) - from));
    }
    assert.ok(
      moved.every((d) => d > 1e-3),
      `each jog moved joint1 (${moved.join(', ')})`,
    );
    assert.deepEqual(
      (await lines('jog')).slice(jogs).map((l) => l.outcome.message?.replace(/:.*/, '')),
      ['jog started over rest', 'jog ended', 'jog started over rest', 'jog ended'],
    );
    assert.equal((await lines('jog_command')).slice(commands).length, 2, 'the command that started each jog');
  });

  it('the same jog step twice moves the arm twice: two lines', async () => {
    await atRest();
    // The step's operation is named `jog` (the MCP tool), as the jog's start and end lines are: told by its input.
    const steps = async () => (await lines('jog')).filter((l) => l.input?.delta === 0.05);
    const before = (await steps()).length;
    const from = (await state()).position[0] ?? 0;
    for (let k = 0; k < 2; k++) {
      const step = await call('ann', 'POST', '/robot/jog/step', { joint: 1, delta: 0.05 });
      assert.equal(step.body.success, true, JSON.stringify(step.body));
    }
    assert.ok(Math.abs(((await state()).position[0] ?? 0) - from - 0.1) < 2e-3, 'joint1 moved by both steps');
    assert.equal((await steps()).slice(before).length, 2, 'each step is a line');
  });

  it('a plan executed, then a plan of the same motion executed from the same start: two lines; run again, refused', async () => {
    await atRest();
    const start = (await state()).position;
    const target = maxDiff(start, X) > 0.1 ? X : Y;
    const before = (await lines('execute_plan')).length;
    const beforeQuiet = (await lines('execute_plan', true)).length;
    const ids: string[] = [];
    for (let k = 0; k < 2; k++) {
      const planned = await call('ann', 'POST', '/robot/move/joints', { joints: target, speed: 1, dry_run: true });
      const id = (planned.body.plan as { id: string }).id;
      ids.push(id);
      const run = await call('ann', 'POST', `/robot/plans/${id}/execute`);
      assert.equal(run.body.success, true, JSON.stringify(run.body));
      assert.ok(maxDiff((await state()).position, target) < 1e-3, 'the plan moved the arm to its goal');
      assert.equal((await call('ann', 'POST', '/robot/move/joints', { joints: start, speed: 1 })).body.success, true);
    }
    assert.equal((await call('ann', 'POST', `/robot/plans/${ids[0]}/execute`)).status, 409, 'a plan runs once');
    assert.equal((await lines('execute_plan')).slice(before).length, 2, 'each execution is a line');
    const quiet = (await lines('execute_plan', true)).slice(beforeQuiet);
    assert.deepEqual(
      quiet.map((l) => [l.why, l.outcome.status]),
      [['refused', 409]],
    );
  });

  it('the same sequence run twice (it ends where it began): each run took the arm and moved it, two lines', async () => {
    await atRest();
    // From X through Y back to X, each run: nothing but the arm taken tells the second from the first.
    assert.equal((await call('ann', 'POST', '/robot/move/joints', { joints: X, speed: 1 })).body.success, true);
    const before = (await lines('start_sequence')).length;
    const config = { home: { joints: X, speed: 1 }, waypoints: [{ joints: Y, speed: 1 }] };
    const status = async () =>
      (await (await send('ann', 'GET', '/sequences/status')).json()) as { status: string; returncode?: number };
    for (let k = 0; k < 2; k++) {
      const started = await answer(
        app.request('/sequences/start', {
          method: 'POST',
          headers: { authorization: `Bearer ${TOKENS.ann}` },
          body: sequenceForm(config, { n_iterations: '1', delay_between_iterations: '0' }),
        }),
        'the sequence started',
      );
      assert.equal(started.status, 200, JSON.stringify(started.body));
      let far = 0;
      const ended = await waitOnClock(
        clock,
        'the sequence finished',
        async () => {
          far = Math.max(far, maxDiff((await state()).position, X));
          return status();
        },
        (s) => s.status === 'finished',
        60_000,
        10,
        30_000,
      );
      assert.equal(ended.returncode, 0, `run ${k} finished`);
      assert.ok(far > 0.3, `run ${k} moved the arm (${far} rad from X at most)`);
      assert.ok(maxDiff((await state()).position, X) < 1e-3, `run ${k} ended at X`);
    }
    assert.equal((await lines('start_sequence')).slice(before).length, 2, 'each run is a line of the trail');
  });
});
