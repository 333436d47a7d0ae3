/**
 * Jogging through MoveIt Servo on ros2 over real DDS (issue 34, item 7): the test stack runs its Servo imitation
 * (`--servo`: /servo_node/switch_command_type, delta_joint_cmds, delta_twist_cmds; it records what arrives), and
 * armgate, with the endpoints file's default `servo: auto`, finds its command-type service and jogs through it: a held
 * joint jog switches the command type once (JOINT_JOG) and sends JointJog messages stamped with the node's clock at
 * the jog speed, then one zero command after the ttl and nothing more; nothing goes on the controller's topic. A
 * Cartesian jog switches to TWIST once and sends TwistStamped in the planning frame (base) or the TCP link (tool).
 * A /stop sends a zero command and nothing follows. Without a servo node (tests/ros2/jog.test.ts) the jog streams
 * trajectories on the controller's topic. Run by `npm run test:ros2`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { call, detailOf, sleep } from '../support/rcl-checks.ts';
import { startRos2Armgate, type Ros2Armgate } from './support/armgate.ts';
import { requireRos2, type StackEvent, TestStack, useDomain } from './support/stack.ts';

requireRos2();
useDomain(5);

const VMAX5 = 2.44;
const JOINT_SPEED = 0.25;
const TCP_SPEED = 0.25;
const JOINTS = ['joint1', 'joint2', 'joint3', 'joint4', 'joint5', 'joint6', 'joint7'];

describe('jogging through MoveIt Servo on ros2 over real DDS', () => {
  const stack = new TestStack(['--servo']);
  let armgate: Ros2Armgate;
  let url: string;
  const post = (route: string, body?: unknown) => call<Record<string, unknown>>(url, route, body);
  const commands = (from: number) => stack.events.slice(from).filter((e) => e.event === 'servo_command');
  const switches = (from: number) => stack.events.slice(from).filter((e) => e.event === 'servo_switch');
  /** Posts `body` every 50 ms for `ms`. */
  const hold = async (body: unknown, ms: number) => {
    const until = performance.now() + ms;
    while (performance.now() < until) {
      const res = await post('/robot/jog', body);
      assert.equal(res.status, 200, detailOf(res));
      assert.equal(res.body.jogging, true);
      await sleep(50);
    }
  };
  /** Waits until no command arrived for `quietMs`; returns the commands since `from`. */
  const quiet = async (from: number, quietMs = 600, timeoutMs = 8000) => {
    const until = performance.now() + timeoutMs;
    let count = -1;
    while (performance.now() < until) {
      const now = commands(from).length;
      if (now === count) return commands(from);
      count = now;
      await sleep(quietMs);
    }
    assert.fail('commands to Servo did not stop');
  };
  const velocities = (e: StackEvent) => e.velocities as number[];

  before(async () => {
    await stack.start();
    armgate = await startRos2Armgate();
    url = armgate.url;
    // Discovery: the servo node's service is seen by armgate's node (a jog before that takes the trajectory path).
    await sleep(1000);
  });
  after(async () => {
    const code = await armgate?.close();
    await armgate?.removeBags();
    await stack.stop();
    assert.equal(code, 0, `armgate exit code; stderr: ${armgate?.run.err().slice(-2000)}`);
  });

  it('a held joint jog: the command type switched once, JointJog at jog speed stamped with the node clock, a zero after the ttl, then nothing', async () => {
    const from = stack.events.length;
    await hold({ joints: [0, 0, 0, 0, 1, 0, 0] }, 700);
    const sent = await quiet(from);
    assert.deepEqual(
      switches(from).map((e) => [e.command_type, e.success]),
      [[0, true]],
      'one switch, to JOINT_JOG, before the commands',
    );
    assert.ok(sent.length > 5, `${sent.length} JointJog commands in 0.7 s (one every 20 ms while held)`);
    for (const e of sent) {
      assert.equal(e.kind, 'joint_jog');
      assert.equal(e.taken, true, 'every command came after the switch');
      assert.deepEqual(e.joint_names, JOINTS);
      assert.ok(Math.abs(Number(e.age_s)) < 0.5, `stamped with the node's clock (age on receipt ${e.age_s} s)`);
    }
    const stamps = sent.map((e) => Number(e.stamp_s));
    assert.ok(
      stamps.every((s, k) => k === 0 || s >= (stamps[k - 1] ?? 0)),
      'stamps never go back',
    );
    const moving = sent.slice(0, -1);
    for (const e of moving) {
      const v = velocities(e);
      assert.ok(Math.abs((v[4] ?? 0) - JOINT_SPEED * VMAX5) < 1e-9, `joint5 at jog speed: ${v[4]}`);
      assert.ok(
        v.every((x, j) => j === 4 || x === 0),
        `only joint5 moves: ${v}`,
      );
    }
    assert.deepEqual(velocities(sent.at(-1) as StackEvent), [0, 0, 0, 0, 0, 0, 0], 'a zero command after the ttl');
    // The last command stops within the ttl (200 ms) and a few periods of the last post: nothing on the controller.
    const last = Number(sent.at(-1)?.stamp_s);
    const lastMoving = Number(moving.at(-1)?.stamp_s);
    assert.ok(last - lastMoving < 0.2 + 0.1, `the zero came ${last - lastMoving} s after the last moving command`);
    const trajectories = stack.events.slice(from).filter((e) => e.event === 'trajectory');
    assert.deepEqual(trajectories, [], 'nothing on the controller topic while Servo jogs');
    // A second joint jog: no second switch.
    const again = stack.events.length;
    await hold({ joints: [0, 0, 0, 0, -1, 0, 0] }, 200);
    await quiet(again);
    assert.deepEqual(switches(again), [], 'the command type is JOINT_JOG already');
  });

  it('a Cartesian jog: TWIST once, TwistStamped in the base frame or the TCP link at tcp speed', async () => {
    const from = stack.events.length;
    await hold({ linear: [1, 0, 0] }, 400);
    const base = await quiet(from);
    assert.deepEqual(
      switches(from).map((e) => e.command_type),
      [1],
      'one switch, to TWIST',
    );
    const moving = base.slice(0, -1);
    assert.ok(moving.length >= 2, `${moving.length} twists`);
    for (const e of moving) {
      assert.equal(e.kind, 'twist');
      assert.equal(e.taken, true);
      assert.equal(e.frame_id, 'base_link');
      const twist = e.twist as { linear: { x: number; y: number; z: number }; angular: { x: number } };
      assert.ok(Math.abs(twist.linear.x - TCP_SPEED) < 1e-9, `linear.x ${twist.linear.x}`);
      assert.equal(twist.linear.y, 0);
      assert.equal(twist.angular.x, 0);
    }
    const tool = stack.events.length;
    await hold({ linear: [0, 0, 1], frame: 'tool' }, 300);
    const inTool = await quiet(tool);
    assert.deepEqual(switches(tool), [], 'TWIST already');
    assert.ok(inTool.length >= 2, `${inTool.length} twists: at least one moving and the zero`);
    assert.ok(
      inTool.every((e) => e.frame_id === 'tcp'),
      'the tool frame is the TCP link',
    );
  });

  it('POST /stop ends a Servo jog at once: a zero command, nothing after', async () => {
    const from = stack.events.length;
    const res = await post('/robot/jog', { joints: [0, 1, 0, 0, 0, 0, 0], ttl_ms: 500 });
    assert.equal(res.status, 200, detailOf(res));
    await sleep(150);
    assert.equal((await post('/stop', {})).status, 200);
    const sent = await quiet(from);
    assert.ok(sent.length >= 3, `${sent.length} commands`);
    assert.deepEqual(velocities(sent.at(-1) as StackEvent), [0, 0, 0, 0, 0, 0, 0], 'the last one is zero');
    const span = Number(sent.at(-1)?.stamp_s) - Number(sent[0]?.stamp_s);
    assert.ok(span < 0.45, `commands stopped with the stop (${span} s), before the 500 ms ttl`);
  });
});
