/**
 * Pause, resume and the speed override end to end through the app in memory over the simulated arm at
 * time_scale 1 (issue 24), all on a clock the test steps (tests/support/stepped.ts): no sleeping, and the
 * timings (braking, held, the override's ratio) are those of the clock, whatever the machine's load: during a move, a waited trajectory and a sequence the arm brakes to rest
 * within what its acceleration limits allow, no joint-state sample beyond them, on the planned
 * path (within 1 mm); resume ends at the goal and the original request answers success; override
 * 50 % mid-motion doubles the remaining time; pause then stop; resume with nothing paused; roles;
 * an unwaited trajectory with the events and the audit trail; pause, resume and stop sent at once.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { bundledLimits, WORK } from '../support/arm.ts';
import { sequenceForm } from '../support/multipart.ts';
import { openSse, type SseEvent, type SseStream } from '../support/sse.ts';
import type { TestApp } from '../support/server.ts';
import { createSteppedApp, steppedUntilSettled, waitOnClock } from '../support/stepped.ts';
import type { SteppedClock } from '../../lib/clock.ts';

/** The bundled acceleration limits (rad/s^2), J1..J7 (read before the tests). */
let MAX_ACC: readonly number[] = [];
const FAR = [1.6, 0.6, -0.9, -0.7, 0.9, 0.5, 1.3];
const ADMIN = 'admin-token-pause-0123456789';
const READ = 'viewer-token-pause-0123456789';
const OPERATE = 'operator-token-pause-012345678';

interface JointSample {
  readonly stampS: number;
  readonly position: number[];
  readonly velocity: number[];
}

/** Max-norm distance (rad) from q to the segment a -> b in joint space (a PTP path, a linear trajectory). */
function offSegment(q: readonly number[], a: readonly number[], b: readonly number[]): number {
  let dot = 0;
  let len = 0;
  for (let j = 0; j < 7; j++) {
    const d = (b[j] ?? 0) - (a[j] ?? 0);
    dot += ((q[j] ?? 0) - (a[j] ?? 0)) * d;
    len += d * d;
  }
  const s = len > 0 ? Math.min(1, Math.max(0, dot / len)) : 0;
  return Math.max(...q.map((x, j) => Math.abs(x - ((a[j] ?? 0) + s * ((b[j] ?? 0) - (a[j] ?? 0))))));
}

/**
 * 1 mm of TCP travel: the iiwa 7's links from joint 1 to the flange are at most 1.27 m long, so a
 * joint offset of e rad on every joint moves the TCP at most 7 * 1.27 * e m.
 */
const ONE_MM_RAD = 1e-3 / (7 * 1.27);

/**
 * Checks joint-state samples from the event stream: every velocity change within the acceleration
 * limit over the time between them (two 2 ms controller periods of slack between
 * stamps), every position within 1 mm of the segment a -> b. Returns the worst ratios.
 */
function checkSamples(samples: readonly JointSample[], a: readonly number[], b: readonly number[]) {
  let worstAcc = 0;
  let worstOff = 0;
  let worstAt = '';
  for (let k = 0; k < samples.length; k++) {
    const s = samples[k] as JointSample;
    worstOff = Math.max(worstOff, offSegment(s.position, a, b));
    const prev = samples[k - 1];
    if (!prev) continue;
    // Two controller periods of slack, as tests/http/dead-man.test.ts: each state is current at its update.
    const dt = s.stampS - prev.stampS + 0.004;
    for (let j = 0; j < 7; j++) {
      const acc = Math.abs((s.velocity[j] ?? 0) - (prev.velocity[j] ?? 0)) / dt;
      if (acc / (MAX_ACC[j] ?? 1) > worstAcc) {
        worstAcc = acc / (MAX_ACC[j] ?? 1);
        worstAt = `joint${j + 1} ${prev.velocity[j]} -> ${s.velocity[j]} rad/s, stamps ${prev.stampS} -> ${s.stampS}, sample ${k} of ${samples.length}`;
      }
    }
  }
  assert.ok(
    worstAcc <= 1 + 1e-6,
    `a joint-state sample beyond the acceleration limits (ratio ${worstAcc}: ${worstAt})`,
  );
  assert.ok(worstOff <= ONE_MM_RAD, `off the planned path by ${worstOff} rad (1 mm: ${ONE_MM_RAD} rad)`);
  return { worstAcc, worstOff };
}

/** Seconds each joint needs to brake alone from these velocities at its limit. */
const brakingS = (velocity: readonly number[]) => Math.max(...velocity.map((v, j) => Math.abs(v) / (MAX_ACC[j] ?? 1)));

describe('pause, resume and override on the simulated arm (time_scale 1)', () => {
  let server: TestApp;
  let clock: SteppedClock;
  let events: SseStream;
  const samples: JointSample[] = [];
  let recording = false;
  /** Every pause, resume, override and motion event, in order. */
  const seen: { type: string; data: Record<string, unknown> }[] = [];
  let dir: string;
  let auditFile: string;

  /** A request whose answer is waited for with the clock standing still (it may come only as the clock moves on). */
  const send = async <T = Record<string, unknown>>(
    method: string,
    path: string,
    body?: unknown,
    token = ADMIN,
  ): Promise<{ status: number; body: T; headers: Headers }> => {
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await server.request(path, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T, headers: res.headers };
  };
  /** A request, the clock stepped (2 ms at a time) until it answers. */
  const call = <T = Record<string, unknown>>(method: string, path: string, body?: unknown, token = ADMIN) =>
    steppedUntilSettled(clock, send<T>(method, path, body, token), `${method} ${path}`);
  /** The answer of a request sent before, the clock stepped until it comes. */
  const answer = <T>(pending: Promise<T>, what: string) => steppedUntilSettled(clock, pending, what);
  const sleep = (ms: number) => clock.advance(ms);
  const waitFor = <T>(
    what: string,
    get: () => Promise<T>,
    ok: (value: T) => boolean,
    limitMs = 20_000,
    stepMs = 2,
    machineMs = 0,
  ) => waitOnClock(clock, what, get, ok, limitMs, stepMs, machineMs);
  /**
   * The bounds of a wait for a motion to start: it is planned (a move) or checked in a worker thread (a trajectory) in
   * the machine's time, while the clock runs on, so 15 s of that time as well as 20 s of the clock.
   */
  const STARTS = [20_000, 2, 15_000] as const;
  const state = () => getJointState();
  const getJointState = async () => {
    const res = await server.request('/robot/joint_states', { headers: { authorization: `Bearer ${ADMIN}` } });
    return (await res.json()) as { position: number[]; velocity: number[] };
  };
  const atRest = async () => {
    await waitFor('the arm at rest', state, (s) => s.velocity.every((v) => v === 0), 20_000);
  };
  const moveHome = async () => {
    await atRest();
    const home = await call<{ success: boolean; message: string }>('POST', '/robot/move/joints', {
      joints: WORK,
      speed: 1,
    });
    assert.equal(home.body.success, true, `${home.status} ${JSON.stringify(home.body)}`);
  };

  before(async () => {
    MAX_ACC = (await bundledLimits()).maxAccRadS2;
    dir = await mkdtemp(path.join(tmpdir(), 'armgate-pause-'));
    auditFile = path.join(dir, 'audit.jsonl');
    ({ app: server, clock } = await createSteppedApp({
      audit: { path: auditFile },
      web: {
        token: ADMIN,
        tokens: [
          { name: 'viewer', token: READ, role: 'read' },
          { name: 'operator', token: OPERATE, role: 'operate' },
        ],
      },
      sim: { time_scale: 1, joint_state_rate_hz: 100 },
    }));
    events = await openSse(server, '/events?rate_hz=100', {
      token: ADMIN,
      onEvent: (event: SseEvent) => {
        if (['pause', 'resume', 'override', 'motion'].includes(event.type))
          seen.push({ type: event.type, data: event.data as Record<string, unknown> });
        if (!recording || event.type !== 'joint_state') return;
        const data = event.data as { stamp: number; position: number[]; velocity: number[] };
        samples.push({ stampS: data.stamp, position: data.position, velocity: data.velocity });
      },
    });
  });
  after(async () => {
    events.close();
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });
  // A test that failed half-way may leave its motion paused: stop ends it, so the next test starts clean.
  afterEach(async () => {
    recording = false;
    await call('POST', '/stop');
  });

  it('pause during a move: brakes on its path within the limits, holds; resume ends at the goal and the move answers success', async () => {
    await moveHome();
    samples.length = 0;
    recording = true;
    const from = events.events.length;
    const move = send<{ success: boolean; message: string }>('POST', '/robot/move/joints', {
      joints: FAR,
      speed: 1,
    });
    await waitFor('the arm at speed', state, (s) => Math.abs(s.velocity[0] ?? 0) > 0.8, ...STARTS);
    const sentAt = clock.nowMs();
    const paused = await call<{ paused: boolean; message: string; what: string | null }>('POST', '/robot/pause');
    const answeredS = (clock.nowMs() - sentAt) / 1000;
    assert.equal(paused.status, 200, JSON.stringify(paused.body));
    assert.equal(paused.body.paused, true, paused.body.message);
    assert.match(paused.body.what ?? '', /moving to joint angles/);
    const rest = await state();
    assert.ok(
      rest.velocity.every((v) => v === 0),
      `at rest when the pause answers: ${rest.velocity}`,
    );
    // The event stream may deliver the sample at rest a little after the answer on a loaded machine.
    await waitFor(
      'a sample at rest on the event stream',
      async () => samples.at(-1),
      (s) => (s !== undefined ? s.velocity.every((v) => v === 0) : false),
    );
    // The braking each joint alone needs at its limit from the speed where the braking began, with the rate's 5 % margin.
    const braking = pausedSpan(samples);
    const bound = brakingS(braking.fromVelocity) / 0.95;
    const stopS = braking.spanS;
    assert.ok(
      stopS <= bound + 0.03,
      `still moving ${stopS.toFixed(3)} s after the braking began (bound ${bound.toFixed(3)} s)`,
    );
    // Held: still, and the move is still waiting.
    await sleep(1500);
    const held = await state();
    assert.deepEqual(held.position, rest.position);
    let settled = false;
    void move.then(() => {
      settled = true;
    });
    await sleep(10);
    assert.equal(settled, false, 'the move keeps waiting while paused');
    // Other motions: 409 naming the pause.
    const other = await call<{ detail: string }>('POST', '/robot/move/joints', { joints: WORK, speed: 0.5 });
    assert.equal(other.status, 409);
    assert.match(other.body.detail, /paused/);
    // The sequence status is not paused (no sequence runs); the override is 100.
    assert.equal((await call<{ status: string }>('GET', '/sequences/status')).body.status, 'idle');
    const resumed = await call<{ resumed: boolean; message: string }>('POST', '/robot/resume');
    assert.equal(resumed.status, 200, JSON.stringify(resumed.body));
    const ended = await answer(move, 'the move');
    assert.equal(ended.status, 200);
    assert.equal(ended.body.success, true, ended.body.message);
    recording = false;
    const end = await state();
    for (const [j, q] of FAR.entries())
      assert.ok(Math.abs((end.position[j] ?? 0) - q) < 1e-3, `joint${j + 1} at the goal`);
    const figures = checkSamples(samples, WORK, FAR);
    console.log(
      `pause during a move: at rest ${stopS.toFixed(3)} s after the first braking sample (each joint braking alone at its limit: ${(bound * 0.95).toFixed(3)} s), answer after ${answeredS.toFixed(3)} s; worst acceleration ratio ${figures.worstAcc.toFixed(3)}, worst path offset ${(figures.worstOff * 7 * 1.27 * 1000).toFixed(4)} mm bound`,
    );
    // The events: pause (pausing, paused), the motion's state paused then resumed, resume.
    const types = events.events.slice(from).map((e) => `${e.type}:${(e.data as { state?: string }).state ?? ''}`);
    for (const expected of [
      'pause:pausing',
      'motion:paused',
      'pause:paused',
      'resume:',
      'motion:resumed',
      'motion:finished',
    ])
      assert.ok(
        types.includes(expected),
        `event ${expected} in ${types.filter((t) => !t.startsWith('joint_state')).join(', ')}`,
      );
  });

  it('pause during a waited trajectory: brakes on its path; resume finishes it', async () => {
    await moveHome();
    samples.length = 0;
    recording = true;
    const target = [...WORK];
    target[0] = 1.2;
    target[3] = -1.0;
    const sent = send<{ outcome?: string; message?: string }>('POST', '/trajectory/send', {
      points: [{ positions: target, time_from_start: 1.5 }],
      wait: true,
    });
    await waitFor('the arm moving', state, (s) => Math.abs(s.velocity[0] ?? 0) > 0.3, ...STARTS);
    const paused = await call<{ paused: boolean; message: string }>('POST', '/robot/pause');
    assert.equal(paused.body.paused, true, paused.body.message);
    assert.ok((await state()).velocity.every((v) => v === 0));
    await sleep(1000);
    assert.equal((await call('POST', '/robot/resume')).status, 200);
    const outcome = await answer(sent, 'the trajectory');
    assert.equal(outcome.status, 200, JSON.stringify(outcome.body));
    assert.equal(outcome.body.outcome, 'finished', outcome.body.message);
    recording = false;
    // A linear trajectory from the start (the first segment is joined from the state at rest: a straight line).
    checkSamples(samples, WORK, target);
  });

  it('override 50 % mid-motion doubles the remaining time (within 10 %)', async () => {
    await moveHome();
    const plan = await call<{ plan: { duration_s: number } }>('POST', '/robot/move/joints', {
      joints: FAR,
      speed: 0.3,
      dry_run: true,
    });
    const durationS = plan.body.plan.duration_s;
    // Timed on the joint states' stamps (epoch seconds of the app's clock, as clock.epochMs()): the motion
    // starts at its first moving sample and ends at its first sample at rest, whatever planning and the
    // event stream cost on a loaded machine.
    samples.length = 0;
    recording = true;
    const move = send<{ success: boolean; message: string }>('POST', '/robot/move/joints', { joints: FAR, speed: 0.3 });
    const moving = (s: JointSample) => s.velocity.some((v) => v !== 0);
    await waitFor(
      'the move started',
      async () => samples.find(moving),
      (s) => s !== undefined,
      ...STARTS,
    );
    const startS = (samples.find(moving) as JointSample).stampS;
    await sleep(durationS * 300);
    const setS = clock.epochMs() / 1000;
    const set = await call<{ percent: number }>('PUT', '/robot/override', { percent: 50 });
    assert.equal(set.status, 200, JSON.stringify(set.body));
    assert.equal(set.body.percent, 50);
    const ended = await answer(move, 'the move');
    assert.equal(ended.body.success, true, ended.body.message);
    await waitFor(
      'the arm at rest',
      async () => samples.at(-1),
      (s) => s !== undefined && !moving(s),
      20_000,
    );
    recording = false;
    const endS = (samples.find((s) => s.stampS > setS && !moving(s)) as JointSample).stampS;
    const setAt = setS - startS;
    const remaining = durationS - setAt;
    const took = endS - setS;
    console.log(
      `override 50 % at ${setAt.toFixed(3)} s of a ${durationS.toFixed(3)} s move: the remaining ${remaining.toFixed(3)} s took ${took.toFixed(3)} s (ratio ${(took / remaining).toFixed(3)})`,
    );
    assert.ok(remaining > durationS * 0.3, `the override came at ${setAt.toFixed(3)} s of ${durationS.toFixed(3)} s`);
    assert.ok(Math.abs(took / remaining - 2) <= 0.2, `ratio ${(took / remaining).toFixed(3)}`);
    assert.equal((await call<{ percent: number }>('GET', '/robot/override')).body.percent, 50);
    assert.equal((await call('PUT', '/robot/override', { percent: 100 })).status, 200);
  });

  it('pause then stop: the move answers stopped, nothing is paused any more; resume with nothing paused is 409', async () => {
    await moveHome();
    const move = send<{ success: boolean; message: string }>('POST', '/robot/move/joints', { joints: FAR, speed: 1 });
    await waitFor('the arm moving', state, (s) => Math.abs(s.velocity[0] ?? 0) > 0.3, ...STARTS);
    assert.equal((await call<{ paused: boolean }>('POST', '/robot/pause')).body.paused, true);
    const stopped = await call('POST', '/stop');
    assert.equal(stopped.status, 200);
    const ended = await answer(move, 'the move');
    assert.equal(ended.body.success, false);
    assert.match(ended.body.message, /stopped/);
    const resume = await call<{ detail: string }>('POST', '/robot/resume');
    assert.equal(resume.status, 409);
    assert.match(resume.body.detail, /nothing is paused/);
    // Free at once: the next move is accepted.
    const next = await call<{ success: boolean; message: string }>('POST', '/robot/move/joints', {
      joints: WORK,
      speed: 1,
    });
    assert.equal(next.body.success, true, next.body.message);
    // A pause with nothing moving pauses nothing.
    const idle = await call<{ paused: boolean; what: string | null }>('POST', '/robot/pause');
    assert.deepEqual([idle.status, idle.body.paused, idle.body.what], [200, false, null]);
  });

  it('a sequence: pause holds its goal (status paused, where), resume lets it finish', async () => {
    await moveHome();
    const started = await server.request('/sequences/start', {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}` },
      // The default 3 iterations, without the default 5 s between them (a sleep of the runner's, in the machine's time).
      body: sequenceForm(
        {
          home: { joints: [...WORK], speed: 1 },
          waypoints: [{ joints: FAR, speed: 1 }],
        },
        { delay_between_iterations: '0' },
      ),
    });
    assert.equal(started.status, 200, await started.text());
    // The runner is a process of its own: it starts in the machine's time, while the clock moves on (the arm rests).
    await waitFor('the arm moving', state, (s) => s.velocity.some((v) => Math.abs(v) > 0.3), 30_000, 2, 60_000);
    samples.length = 0;
    recording = true;
    const pausedFromMs = clock.epochMs();
    const paused = await call<{ paused: boolean; message: string }>('POST', '/robot/pause');
    const pausedToMs = clock.epochMs();
    assert.equal(paused.body.paused, true, paused.body.message);
    recording = false;
    assert.ok((await state()).velocity.every((v) => v === 0));
    const status = await call<{ status: string; point?: string; paused_since?: string }>('GET', '/sequences/status');
    assert.equal(status.body.status, 'paused');
    assert.match(status.body.point ?? '', /home|waypoint/);
    assert.ok(status.body.paused_since);
    // Since when: a time of the app's clock (to the millisecond: ISO 8601), between the pause's request and its answer.
    const sinceMs = Date.parse(status.body.paused_since);
    assert.ok(
      sinceMs >= Math.floor(pausedFromMs) && sinceMs <= pausedToMs,
      `paused since ${status.body.paused_since}, while the clock went from ${new Date(pausedFromMs).toISOString()} to ${new Date(pausedToMs).toISOString()}`,
    );
    await sleep(1000);
    assert.equal((await call('POST', '/robot/resume')).status, 200);
    // Polled with the token (an unauthenticated poll was answered 401 and waited out its whole bound).
    const done = await waitFor(
      'the sequence to finish',
      () => send<{ status: string; returncode?: number }>('GET', '/sequences/status').then((r) => r.body),
      (s) => s.status === 'finished',
      // Steps of 50 ms (a poll each, as the machine's clock polled every 25-100 ms): the runner's goals and their
      // answers cross its IPC channel in the machine's time, so a loaded machine also gets 2 minutes of that.
      120_000,
      50,
      120_000,
    ).catch(async () => call<{ status: string; returncode?: number }>('GET', '/sequences/status').then((r) => r.body));
    assert.equal(done.status, 'finished');
    assert.equal((done as { returncode?: number }).returncode, 0);
    // The braking samples: within the acceleration limits (the path is the goal's own line).
    checkSamples(samples.length > 0 ? samples : [], samples[0]?.position ?? WORK, samples.at(-1)?.position ?? WORK);
  });

  it('an unwaited trajectory: pause holds it, resume finishes it; the events and the audit trail say so', async () => {
    await moveHome();
    seen.length = 0;
    const target = [...WORK];
    target[0] = 1.0;
    target[5] = 1.0;
    const sent = await call<{ outcome?: string; message?: string }>('POST', '/trajectory/send', {
      points: [{ positions: target, time_from_start: 2 }],
    });
    assert.equal(sent.status, 200, JSON.stringify(sent.body));
    await waitFor('the arm moving', state, (s) => Math.abs(s.velocity[0] ?? 0) > 0.2, ...STARTS);
    const paused = await call<{ paused: boolean; what: string | null }>('POST', '/robot/pause', undefined, OPERATE);
    assert.equal(paused.body.paused, true, JSON.stringify(paused.body));
    assert.match(paused.body.what ?? '', /trajectory/);
    const held = await state();
    assert.ok(held.velocity.every((v) => v === 0));
    await sleep(500);
    assert.deepEqual((await state()).position, held.position, 'it holds where it rests');
    assert.equal((await call('PUT', '/robot/override', { percent: 60 }, OPERATE)).status, 200);
    assert.equal((await call('POST', '/robot/resume', undefined, OPERATE)).status, 200);
    const end = await waitFor(
      'the trajectory at its goal, at rest',
      state,
      (s) => s.velocity.every((v) => v === 0) && s.position.every((q, j) => Math.abs(q - (target[j] ?? 0)) < 1e-3),
      20_000,
    );
    assert.ok(end);
    assert.equal((await call('PUT', '/robot/override', { percent: 100 }, OPERATE)).status, 200);
    await waitFor(
      'the override event',
      async () => seen.filter((e) => e.type === 'override').length,
      (n) => n >= 2,
    );
    const kinds = seen
      .filter((e) => e.type !== 'motion')
      .map((e) => `${e.type}:${e.data.state ?? e.data.percent ?? ''}`);
    assert.deepEqual(kinds.slice(0, 5), ['pause:pausing', 'pause:paused', 'override:60', 'resume:', 'override:100']);
    const resumed = seen.find((e) => e.type === 'resume')?.data;
    assert.equal(resumed?.override_percent, 60);
    assert.match(String(resumed?.what), /trajectory/);
    assert.deepEqual(seen.find((e) => e.type === 'override')?.data, { percent: 60, previous: 100 });
    const states = seen.filter((e) => e.type === 'motion').map((e) => e.data.state);
    assert.ok(states.indexOf('paused') >= 0 && states.indexOf('resumed') > states.indexOf('paused'), states.join());
    await server.services.audit?.flush();
    const lines = (await readFile(auditFile, 'utf8'))
      .trim()
      .split('\n')
      .map(
        (l) => JSON.parse(l) as { principal: string; operation: string; input: unknown; outcome: { status: number } },
      )
      .filter((l) => ['pause', 'resume', 'set_override'].includes(l.operation) && l.principal === 'operator');
    assert.deepEqual(
      lines.map((l) => [l.operation, l.outcome.status]),
      [
        ['pause', 200],
        ['set_override', 200],
        ['resume', 200],
        ['set_override', 200],
      ],
    );
    assert.deepEqual(lines[1]?.input, { percent: 60 });
  });

  it('pause, resume and stop at once, in any order: never a 5xx; after the stop the arm rests and is free', async () => {
    for (let round = 0; round < 4; round++) {
      await moveHome();
      const move = send<{ success: boolean; message: string }>('POST', '/robot/move/joints', {
        joints: FAR,
        speed: 0.3,
      });
      await waitFor('the arm moving', state, (s) => s.velocity.some((v) => Math.abs(v) > 0.1), ...STARTS);
      const burst: [string, string][] = [
        ['POST', '/robot/pause'],
        ['POST', '/robot/resume'],
        ['POST', '/robot/pause'],
        ['POST', '/stop'],
        ['POST', '/robot/resume'],
        ['POST', '/robot/pause'],
      ];
      // A different order each round (rotate), all sent at once.
      const order = [...burst.slice(round), ...burst.slice(0, round)];
      const answers = await answer(Promise.all(order.map(([method, route]) => send(method, route))), 'the burst');
      for (const [k, answer] of answers.entries())
        assert.ok(answer.status < 500, `${order[k]?.join(' ')}: ${answer.status} ${JSON.stringify(answer.body)}`);
      const moved = await answer(move, 'the move');
      assert.equal(moved.body.success, false, `the stop ended the move: ${JSON.stringify(moved.body)}`);
      await waitFor('the arm at rest', state, (s) => s.velocity.every((v) => v === 0), 10_000);
      const resume = await call<{ detail: string }>('POST', '/robot/resume');
      assert.equal(resume.status, 409, 'nothing is paused after the stop');
      const at = await state();
      await sleep(300);
      assert.deepEqual((await state()).position, at.position, 'the arm stays at rest');
      // Free at once: the next move is accepted and reaches its goal.
      const again = await call<{ success: boolean; message: string }>('POST', '/robot/move/joints', {
        joints: WORK,
        speed: 1,
      });
      assert.equal(again.body.success, true, again.body.message);
    }
  });

  it('roles: any role pauses and lowers the override; resume and raising it need operate', async () => {
    await moveHome();
    assert.equal((await call('POST', '/robot/pause', undefined, READ)).status, 200);
    assert.equal((await call('POST', '/robot/resume', undefined, READ)).status, 403);
    assert.equal((await call('POST', '/robot/resume', undefined, OPERATE)).status, 409, 'nothing paused');
    assert.equal((await call('PUT', '/robot/override', { percent: 40 }, READ)).status, 200, 'lowering');
    const raise = await call<{ detail: string }>('PUT', '/robot/override', { percent: 80 }, READ);
    assert.equal(raise.status, 403);
    assert.match(raise.body.detail, /operate/);
    assert.equal((await call('PUT', '/robot/override', { percent: 80 }, OPERATE)).status, 200);
    assert.equal((await call<{ percent: number }>('GET', '/robot/override', undefined, READ)).body.percent, 80);
    const bad = await call<{ detail: { loc: string[] }[] }>('PUT', '/robot/override', { percent: 0 }, OPERATE);
    assert.equal(bad.status, 422);
    assert.deepEqual(bad.body.detail[0]?.loc, ['body', 'percent']);
    assert.equal((await call('PUT', '/robot/override', { percent: 100.5 }, OPERATE)).status, 422);
    assert.equal((await call('PUT', '/robot/override', { percent: 100 }, OPERATE)).status, 200);
  });
});

/** From the last sample at the peak speed (where the braking began) to the last still moving: seconds, and the velocities there. */
function pausedSpan(samples: readonly JointSample[]): { spanS: number; fromVelocity: number[] } {
  const speed = (s: JointSample) => Math.max(...s.velocity.map(Math.abs));
  let peak = 0;
  let peakAt = 0;
  for (let k = 0; k < samples.length; k++) {
    const v = speed(samples[k] as JointSample);
    // The last sample still moving: the arm was not seen moving later (a sample at rest may come late under load).
    if (v === 0 && peak > 0)
      return {
        spanS: (samples[k - 1]?.stampS ?? 0) - (samples[peakAt]?.stampS ?? 0),
        fromVelocity: samples[peakAt]?.velocity ?? [],
      };
    if (v >= peak) [peak, peakAt] = [v, k];
  }
  return { spanS: Number.POSITIVE_INFINITY, fromVelocity: [] };
}
