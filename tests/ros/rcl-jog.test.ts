/**
 * Jogging on the ros2 backend (issue 34, item 7): armgate streams short joint trajectories on the controller's topic,
 * computed by the jog engine from the joint states it reads (lib/ros/rcl-jog.ts). Over the rclnodejs stand-in
 * (tests/support/rcl-server.ts: the rclnodejs context and a live server, the stand-in backed by the simulator at
 * time_scale 1): a held joint jog moves only that joint, the dead-man brings the arm to rest, /stop ends a jog
 * (commands in flight do not restart it), 409 both ways, a step is exact, and the messages on the topic each end at
 * rest within the limits.
 * The simulator, the rclnodejs context (joint states' arrival, the jog's 20 ms period) and the app run on one clock the
 * test steps (tests/support/stepped.ts): the jog's ttl, its motion and its braking are figures of that clock, not of
 * the machine's load. The requests go to the app in memory; the jog WebSocket goes over the live server's socket (its
 * messages in the machine's time, the motion on the clock).
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createFkWorkspace, forwardKinematics } from '../../lib/kinematics/fk.ts';
import type { JogEndReason } from '../../lib/motion/jog.ts';
import WebSocket from 'ws';
import { secondsOf } from '../../lib/ros/messages.ts';
import { SteppedClock } from '../../lib/clock.ts';
import { type RclTestServer, startRclTestServer } from '../support/rcl-server.ts';
import { steppedUntilSettled, waitOnClock } from '../support/stepped.ts';

const WORK = [0, 0, 0, -1.57, 0, 1.57, 0];
const VMAX = [1.71, 1.71, 1.75, 2.27, 2.44, 3.14, 3.14];
const AMAX = [8.5521, 8.5521, 8.7266, 11.3446, 12.2173, 15.708, 15.708];
/** The machine's time passing (a socket's messages). */
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
/** Both times passing: `ms` of the machine's (the socket's messages arrive), then `ms` of the clock. */
const pace = async (ms: number) => {
  await sleep(ms);
  await clock.advance(ms);
};

let t: RclTestServer;
let clock: SteppedClock;
/** The jog's moments since the last reset (state, reason). */
let moments: { state: string; reason?: JogEndReason }[] = [];

/** A POST to the app in memory, not waited for here. */
const send = (route: string, body?: unknown) =>
  t.server.request(route, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
/** A POST, the clock stepped (2 ms at a time) until it answers (a move answers at its goal, a pause at rest). */
const post = (route: string, body?: unknown) => steppedUntilSettled(clock, send(route, body), `POST ${route}`);
const state = async () =>
  (await (await t.server.request('/robot/joint_states')).json()) as { position: number[]; velocity: number[] };
const positions = async () => (await state()).position;
const atRest = (v: readonly number[]) => v.every((x) => Math.abs(x) < 1e-3);

/** Waits (at most `timeoutMs` of the clock) until the jog is over: the lease given back and the arm at rest. */
async function jogOver(timeoutMs = 5000): Promise<void> {
  await waitOnClock(
    clock,
    'the jog to end',
    state,
    (s) => t.server.services.jog?.owner() === undefined && atRest(s.velocity),
    timeoutMs,
    10,
  );
}

/** Sends `body` every 50 ms of the clock for `ms` of it; returns the measured positions at the last answer. */
async function hold(body: unknown, ms: number): Promise<number[]> {
  const until = clock.nowMs() + ms;
  let last: number[] = [];
  while (clock.nowMs() < until) {
    const res = await post('/robot/jog', body);
    assert.equal(res.status, 200, await res.text());
    last = [...(t.context.jogStatus().positions ?? [])];
    await clock.advance(50);
  }
  return last;
}

async function moveTo(joints: readonly number[]): Promise<void> {
  const res = await post('/robot/move/joints', { joints, speed: 1 });
  const text = await res.text();
  assert.equal(res.status, 200, text);
  assert.equal((JSON.parse(text) as { success: boolean }).success, true, text);
}

describe('jogging on ros2: short trajectories streamed on the controller topic', () => {
  before(async () => {
    clock = new SteppedClock(0, Date.now());
    t = await steppedUntilSettled(clock, startRclTestServer({ sim: { sim: { time_scale: 1 } }, clock }), 'start-up');
    // A read with no joint state yet waits for the next on the clock: the first comes before any read.
    assert.ok(await clock.until(() => t.context.latestJointState() !== undefined, 2, 2000), 'a first joint state');
    t.server.services.jog?.onEvents((event) => {
      moments.push({ state: event.state, ...(event.reason ? { reason: event.reason } : {}) });
    });
  });
  after(() => t.close());
  beforeEach(async () => {
    await jogOver();
    await moveTo(WORK);
    moments = [];
  });

  it('a held joint jog moves only that joint; the dead-man brings the arm to rest (ttl); each message ends at rest', async () => {
    const start = await positions();
    const messages: { points: { positions: number[]; velocities: number[]; time_from_start: never }[] }[] = [];
    const unsubscribe = t.context.subscribe(t.config.endpoints.interfaces.trajectory.name, (msg) =>
      messages.push(msg as (typeof messages)[number]),
    );
    let last: number[];
    try {
      last = await hold({ joints: [0, 0, 0, 0, 1, 0, 0] }, 600);
      await jogOver();
    } finally {
      unsubscribe();
    }
    const q = await positions();
    for (const [j, value] of q.entries())
      if (j !== 4) assert.ok(Math.abs(value - (start[j] ?? 0)) < 1e-6, `joint ${j + 1} moved to ${value}`);
    const speed = 0.25 * (VMAX[4] ?? 0);
    const moved = (q[4] ?? 0) - (start[4] ?? 0);
    assert.ok(moved > 0.1, `joint5 moved ${moved}`);
    // From the state read at the last answer: at most ttl at jog speed, the braking, and a period or two of lag.
    const afterLast = (q[4] ?? 0) - (last[4] ?? 0);
    const bound = speed * 0.2 + speed ** 2 / (2 * 0.9 * (AMAX[4] ?? 1)) + speed * 0.05;
    assert.ok(afterLast <= bound, `moved ${afterLast} rad after the last command (bound ${bound})`);
    assert.deepEqual(moments.at(-1), { state: 'ended', reason: 'ttl' });
    assert.equal(moments[0]?.state, 'started');
    // The messages on the topic: many short ones, each ending at rest, none faster than the jog speed.
    assert.ok(messages.length > 10, `${messages.length} messages`);
    for (const msg of messages) {
      const end = msg.points.at(-1);
      assert.ok(end, 'a point');
      assert.ok(
        Array.from(end.velocities).every((v) => v === 0),
        'the message ends at rest',
      );
      assert.ok(secondsOf(end.time_from_start) <= 0.5, 'a short trajectory');
      for (const p of msg.points)
        assert.ok(Math.abs(p.velocities[4] ?? 0) <= speed + 1e-9, `joint5 at ${p.velocities[4]} rad/s`);
    }
  });

  it('all zeros brake at once (released); a step is exact (1e-3) and at rest when it answers', async () => {
    await post('/robot/jog', { joints: [0, 0, 0, 0, 0, 0, 1], ttl_ms: 500 });
    await clock.advance(150);
    const released = await post('/robot/jog', { joints: [0, 0, 0, 0, 0, 0, 0] });
    assert.equal(((await released.json()) as { jogging: boolean }).jogging, false);
    await jogOver(2000);
    assert.deepEqual(moments.at(-1), { state: 'ended', reason: 'released' });
    const from = await positions();
    const step = await post('/robot/jog/step', { joint: 2, delta: -0.15 });
    const body = (await step.json()) as { success: boolean; joints: number[] };
    assert.equal(body.success, true, JSON.stringify(body));
    assert.ok(Math.abs((body.joints[1] ?? 0) - ((from[1] ?? 0) - 0.15)) < 1e-3, `joint2 at ${body.joints[1]}`);
    const now = await state();
    assert.ok(Math.abs((now.position[1] ?? 0) - ((from[1] ?? 0) - 0.15)) < 1e-3, `joint2 at ${now.position[1]}`);
    assert.ok(atRest(now.velocity), 'at rest when it answers');
  });

  it('POST /stop ends a jog at once; commands that arrived before its answer do not restart it', async () => {
    await post('/robot/jog', { joints: [1, 0, 0, 0, 0, 0, 0], ttl_ms: 500 });
    await clock.advance(150);
    // Handed to the server in this order, each stamped on arrival as the listener does: the commands arrive before the
    // stop's answer for certain (over sockets their order at the server is up to the machine: a loaded one may read
    // them after the answer, and then they are new commands that jog, as documented).
    const inMemory = (route: string, body?: unknown) =>
      t.server.fetch(
        new Request(`${t.url}${route}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        }),
      );
    const stop = inMemory('/stop');
    const inFlight = [0, 1, 2].map(() => inMemory('/robot/jog', { joints: [1, 0, 0, 0, 0, 0, 0], ttl_ms: 500 }));
    assert.equal((await steppedUntilSettled(clock, stop, 'POST /stop')).status, 200);
    for (const res of await steppedUntilSettled(clock, Promise.all(inFlight), 'the commands in flight'))
      assert.equal(res.status, 409, await res.text());
    await jogOver(2000);
    const rest = await positions();
    await clock.advance(300);
    const later = await positions();
    for (const [j, q] of later.entries()) assert.ok(Math.abs(q - (rest[j] ?? 0)) < 1e-4, 'nothing moved after');
    assert.deepEqual(moments.at(-1), { state: 'ended', reason: 'stop' });
    // A command sent after the stop's answer jogs again.
    const again = await post('/robot/jog', { joints: [1, 0, 0, 0, 0, 0, 0], ttl_ms: 50 });
    assert.equal(again.status, 200, await again.text());
  });

  it('409 both ways: a jog while a move holds the arm, a move while a jog holds it', async () => {
    const move = send('/robot/move/joints', { joints: [-0.6, 0, 0, -1.57, 0, 1.57, 0], speed: 0.2 });
    // The move holds the arm once its request is read (in the machine's time), then moves for a while of the clock.
    await waitOnClock(
      clock,
      'the move to hold the arm',
      async () => t.server.services.arbiter.activity(),
      (a) => a !== undefined,
      20_000,
      2,
      20_000,
    );
    await clock.advance(200);
    const refused = await post('/robot/jog', { joints: [0, 1, 0, 0, 0, 0, 0] });
    assert.equal(refused.status, 409);
    assert.match(((await refused.json()) as { detail: string }).detail, /moving to joint angles/);
    assert.equal((await steppedUntilSettled(clock, move, 'the move')).status, 200);
    await jogOver();
    const jog = await post('/robot/jog', { joints: [0, 0.2, 0, 0, 0, 0, 0], ttl_ms: 300 });
    assert.equal(jog.status, 200, await jog.text());
    const blocked = await post('/robot/move/joints', { joints: WORK, speed: 1 });
    assert.equal(blocked.status, 409);
    assert.match(((await blocked.json()) as { detail: string }).detail, /jogging/);
    await jogOver();
    assert.equal((await post('/robot/move/joints', { joints: WORK, speed: 1 })).status, 200, 'free once at rest');
  });

  it('pause holds the jog still while commands keep coming', async () => {
    await post('/robot/jog', { joints: [0, 0, 1, 0, 0, 0, 0], ttl_ms: 500 });
    await clock.advance(100);
    const paused = await post('/robot/pause');
    const text = await paused.text();
    assert.equal(paused.status, 200, text);
    assert.equal((JSON.parse(text) as { paused: boolean }).paused, true, text);
    await clock.advance(100);
    const held = await positions();
    for (let i = 0; i < 4; i++) {
      const still = await post('/robot/jog', { joints: [0, 0, 1, 0, 0, 0, 0], ttl_ms: 500 });
      assert.match(((await still.json()) as { message: string }).message, /paused/);
      await clock.advance(50);
    }
    const q = await positions();
    for (const [j, value] of q.entries())
      assert.ok(Math.abs(value - (held[j] ?? 0)) < 1e-4, 'a paused jog does not move');
    assert.equal((await post('/robot/resume')).status, 200);
    await jogOver();
  });

  it('the jog WebSocket jogs on ros2: status while jogging, and the socket closing brakes the arm (socket closed)', async () => {
    const start = await positions();
    const ws = new WebSocket(`${t.url.replace('http', 'ws')}/robot/jog`, ['armgate.jog.v1']);
    const statuses: { type: string; jogging?: boolean; ended?: string }[] = [];
    ws.on('message', (data) => statuses.push(JSON.parse(String(data))));
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    const closed = new Promise<void>((resolve) => ws.once('close', () => resolve()));
    for (let i = 0; i < 8; i++) {
      ws.send(JSON.stringify({ joints: [0, 0, 0, 0, 0, 0, 0.5] }));
      await pace(50);
    }
    ws.close();
    // The close reaches the server in the machine's time: the clock stands meanwhile (the ttl does not lapse).
    await closed;
    await sleep(50);
    await jogOver();
    assert.ok(
      statuses.some((s) => s.type === 'status' && s.jogging === true),
      'a status while jogging',
    );
    assert.deepEqual(moments.at(-1), { state: 'ended', reason: 'socket closed' });
    const q = await positions();
    assert.ok((q[6] ?? 0) - (start[6] ?? 0) > 0.05, `joint7 moved ${(q[6] ?? 0) - (start[6] ?? 0)}`);
  });

  it('a Cartesian jog along x keeps the TCP on its line within 1 mm', async () => {
    const chain = t.server.services.safety?.chain;
    assert.ok(chain && chain.jointNames.length === 7, 'the TCP chain');
    const ws = createFkWorkspace(chain);
    const tcp = (q: readonly number[]) => {
      forwardKinematics(chain, q, ws);
      return Array.from(ws.tipPos);
    };
    const p0 = tcp(await positions());
    const samples: number[][] = [];
    const until = clock.nowMs() + 400;
    while (clock.nowMs() < until) {
      const res = await post('/robot/jog', { linear: [-1, 0, 0], frame: 'base' });
      assert.equal(res.status, 200, await res.text());
      samples.push(await positions());
      await clock.advance(30);
    }
    await jogOver();
    samples.push(await positions());
    const end = tcp(samples.at(-1) ?? WORK);
    assert.ok((p0[0] ?? 0) - (end[0] ?? 0) > 0.03, `moved ${(p0[0] ?? 0) - (end[0] ?? 0)} m`);
    for (const q of samples) {
      const p = tcp(q);
      const off = Math.hypot((p[1] ?? 0) - (p0[1] ?? 0), (p[2] ?? 0) - (p0[2] ?? 0));
      assert.ok(off < 1e-3, `${off} m off the line`);
    }
  });
});
