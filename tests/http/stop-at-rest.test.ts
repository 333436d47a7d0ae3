/**
 * A stop at rest leaves the arm free at once; while the arm still decelerates after a stop, a motion request gets
 * 409 with Retry-After and the time left (issue 24, item 6). The simulated arm at time_scale 1, the app in memory on a
 * clock the test steps (tests/support/stepped.ts): each request steps it until answered, the waits move it.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { SteppedClock } from '../../lib/clock.ts';
import { type InMemory, jointStates, post, send, WORK } from '../support/live.ts';
import { PROJECT_ROOT, type TestApp } from '../support/server.ts';
import {
  atRestOnClock,
  createSteppedApp,
  steppedTarget,
  steppedUntilSettled,
  waitOnClock,
} from '../support/stepped.ts';

/** The bundled limits with every acceleration limit divided by `factor` (a long, observable deceleration). */
async function slowLimitsFile(dir: string, factor: number): Promise<string> {
  const text = await readFile(path.join(PROJECT_ROOT, 'share/armgate/config/joint_limits.yaml'), 'utf8');
  const slowed = text.replace(
    /max_acceleration: ([\d.]+)/g,
    (_m, a: string) => `max_acceleration: ${Number(a) / factor}`,
  );
  assert.notEqual(slowed, text);
  const file = path.join(dir, 'joint_limits.yaml');
  await writeFile(file, slowed);
  return file;
}

const moveJoints = (app: InMemory, joints: readonly number[], speed = 1) =>
  post<{ success: boolean; message: string }>(app, '/robot/move/joints', { joints, speed });

describe('a stop at rest never blocks the next command', () => {
  let server: TestApp;
  let app: InMemory;
  let clock: SteppedClock;
  /** At rest, waited for on the clock. */
  const atRest = (target: InMemory) => atRestOnClock(target, clock);
  before(async () => {
    const stepped = await createSteppedApp();
    server = stepped.app;
    clock = stepped.clock;
    app = steppedTarget(server, clock);
  });
  after(() => server.close());

  it('stop at rest then move, 20 times in a row: 20 successes', async () => {
    await atRest(app);
    const answers: string[] = [];
    for (let i = 0; i < 20; i++) {
      const stopped = await post(app, '/stop');
      assert.equal(stopped.status, 200, JSON.stringify(stopped.body));
      const target = [...WORK];
      target[0] = i % 2 === 0 ? 0.02 : 0;
      const moved = await moveJoints(app, target);
      answers.push(`${moved.status} ${JSON.stringify(moved.body)}`);
      assert.equal(moved.status, 200, `round ${i + 1}: ${answers.at(-1)}`);
      assert.equal(moved.body.success, true, `round ${i + 1}: ${answers.at(-1)}`);
    }
    assert.equal(answers.length, 20);
  });
});

describe('a motion request while the arm decelerates after a stop', () => {
  let server: TestApp;
  let clock: SteppedClock;
  let app: InMemory;
  let dir: string;
  /** Acceleration limits an eighth of the bundled ones: joint1 needs 1.6 s to brake from full speed. */
  const FACTOR = 8;
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'armgate-stop-'));
    ({ app: server, clock } = await createSteppedApp({ web: { joint_limits: await slowLimitsFile(dir, FACTOR) } }));
    app = steppedTarget(server, clock);
  });
  after(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('gets 409 with Retry-After and the time left; after that time the move is accepted', async () => {
    await atRestOnClock(app, clock);
    const far = [...WORK];
    far[0] = 2.5;
    // Sent without stepping: the clock moves with the test's own waits and requests, in their order.
    const moving = moveJoints(server, far);
    await waitOnClock(
      clock,
      'joint1 at speed',
      () => jointStates(server),
      (s) => Math.abs(s.velocity[0] ?? 0) > 0.8,
      20_000,
      2,
      // The move is planned in the machine's time while the clock runs on.
      15_000,
    );
    const stopped = await post(app, '/stop');
    assert.equal(stopped.status, 200);
    const res = await send(app, '/robot/move/joints', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ joints: WORK, speed: 1 }),
    });
    const body = (await res.json()) as { detail: string };
    assert.equal(res.status, 409, JSON.stringify(body));
    const left = /at rest in (\d+\.\d+) s/.exec(body.detail);
    assert.ok(left, body.detail);
    const leftS = Number(left[1]);
    // joint1 at more than 0.8 rad/s brakes at 8.5521 / 8 rad/s^2: up to 1.6 s, at least a few tenths were left.
    assert.ok(leftS > 0 && leftS <= 1.71 / (8.5521 / FACTOR) + 1e-3, body.detail);
    assert.equal(res.headers.get('retry-after'), String(Math.max(1, Math.ceil(leftS))));
    assert.match(body.detail, /decelerating/);
    // The stopped move answers "stopped" once the arm is at rest.
    const ended = await steppedUntilSettled(clock, moving, 'the stopped move');
    assert.equal(ended.body.success, false);
    assert.match(ended.body.message, /stopped/);
    const again = await moveJoints(app, WORK);
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.equal(again.body.success, true, again.body.message);
  });

  it('a trajectory sent while the arm decelerates is refused too (it does not preempt the braking)', async () => {
    await atRestOnClock(app, clock);
    const far = [...WORK];
    far[0] = -2.5;
    // Sent without stepping: the clock moves with the test's own waits and requests, in their order.
    const moving = moveJoints(server, far);
    await waitOnClock(
      clock,
      'joint1 at speed',
      () => jointStates(server),
      (s) => Math.abs(s.velocity[0] ?? 0) > 0.8,
      20_000,
      2,
      // The move is planned in the machine's time while the clock runs on.
      15_000,
    );
    assert.equal((await post(app, '/stop')).status, 200);
    const here = (await jointStates(app)).position;
    const sent = await send(app, '/trajectory/send', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        joint_names: [...Array(7).keys()].map((j) => `joint${j + 1}`),
        points: [{ positions: here, time_from_start: 2 }],
      }),
    });
    assert.equal(sent.status, 409, await sent.text());
    assert.ok(Number(sent.headers.get('retry-after')) >= 1);
    await steppedUntilSettled(clock, moving, 'the stopped move');
  });
});
