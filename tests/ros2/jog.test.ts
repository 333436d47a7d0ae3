/**
 * Jog and teach on ros2 over real DDS (issue 34, item 7): armgate (its own process) streams short joint trajectories
 * on the controller's topic of the test stack; the stack's controller accepts every one, a held joint jog moves only
 * that joint, the dead-man brings the arm to rest, /stop ends a jog (commands in flight are 409), a step is exact; a
 * position taught where the jog left the arm lists as taught and move/named goes there (a MoveToJoints goal with its
 * angles). Run by `npm run test:ros2`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assertNear, call, detailOf, jointState, type MotionBody, sleep, WORK } from '../support/rcl-checks.ts';
import { startRos2Armgate, type Ros2Armgate } from './support/armgate.ts';
import { requireRos2, type StackEvent, TestStack, useDomain } from './support/stack.ts';

requireRos2();
useDomain(4);

const VMAX5 = 2.44;
const AMAX5 = 12.2173;
const jogMessages = (events: readonly StackEvent[]) => events.filter((e) => e.event === 'trajectory');

describe('jog and teach on ros2 over real DDS', () => {
  const stack = new TestStack();
  let armgate: Ros2Armgate;
  let url: string;
  const post = (route: string, body?: unknown) => call<Record<string, unknown>>(url, route, body);
  const atRest = async () => (await jointState(url)).velocity.every((v) => Math.abs(v) < 1e-3);
  /** Waits until the arm rests and a move is accepted again (the jog's end told). */
  const jogOver = async (timeoutMs = 8000) => {
    const until = performance.now() + timeoutMs;
    while (performance.now() < until) {
      if ((await atRest()) && !(await stack.state()).moving) {
        const probe = await post('/robot/jog', { joints: [0, 0, 0, 0, 0, 0, 0] });
        if (probe.status === 200 && probe.body.jogging === false) return;
      }
      await sleep(50);
    }
    assert.fail('the jog did not end');
  };

  before(async () => {
    await stack.start();
    armgate = await startRos2Armgate();
    url = armgate.url;
    const moved = await call<MotionBody>(url, '/robot/move/named', { name: 'work', speed: 0.5 });
    assert.equal(moved.body.success, true, moved.body.message);
  });
  after(async () => {
    const code = await armgate?.close();
    await stack.stop();
    assert.equal(code, 0, `armgate exit code; stderr: ${armgate?.run.err().slice(-2000)}`);
  });

  it('a held joint jog moves only that joint, every message accepted by the controller; the dead-man brings it to rest', async () => {
    const start = (await jointState(url)).position;
    const from = stack.events.length;
    const until = performance.now() + 800;
    while (performance.now() < until) {
      const res = await post('/robot/jog', { joints: [0, 0, 0, 0, 1, 0, 0] });
      assert.equal(res.status, 200, detailOf(res));
      assert.equal(res.body.jogging, true);
      await sleep(50);
    }
    await jogOver();
    const q = (await jointState(url)).position;
    const moved = (q[4] ?? 0) - (start[4] ?? 0);
    assert.ok(moved > 0.1, `joint5 moved ${moved} rad`);
    // At most the time held (plus the ttl) at jog speed: never faster than the jog speed.
    assert.ok(moved <= 0.25 * VMAX5 * (1.1 + 0.2) + (0.25 * VMAX5) ** 2 / (2 * AMAX5), `joint5 moved ${moved} rad`);
    const others = q.filter((_, j) => j !== 4);
    assertNear(
      others,
      start.filter((_, j) => j !== 4),
      1e-4,
      'the other joints stay',
    );
    const sent = jogMessages(stack.events.slice(from));
    assert.ok(sent.length > 10, `${sent.length} trajectories on the controller's topic`);
    // The test stack's controller says when it refuses a message (joint_trajectory_controller's validation); the
    // motion above is what shows it followed them.
    const refused = sent.filter((e) => e.accepted === false);
    assert.deepEqual(refused, [], 'the controller refused no message');
    const rest = (await jointState(url)).position;
    await sleep(300);
    assertNear((await jointState(url)).position, rest, 1e-4, 'at rest after the dead-man');
  });

  it('POST /stop ends a jog at once; commands in flight are 409; a step is exact (1e-3)', async () => {
    await post('/robot/jog', { joints: [0, 0, 0, 0, 0, -1, 0], ttl_ms: 500 });
    await sleep(150);
    const stop = post('/stop', {});
    const inFlight = [0, 1].map(() => post('/robot/jog', { joints: [0, 0, 0, 0, 0, -1, 0], ttl_ms: 500 }));
    assert.equal((await stop).status, 200);
    for (const res of await Promise.all(inFlight)) assert.equal(res.status, 409, detailOf(res));
    await jogOver();
    const rest = (await jointState(url)).position;
    await sleep(300);
    assertNear((await jointState(url)).position, rest, 1e-4, 'nothing moved after the stop');
    const before = (await jointState(url)).position;
    const step = await post('/robot/jog/step', { joint: 5, delta: 0.1 });
    assert.equal(step.status, 200, detailOf(step));
    assert.equal(step.body.success, true, JSON.stringify(step.body));
    const after = (await jointState(url)).position;
    assert.ok(
      Math.abs((after[4] ?? 0) - (before[4] ?? 0) - 0.1) < 1e-3,
      `joint5 stepped ${(after[4] ?? 0) - (before[4] ?? 0)}`,
    );
  });

  it('teaches where the jog left the arm; move/named goes there; the SRDF names are read-only', async () => {
    const here = (await jointState(url)).position;
    const put = await fetch(`${url}/robot/positions/jogged`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    assert.ok(put.status === 200 || put.status === 201, await put.text());
    const list = (await (await fetch(`${url}/robot/positions`)).json()) as { name: string; source: string }[];
    assert.equal(list.find((p) => p.name === 'jogged')?.source, 'taught');
    assert.ok(list.some((p) => p.name === 'work' && p.source === 'srdf'));
    const srdf = await fetch(`${url}/robot/positions/work`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    assert.equal(srdf.status, 409);
    const back = await call<MotionBody>(url, '/robot/move/joints', { joints: WORK, speed: 0.5 });
    assert.equal(back.body.success, true, back.body.message);
    const from = stack.events.length;
    const there = await call<MotionBody>(url, '/robot/move/named', { name: 'jogged', speed: 0.5 });
    assert.equal(there.body.success, true, there.body.message);
    assertNear((await jointState(url)).position, here, 2e-3, 'at the taught position');
    const goal = stack.since(from, 'goal').find((e) => String(e.iface).endsWith('move_to_joints'));
    assert.ok(goal, 'a MoveToJoints goal went to the stack');
    const removed = await fetch(`${url}/robot/positions/jogged`, { method: 'DELETE' });
    assert.equal(removed.status, 200, await removed.text());
  });
});
