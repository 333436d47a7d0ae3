/**
 * Jogging over REST on the simulator at time_scale 1, the app in memory on a clock the test steps
 * (tests/support/stepped.ts: the ttl, the holds and the waits are times of the clock, no sleeping): POST /robot/jog (held, the dead-man, Cartesian, limits, the
 * envelope, stop, 409s both ways, pause and override, bad input, events and the audit trail) and POST /robot/jog/step.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createFkWorkspace, forwardKinematics } from '../../lib/kinematics/fk.ts';
import type { Chain } from '../../lib/kinematics/chain.ts';
import type { SteppedClock } from '../../lib/clock.ts';
import type { TestApp } from '../support/server.ts';
import { createSteppedApp, steppedUntilSettled, waitOnClock } from '../support/stepped.ts';

type Limit = { readonly kind: string } | null;
/** Time passing: the clock moves on. */
const sleep = (ms: number) => clock.advance(ms);
const WORK = [0, 0, 0, -1.57, 0, 1.57, 0];
const VMAX = [1.71, 1.71, 1.75, 2.27, 2.44, 3.14, 3.14];
const AMAX = [8.5521, 8.5521, 8.7266, 11.3446, 12.2173, 15.708, 15.708];

let app: TestApp;
let clock: SteppedClock;
let dir: string;
let auditFile: string;
let chain: Chain;
/** The events published on the bus since the last reset: type and data. */
let events: { type: string; data: Record<string, unknown> }[] = [];

/** A POST whose answer is not waited for here (answer() steps the clock until it comes). */
const send = (route: string, body?: unknown, headers: Record<string, string> = {}) =>
  app.request(route, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
/** The answer of a request sent before, the clock stepped (2 ms at a time) until it comes. */
const answer = <T>(pending: Promise<T>, what = 'the answer') => steppedUntilSettled(clock, pending, what);
/** A POST, the clock stepped until it answers (a move answers at its goal, a pause at rest). */
const post = (route: string, body?: unknown, headers: Record<string, string> = {}) =>
  answer(send(route, body, headers), `POST ${route}`);
const state = async () =>
  (await (await app.request('/robot/joint_states')).json()) as { position: number[]; velocity: number[] };
const positions = async () => (await state()).position;
const tcp = (q: readonly number[]) => {
  const ws = createFkWorkspace(chain);
  forwardKinematics(chain, q, ws);
  return Array.from(ws.tipPos);
};

/** Waits until the jog is over (the arm at rest, the lease given back), at most `timeoutMs` of the clock. */
async function jogOver(timeoutMs = 5000): Promise<void> {
  await waitOnClock(
    clock,
    'the jog to end',
    async () => app.services.jog?.owner() === undefined && (await state()).velocity.every((v) => v === 0),
    (over) => over,
    timeoutMs,
  );
}

/** When (the clock's ms) the last command of {@link hold} was answered. */
let lastCommandAtMs = 0;

/** Sends `body` every 50 ms for `ms`; returns the positions at the last answer. */
async function hold(body: unknown, ms: number): Promise<number[]> {
  const until = clock.nowMs() + ms;
  let last: number[] = [];
  while (clock.nowMs() < until) {
    const res = await post('/robot/jog', body);
    lastCommandAtMs = clock.nowMs();
    // The controller's state when the command was taken (it catches up first), not the last published one.
    last = [...(app.context.jogStatus?.().positions ?? [])];
    assert.equal(res.status, 200, await res.text());
    await sleep(50);
  }
  return last;
}

/** Back to the work position (a move), the jog over. */
async function toWork(): Promise<void> {
  await jogOver();
  await moveTo(WORK);
}

/** A move that must succeed. */
async function moveTo(joints: readonly number[]): Promise<void> {
  const res = await post('/robot/move/joints', { joints, speed: 1 });
  const text = await res.text();
  assert.equal(res.status, 200, text);
  assert.equal((JSON.parse(text) as { success: boolean }).success, true, text);
}

describe('jogging over REST on the simulator', () => {
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'armgate-jog-'));
    auditFile = path.join(dir, 'audit.jsonl');
    ({ app, clock } = await createSteppedApp({
      sim: { time_scale: 1, obstacles: [{ name: 'table', center: [0.4, 0, 0.2], size: [0.3, 0.3, 0.4] }] },
      safety: {
        workspace: { min: [-1, -1, 0.05], max: [0.5, 1, 1.4] },
        keep_out: [{ name: 'fixture', min: [-0.3, 0.3, 0], max: [0.7, 0.7, 1.2] }],
      },
      audit: { path: auditFile },
    }));
    const safety = app.services.safety;
    if (!safety) throw new Error('no safety state');
    chain = safety.chain;
    app.services.events?.subscribe(
      {
        send: (frame) => {
          const text = Buffer.from(frame).toString();
          const type = /event: (\w+)/.exec(text)?.[1] ?? '';
          const data = /data: (.*)/.exec(text)?.[1];
          if (type !== 'joint_state' && data) events.push({ type, data: JSON.parse(data) });
        },
        end: () => undefined,
      },
      { jointStateHz: 0 },
    );
  });
  after(async () => {
    await app.close();
    await rm(dir, { recursive: true, force: true });
  });
  beforeEach(async () => {
    await toWork();
    events = [];
  });

  describe('POST /robot/jog', () => {
    it('a held joint jog moves only that joint; after the last command the arm rests within ttl + braking', async () => {
      const last = await hold({ joints: [0, 0, 0, 0, 1, 0, 0] }, 600);
      await waitOnClock(clock, 'the arm at rest', state, (s) => s.velocity.every((v) => v === 0), 5000, 2);
      // At rest within ttl (200 ms) + the braking time from jog speed (at 0.9 of the acceleration limit), give or take
      // the 2 ms steps of this wait and a controller period.
      const restAfterMs = clock.nowMs() - lastCommandAtMs;
      const brakingMs = ((0.25 * (VMAX[4] ?? 0)) / (0.9 * (AMAX[4] ?? 1))) * 1000;
      assert.ok(restAfterMs <= 200 + brakingMs + 6, `at rest ${restAfterMs} ms after the last command`);
      await jogOver();
      const q = await positions();
      for (const [j, value] of q.entries()) if (j !== 4) assert.equal(value, WORK[j], `joint ${j + 1} moved`);
      const speed = 0.25 * (VMAX[4] ?? 0);
      assert.ok((q[4] ?? 0) > 0.1, `joint5 moved ${q[4]}`);
      // After the answer to the last command: at most ttl at jog speed, then the braking distance.
      const after = (q[4] ?? 0) - (last[4] ?? 0);
      assert.ok(after <= speed * 0.2 + speed ** 2 / (2 * 0.9 * (AMAX[4] ?? 1)) + 1e-3, `moved ${after} rad after`);
      const ended = events.find((e) => e.type === 'jog' && e.data.state === 'ended');
      assert.equal(ended?.data.reason, 'ttl');
      assert.deepEqual(
        events.filter((e) => e.type === 'jog').map((e) => e.data.state),
        ['started', 'ended'],
      );
    });

    it('one command alone moves at most ttl x speed', async () => {
      const res = await post('/robot/jog', { joints: [0, 0, 0, 0, 0, 0, -1], ttl_ms: 100 });
      const body = (await res.json()) as { jogging: boolean };
      assert.equal(body.jogging, true);
      await jogOver();
      const moved = (WORK[6] ?? 0) - ((await positions())[6] ?? 0);
      assert.ok(moved > 0 && moved <= 0.1 * 0.25 * (VMAX[6] ?? 0) + 1e-3, `moved ${moved} rad`);
    });

    it('all zeros brake at once: released', async () => {
      await post('/robot/jog', { joints: [0, 0, 0, 0, 0, 0, 1], ttl_ms: 500 });
      await sleep(100);
      const res = await post('/robot/jog', { joints: [0, 0, 0, 0, 0, 0, 0] });
      assert.equal(((await res.json()) as { jogging: boolean }).jogging, false);
      await jogOver(1000);
      assert.equal(events.find((e) => e.type === 'jog' && e.data.state === 'ended')?.data.reason, 'released');
    });

    it('a Cartesian jog along x keeps the TCP on its line within 1 mm', async () => {
      const p0 = tcp(WORK);
      const samples: number[][] = [];
      const until = clock.nowMs() + 300;
      while (clock.nowMs() < until) {
        await post('/robot/jog', { linear: [-1, 0, 0], frame: 'base' });
        samples.push(await positions());
        await sleep(30);
      }
      await jogOver();
      samples.push(await positions());
      const end = tcp(samples.at(-1) ?? WORK);
      assert.ok((p0[0] ?? 0) - (end[0] ?? 0) > 0.03, `moved ${(p0[0] ?? 0) - (end[0] ?? 0)} m`);
      for (const q of samples) {
        const p = tcp(q);
        assert.ok(Math.hypot((p[1] ?? 0) - (p0[1] ?? 0), (p[2] ?? 0) - (p0[2] ?? 0)) < 1e-3, `off the line at ${p}`);
      }
    });

    it('a jog into a joint limit stops at it, and the answer says why', async () => {
      const near = [...WORK];
      near[6] = 2.95;
      await moveTo(near);
      let limit: Limit = null;
      const until = clock.nowMs() + 600;
      while (clock.nowMs() < until) {
        limit = ((await (await post('/robot/jog', { joints: [0, 0, 0, 0, 0, 0, 1] })).json()) as { limit: Limit })
          .limit;
        await sleep(40);
      }
      await jogOver();
      const q7 = (await positions())[6] ?? 0;
      assert.ok(q7 <= 3.05 && q7 > 3.05 - 1e-3, `joint7 at ${q7}`);
      assert.equal(limit?.kind, 'joint_limit');
      // Held against the limit until the commands stopped: /events says it ended at a limit.
      assert.equal(events.find((e) => e.type === 'jog' && e.data.state === 'ended')?.data.reason, 'limit');
    });

    it('a jog toward the workspace box or a keep-out box stops outside (inside the workspace)', async () => {
      await hold({ linear: [1, 0, 0] }, 700);
      await jogOver();
      const x = tcp(await positions())[0] ?? 0;
      assert.ok(x <= 0.5 && x > 0.48, `the TCP stopped at x = ${x}`);
      await toWork();
      let limit: Limit = null;
      const until = clock.nowMs() + 1500;
      while (clock.nowMs() < until) {
        limit = ((await (await post('/robot/jog', { linear: [0, 1, 0] })).json()) as { limit: Limit }).limit;
        await sleep(40);
      }
      await jogOver();
      const y = tcp(await positions())[1] ?? 0;
      assert.ok(y < 0.3 - 0.08 && y > 0.1, `the TCP stopped at y = ${y}`);
      assert.equal(limit?.kind, 'keep_out');
    });

    it("a jog toward an obstacle stops before the simulator's collision check meets it, and says so", async () => {
      let limit: Limit = null;
      const until = clock.nowMs() + 1500;
      while (clock.nowMs() < until) {
        limit = ((await (await post('/robot/jog', { linear: [0, 0, -1] })).json()) as { limit: Limit }).limit;
        await sleep(40);
      }
      await jogOver();
      const q = await positions();
      const z = tcp(q)[2] ?? 0;
      assert.ok(z > 0.4 && z < 0.55, `the TCP stopped at z = ${z}`);
      assert.equal(limit?.kind, 'collision');
      assert.match(
        ((await post('/robot/move/joints', { joints: WORK, speed: 1 }).then((r) => r.json())) as { message: string })
          .message,
        /goal/,
        'a move goes from there',
      );
    });

    it('POST /stop ends a jog at once; commands that arrived before its answer do not restart it', async () => {
      await post('/robot/jog', { joints: [1, 0, 0, 0, 0, 0, 0], ttl_ms: 500 });
      await sleep(100);
      const stop = send('/stop');
      const inFlight = [0, 1, 2].map(() => send('/robot/jog', { joints: [1, 0, 0, 0, 0, 0, 0], ttl_ms: 500 }));
      assert.equal((await answer(stop)).status, 200);
      for (const res of await answer(Promise.all(inFlight))) assert.equal(res.status, 409, await res.text());
      await jogOver(1000);
      const rest = await positions();
      await sleep(300);
      assert.deepEqual(await positions(), rest, 'nothing moved after the stop');
      assert.equal(events.find((e) => e.type === 'jog' && e.data.state === 'ended')?.data.reason, 'stop');
      // A command sent after the stop's answer jogs again.
      const again = await post('/robot/jog', { joints: [1, 0, 0, 0, 0, 0, 0], ttl_ms: 50 });
      assert.equal(again.status, 200, await again.text());
    });

    it('409 both ways: a jog while a move holds the arm, a move while a jog holds it', async () => {
      const move = send('/robot/move/joints', { joints: [-0.6, 0, 0, -1.57, 0, 1.57, 0], speed: 0.2 });
      await sleep(150);
      const refused = await post('/robot/jog', { joints: [0, 1, 0, 0, 0, 0, 0] });
      assert.equal(refused.status, 409);
      assert.match(((await refused.json()) as { detail: string }).detail, /moving to joint angles/);
      assert.equal((await answer(move, 'the move')).status, 200);
      await post('/robot/jog', { joints: [0, 0.2, 0, 0, 0, 0, 0], ttl_ms: 300 });
      const blocked = await post('/robot/move/joints', { joints: WORK, speed: 1 });
      assert.equal(blocked.status, 409);
      assert.match(((await blocked.json()) as { detail: string }).detail, /jogging/);
      await jogOver();
      assert.equal((await post('/robot/move/joints', { joints: WORK, speed: 1 })).status, 200, 'free once at rest');
    });

    it('pause holds the jog still while commands keep coming; the override scales its speed', async () => {
      await post('/robot/jog', { joints: [0, 0, 1, 0, 0, 0, 0], ttl_ms: 500 });
      const paused = await post('/robot/pause');
      assert.equal(((await paused.json()) as { paused: boolean }).paused, true);
      const held = await positions();
      const still = await post('/robot/jog', { joints: [0, 0, 1, 0, 0, 0, 0], ttl_ms: 500 });
      assert.match(((await still.json()) as { message: string }).message, /paused/);
      await sleep(200);
      assert.deepEqual(await positions(), held, 'a paused jog does not move');
      assert.equal((await post('/robot/resume')).status, 200);
      await jogOver();
      await app.request('/robot/override', {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ percent: 40 }),
      });
      try {
        await post('/robot/jog', { joints: [0, 0, -1, 0, 0, 0, 0], ttl_ms: 300 });
        await sleep(150);
        const v = Math.abs((await state()).velocity[2] ?? 0);
        assert.ok(Math.abs(v - 0.4 * 0.25 * (VMAX[2] ?? 0)) < 1e-6, `joint3 at ${v} rad/s`);
      } finally {
        await app.request('/robot/override', {
          method: 'PUT',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ percent: 100 }),
        });
      }
    });

    it('bad input is a 422 with the field path and never moves the arm', async () => {
      const cases: [unknown, (string | number)[]][] = [
        [{ joints: [0, 0, 1.5, 0, 0, 0, 0] }, ['body', 'joints', 2]],
        ['{"joints": [0, 0, 1e999, 0, 0, 0, 0]}', ['body', 'joints', 2]],
        [{ joints: [0, 0, '0.5x', 0, 0, 0, 0] }, ['body', 'joints', 2]],
        [{ joints: [0, 0, 0, 0, 0, 0] }, ['body', 'joints']],
        [{ joints: [0, 0, 0.5, 0, 0, 0, 0], linear: [1, 0, 0] }, ['body', 'joints']],
        [{ linear: [1, 0] }, ['body', 'linear']],
        [{ angular: [0, 0, -2] }, ['body', 'angular', 2]],
        [{ linear: [1, 0, 0], frame: 'world' }, ['body', 'frame']],
        [{ joints: [0.5, 0, 0, 0, 0, 0, 0], frame: 'tool' }, ['body', 'frame']],
        [{ joints: [0.5, 0, 0, 0, 0, 0, 0], ttl_ms: 5 }, ['body', 'ttl_ms']],
        [{ joints: [0.5, 0, 0, 0, 0, 0, 0], ttl_ms: 10_000 }, ['body', 'ttl_ms']],
        [{ joints: [0.5, 0, 0, 0, 0, 0, 0], ttl_ms: 19 }, ['body', 'ttl_ms']],
        [{ joints: [0.5, 0, 0, 0, 0, 0, 0], ttl_ms: 501 }, ['body', 'ttl_ms']],
        [{ joints: [0.5, 0, 0, 0, 0, 0, 0], ttl_ms: 20.5 }, ['body', 'ttl_ms']],
        ['{"joints": [0.5, 0, 0, 0, 0, 0, 0], "ttl_ms": 1e-100}', ['body', 'ttl_ms']],
        [{ joints: [1.0000000000000002, 0, 0, 0, 0, 0, 0] }, ['body', 'joints', 0]],
        [{ linear: [0, -1.0000000000000002, 0] }, ['body', 'linear', 1]],
        [{}, ['body', 'joints']],
        [{ joints: [0.5, 0, 0, 0, 0, 0, 0], speed: 1 }, ['body', 'speed']],
        // JSON.parse keeps "__proto__" as a key of its own: an unknown key like any other, never a prototype.
        ['{"joints": [0.5, 0, 0, 0, 0, 0, 0], "__proto__": {"ttl_ms": 500}}', ['body', '__proto__']],
        ['{"__proto__": {"joints": [0.5, 0, 0, 0, 0, 0, 0]}}', ['body', '__proto__']],
      ];
      for (const [body, loc] of cases) {
        const res = await post('/robot/jog', body);
        const text = await res.text();
        assert.equal(res.status, 422, `${JSON.stringify(body)}: ${text}`);
        assert.deepEqual((JSON.parse(text) as { detail: { loc: unknown }[] }).detail[0]?.loc, loc, text);
      }
      const nan = await post('/robot/jog', '{"joints": [NaN, 0, 0, 0, 0, 0, 0]}');
      assert.equal(nan.status, 422);
      await sleep(50);
      assert.deepEqual(await positions(), WORK, 'nothing moved');
      assert.equal(app.services.jog?.owner(), undefined, 'nothing jogs');
    });

    it('fractions as small as 1e-100 and 5e-324 are taken, move nothing and end by their ttl, the arm free after', async () => {
      for (const body of [
        { joints: [5e-324, 0, 0, 0, 0, 0, -1e-100], ttl_ms: 100 },
        { linear: [1e-100, 0, -5e-324], angular: [0, 5e-324, 0], ttl_ms: 100 },
        { angular: [1e-100, 0, 0], frame: 'tool', ttl_ms: 100 },
      ]) {
        events = [];
        const res = await post('/robot/jog', body);
        const answer = (await res.json()) as { jogging: boolean; message: string };
        assert.equal(res.status, 200, JSON.stringify(answer));
        assert.equal(answer.jogging, true);
        // The answer names what was asked, not a rounded 0.
        assert.match(answer.message, /e-(100|324)/, answer.message);
        await jogOver(1000);
        const q = await positions();
        assert.ok(q.every(Number.isFinite), `positions ${q}`);
        assert.deepEqual(q, WORK, `${JSON.stringify(body)} moved the arm`);
        assert.equal(events.find((e) => e.type === 'jog' && e.data.state === 'ended')?.data.reason, 'ttl');
      }
      assert.equal((await post('/robot/move/joints', { joints: WORK, speed: 1 })).status, 200, 'the arm is free');
    });

    it('the audit trail records who jogged, its start and its end', async () => {
      // A window of its own: the tests before made more than 50 effect lines of this caller in the current one, past
      // which its further effects of a kind are counted (lib/audit/quiet.ts, EFFECT_LINES_MAX), not written one by one.
      await app.services.audit?.flush();
      await post('/robot/jog', { joints: [0, 0, 0, 0, 0, 0.5, 0], ttl_ms: 100 });
      await jogOver();
      await app.services.audit?.flush();
      const lines = (await readFile(auditFile, 'utf8'))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { principal: string; operation: string; outcome: { message?: string } });
      const jogs = lines.filter((l) => l.operation === 'jog').slice(-2);
      assert.deepEqual(
        jogs.map((l) => [l.principal, l.outcome.message?.replace(/:.*/, '')]),
        [
          ['anonymous', 'jog started over rest'],
          ['anonymous', 'jog ended'],
        ],
      );
      assert.ok(
        lines.some((l) => l.operation === 'jog_command' && l.principal === 'anonymous'),
        'each command too',
      );
    });
  });

  describe('POST /robot/jog/step', () => {
    it('steps a joint and the TCP exactly (1e-3), at rest when it answers', async () => {
      const joint = await post('/robot/jog/step', { joint: 2, delta: -0.15 });
      const body = (await joint.json()) as { success: boolean; joints: number[]; reason: string };
      assert.equal(body.success, true, JSON.stringify(body));
      assert.ok(Math.abs((body.joints[1] ?? 0) - -0.15) < 1e-3);
      assert.ok(
        (await state()).velocity.every((v) => v === 0),
        'at rest when it answers',
      );
      const before = tcp(await positions());
      const lin = (await (await post('/robot/jog/step', { axis: 'z', delta: 0.04 })).json()) as { joints: number[] };
      const after = tcp(lin.joints);
      assert.ok(
        Math.abs((after[2] ?? 0) - (before[2] ?? 0) - 0.04) < 1e-3,
        `z moved ${(after[2] ?? 0) - (before[2] ?? 0)}`,
      );
      assert.ok(
        Math.abs((after[0] ?? 0) - (before[0] ?? 0)) < 1e-3 && Math.abs((after[1] ?? 0) - (before[1] ?? 0)) < 1e-3,
      );
    });

    it("a step cut short by its client's all-zero command or next step says so (success false); the next is exact", async () => {
      type Step = { success: boolean; reason: string; message: string; joints: number[] };
      const first = send('/robot/jog/step', { joint: 7, delta: 0.2 });
      await sleep(100);
      const zero = await post('/robot/jog', { joints: [0, 0, 0, 0, 0, 0, 0] });
      assert.equal(((await zero.json()) as { jogging: boolean }).jogging, false);
      const released = (await (await answer(first, 'the step')).json()) as Step;
      assert.deepEqual([released.success, released.reason], [false, 'released'], JSON.stringify(released));
      assert.match(released.message, /released before the end of the step/);
      assert.ok((released.joints[6] ?? 0) < 0.2 - 0.01, `joint7 at ${released.joints[6]}`);
      // A newer step of the same client ends the one in force first: that one is short, the newer one exact.
      const start = released.joints[5] ?? 0;
      const longer = send('/robot/jog/step', { joint: 6, delta: 0.2 });
      await sleep(60);
      const newer = send('/robot/jog/step', { joint: 6, delta: -0.05 });
      const [a, b] = (await Promise.all(
        (await answer(Promise.all([longer, newer]), 'both steps')).map((r) => r.json()),
      )) as [Step, Step];
      assert.deepEqual([a.success, a.reason], [false, 'released'], JSON.stringify(a));
      assert.ok((a.joints[5] ?? 0) - start < 0.2 - 0.01, `joint6 went ${(a.joints[5] ?? 0) - start}`);
      assert.equal(b.success, true, JSON.stringify(b));
      assert.ok(Math.abs((b.joints[5] ?? 0) - ((a.joints[5] ?? 0) - 0.05)) < 1e-3, `joint6 at ${b.joints[5]}`);
    });

    it('POST /stop ends a step at once: it answers success false, reason stop; the arm rests short of its goal', async () => {
      const step = send('/robot/jog/step', { joint: 1, delta: -0.2 });
      await sleep(80);
      assert.equal((await post('/stop')).status, 200);
      const stopped = (await (await answer(step, 'the step')).json()) as {
        success: boolean;
        reason: string;
        message: string;
        joints: number[];
      };
      // As a stopped move does, it answers at once: the stop's hold brakes the arm (a few ms more) and holds it.
      assert.deepEqual([stopped.success, stopped.reason], [false, 'stop'], JSON.stringify(stopped));
      assert.match(stopped.message, /the stop's hold brakes the arm to rest/);
      await jogOver(1000);
      const rest = await positions();
      assert.ok((rest[0] ?? 0) > -0.2 + 0.01, `joint1 at ${rest[0]}`);
      await sleep(300);
      assert.deepEqual(await positions(), rest, 'held there');
    });

    it('a step into a limit stops short and says so; bounds on every field', async () => {
      const near = [...WORK];
      near[0] = -2.9;
      await moveTo(near);
      const short = (await (await post('/robot/jog/step', { joint: 1, delta: -0.2 })).json()) as {
        success: boolean;
        reason: string;
        joints: number[];
      };
      assert.equal(short.success, false);
      assert.equal(short.reason, 'limit');
      assert.ok((short.joints[0] ?? 0) >= -2.97 && (short.joints[0] ?? 0) < -2.96, `joint1 at ${short.joints[0]}`);
      for (const [body, loc] of [
        [{ joint: 2, delta: 0.3 }, ['body', 'delta']],
        [{ axis: 'x', delta: 0.06 }, ['body', 'delta']],
        [{ axis: 'a', delta: 0.2, frame: 'tool' }, undefined],
        [{ joint: 8, delta: 0.1 }, ['body', 'joint']],
        [{ joint: 2, axis: 'x', delta: 0.01 }, ['body', 'joint']],
        [{ joint: 2, delta: 0 }, ['body', 'delta']],
      ] as const) {
        if (!loc) continue;
        const res = await post('/robot/jog/step', body);
        const text = await res.text();
        assert.equal(res.status, 422, text);
        assert.deepEqual((JSON.parse(text) as { detail: { loc: unknown }[] }).detail[0]?.loc, loc, text);
      }
    });
  });
});
