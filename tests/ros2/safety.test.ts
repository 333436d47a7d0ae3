/**
 * The safety envelope on ros2 over real DDS: the keep-out boxes go into MoveIt's planning scene
 * (/apply_planning_scene on the test stack) at start-up, targets outside the envelope are refused
 * before anything is sent (the stack sees no goal), and targets inside go as before. The stack's
 * model has the `tcp` link the bundled model lacks: armgate reads it from move_group's
 * robot_description. Run by `npm run test:ros2`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { call, detailOf, type MotionBody, WORK } from '../support/rcl-checks.ts';
import { startRos2Armgate, type Ros2Armgate } from './support/armgate.ts';
import { requireRos2, TestStack, useDomain } from './support/stack.ts';

requireRos2();
useDomain(3);

/** Joint 1 at +90 degrees swings the work pose's TCP to (0, 0.4, 0.6): into the fixture. */
const INTO_FIXTURE = [1.57, 0, 0, -1.57, 0, 1.57, 0];
const SAFE_TARGET = [0.3, 0.3, 0, -1.3, 0, 1.3, 0];
const FIXTURE = { name: 'fixture', min: [-0.25, 0.3, 0], max: [0.25, 0.8, 0.9] };
const WORKSPACE = { min: [-1, -1, 0.2], max: [1, 1, 1.1] };

describe('the safety envelope on ros2 over real DDS', () => {
  const stack = new TestStack();
  let armgate: Ros2Armgate;
  let url: string;
  before(async () => {
    await stack.start();
    armgate = await startRos2Armgate({ safety: { workspace: WORKSPACE, keep_out: [FIXTURE], plan_ttl_s: 30 } });
    url = armgate.url;
    const moved = await call<MotionBody>(url, '/robot/move/named', { name: 'work', speed: 0.5 });
    assert.equal(moved.body.success, true, moved.body.message);
  });
  after(async () => {
    await armgate?.close();
    await stack.stop();
  });

  it("puts each keep-out box into MoveIt's planning scene at start-up", async () => {
    const scene = await stack.waitFor((e) => e.event === 'planning_scene', 15_000);
    const objects = scene.objects as { id: string; operation: unknown }[];
    assert.ok(
      objects.some((o) => o.id.includes('fixture')),
      `the fixture box among ${JSON.stringify(objects)}`,
    );
  });

  it('refuses joint, pose and named targets outside the envelope naming the zone, with nothing sent to the stack', async () => {
    const from = stack.events.length;
    const joints = await call<MotionBody>(url, '/robot/move/joints', { joints: INTO_FIXTURE, speed: 0.5 });
    assert.equal(joints.status, 200, detailOf(joints));
    assert.equal(joints.body.success, false);
    assert.match(joints.body.message, /fixture/);
    const pose = await call<MotionBody>(url, '/robot/move/pose', { x: 0, y: 0.5, z: 0.5, a: 0, b: Math.PI, c: 0 });
    assert.equal(pose.body.success, false, pose.body.message);
    assert.match(pose.body.message, /fixture|envelope/);
    const planned = await call<MotionBody>(url, '/robot/move/joints', {
      joints: INTO_FIXTURE,
      speed: 0.5,
      dry_run: true,
    });
    assert.equal(planned.body.success, false, planned.body.message);
    assert.deepEqual(stack.since(from, 'goal'), [], 'no goal reached the stack');
    assert.deepEqual(
      stack.since(from, 'service').filter((e) => String(e.iface).includes('plan_kinematic_path')),
      [],
      'MoveIt was not asked to plan',
    );
  });

  it('sends a target inside the envelope to the stack as before', async () => {
    const from = stack.events.length;
    const moved = await call<MotionBody>(url, '/robot/move/joints', { joints: SAFE_TARGET, speed: 0.5 });
    assert.equal(moved.body.success, true, moved.body.message);
    assert.equal(stack.since(from, 'goal').length, 1);
    const back = await call<MotionBody>(url, '/robot/move/joints', { joints: WORK, speed: 0.5 });
    assert.equal(back.body.success, true, back.body.message);
  });
});
