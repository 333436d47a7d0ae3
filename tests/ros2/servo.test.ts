/**
 * Jogging through MoveIt Servo on ros2 over real DDS (issue 34, item 7): the test stack runs its Servo imitation
 * (`--servo`: /servo_node/switch_command_type, delta_joint_cmds, delta_twist_cmds; it records what arrives), and
 * armgate, with the endpoints file's default `servo: auto`, finds its command-type service and jogs through it: a held
 * joint jog switches the command type once (JOINT_JOG) and sends JointJog messages stamped with the node's clock at
 * the jog speed, then one zero command after the ttl and nothing more; nothing goes on the controller's topic. A
 * Cartesian jog switches to TWIST once and sends TwistStamped in the planning frame (base) or the TCP link (tool).
 * A /stop sends a zero command and nothing follows. Without a servo node (tests/ros2/jog.test.ts) the jog streams
 * trajectories on the controller's topic. Run by `npm run test:ros2`.
 *
 * On a loaded machine a renewal of a held jog can reach armgate later than the ttl after the one before: the
 * dead-man then lapses (a zero command) and the late renewal jogs again. What the stack recorded is checked against
 * when each renewal went and was answered: a zero command only where the jog had lapsed (see {@link lapsedAt}), so a
 * hold whose renewals all came in time is one stream of commands at jog speed ending in one zero.
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
/** armgate.jog.ttl_ms's default (s): the settings written for the test keep it and the holds post no ttl_ms. */
const TTL_S = 0.2;
/**
 * Slack (s) between the stamps (the ROS clock: the wall clock to the nanosecond) and the test's Date.now() (whole
 * milliseconds), and for armgate timing the ttl on its monotonic clock.
 */
const CLOCK_S = 0.002;

/** A jog command the test posted: when it went and when its answer came (s, the wall clock: the stamps' clock). */
interface Renewal {
  readonly sentS: number;
  readonly answeredS: number;
}

/**
 * Whether a zero command stamped `stampS` came where the jog held by `renewals` had lapsed: at least the ttl after a
 * renewal went (armgate read it no sooner) and before the next one was answered (armgate, one thread, sent the
 * zero before it read that one; the last renewal has no next). A renewal answered within the ttl of the one
 * before leaves no such moment between them.
 */
function lapsedAt(stampS: number, renewals: readonly Renewal[]): boolean {
  return renewals.some(
    (r, k) => stampS >= r.sentS + TTL_S - CLOCK_S && stampS < (renewals[k + 1]?.answeredS ?? Infinity) + CLOCK_S,
  );
}

describe('jogging through MoveIt Servo on ros2 over real DDS', () => {
  const stack = new TestStack(['--servo']);
  let armgate: Ros2Armgate;
  let url: string;
  const post = (route: string, body?: unknown) => call<Record<string, unknown>>(url, route, body);
  const commands = (from: number) => stack.events.slice(from).filter((e) => e.event === 'servo_command');
  const switches = (from: number) => stack.events.slice(from).filter((e) => e.event === 'servo_switch');
  /** Posts `body` every 50 ms for `ms`; returns when each post went and was answered. */
  const hold = async (body: unknown, ms: number): Promise<Renewal[]> => {
    const renewals: Renewal[] = [];
    const until = performance.now() + ms;
    while (performance.now() < until) {
      const sentS = Date.now() / 1000;
      const res = await post('/robot/jog', body);
      renewals.push({ sentS, answeredS: Date.now() / 1000 });
      assert.equal(res.status, 200, detailOf(res));
      assert.equal(res.body.jogging, true);
      await sleep(50);
    }
    return renewals;
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
  const twistOf = (e: StackEvent) =>
    e.twist as {
      linear: { x: number; y: number; z: number };
      angular: { x: number; y: number; z: number };
    };
  const isZero = (e: StackEvent) =>
    e.kind === 'twist'
      ? [...Object.values(twistOf(e).linear), ...Object.values(twistOf(e).angular)].every((x) => x === 0)
      : velocities(e).every((x) => x === 0);
  /**
   * The zero commands in `sent` (a hold's commands, ending in its zero): each after a moving command (one per
   * lapse) and only where the jog had lapsed; the last one no sooner than the ttl after the last renewal went.
   */
  const checkZeros = (sent: readonly StackEvent[], renewals: readonly Renewal[]) => {
    assert.ok(isZero(sent.at(-1) as StackEvent), 'a zero command after the ttl');
    const lastSentS = renewals.at(-1)?.sentS ?? Infinity;
    assert.ok(
      Number(sent.at(-1)?.stamp_s) >= lastSentS + TTL_S - CLOCK_S,
      `the zero came ${Number(sent.at(-1)?.stamp_s) - lastSentS} s after the last renewal went: no sooner than the ttl`,
    );
    sent.forEach((e, k) => {
      if (!isZero(e)) return;
      assert.ok(k > 0 && !isZero(sent[k - 1] as StackEvent), `command ${k}: one zero per lapse, after moving ones`);
      assert.ok(
        lapsedAt(Number(e.stamp_s), renewals),
        `command ${k} of ${sent.length} is a zero where the jog held: stamp ${e.stamp_s}, renewals ${JSON.stringify(renewals)}`,
      );
    });
  };

  before(async () => {
    await stack.start();
    armgate = await startRos2Armgate();
    url = armgate.url;
    // Discovery: the servo node's service is seen by armgate's node (a jog before that takes the trajectory path).
    await sleep(1000);
  });
  after(async () => {
    const code = await armgate?.close();
    await stack.stop();
    assert.equal(code, 0, `armgate exit code; stderr: ${armgate?.run.err().slice(-2000)}`);
  });

  it('a held joint jog: the command type switched once, JointJog at jog speed stamped with the node clock, a zero after the ttl, then nothing', async () => {
    const from = stack.events.length;
    const renewals = await hold({ joints: [0, 0, 0, 0, 1, 0, 0] }, 700);
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
    // Every command is joint5 at jog speed or a zero, and a zero only where the jog lapsed: at the end, after the
    // ttl, and mid-stream only where a renewal came late (none where every renewal came in time).
    const moving = sent.filter((e) => !isZero(e));
    for (const e of moving) {
      const v = velocities(e);
      assert.ok(Math.abs((v[4] ?? 0) - JOINT_SPEED * VMAX5) < 1e-9, `joint5 at jog speed: ${v[4]}`);
      assert.ok(
        v.every((x, j) => j === 4 || x === 0),
        `only joint5 moves: ${v}`,
      );
    }
    assert.deepEqual(velocities(sent.at(-1) as StackEvent), [0, 0, 0, 0, 0, 0, 0], 'a zero command after the ttl');
    checkZeros(sent, renewals);
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
    const renewals = await hold({ linear: [1, 0, 0] }, 400);
    const base = await quiet(from);
    assert.deepEqual(
      switches(from).map((e) => e.command_type),
      [1],
      'one switch, to TWIST',
    );
    assert.ok(
      base.every((e) => e.kind === 'twist' && e.taken === true && e.frame_id === 'base_link'),
      'twists taken, in the base frame',
    );
    const moving = base.filter((e) => !isZero(e));
    assert.ok(moving.length >= 2, `${moving.length} twists`);
    for (const e of moving) {
      assert.equal(e.kind, 'twist');
      assert.equal(e.taken, true);
      assert.equal(e.frame_id, 'base_link');
      const twist = twistOf(e);
      assert.ok(Math.abs(twist.linear.x - TCP_SPEED) < 1e-9, `linear.x ${twist.linear.x}`);
      assert.equal(twist.linear.y, 0);
      assert.equal(twist.angular.x, 0);
    }
    checkZeros(base, renewals);
    const tool = stack.events.length;
    const toolRenewals = await hold({ linear: [0, 0, 1], frame: 'tool' }, 300);
    const inTool = await quiet(tool);
    checkZeros(inTool, toolRenewals);
    assert.deepEqual(switches(tool), [], 'TWIST already');
    assert.ok(inTool.length >= 2, `${inTool.length} twists: at least one moving and the zero`);
    assert.ok(
      inTool.every((e) => e.frame_id === 'tcp'),
      'the tool frame is the TCP link',
    );
  });

  it('POST /stop ends a Servo jog at once: a zero command, nothing after', async () => {
    // The stop goes once Servo has taken three of the jog's commands (a stop before its command type is switched
    // has nothing to stop there). It shows the stop ends the jog when armgate read it before the 500 ms ttl lapsed
    // (answered within the ttl after the jog went); on a loaded machine it may come later: then another attempt.
    for (let attempt = 1; ; attempt++) {
      const from = stack.events.length;
      const jogSentS = Date.now() / 1000;
      const res = await post('/robot/jog', { joints: [0, 1, 0, 0, 0, 0, 0], ttl_ms: 500 });
      assert.equal(res.status, 200, detailOf(res));
      await stack.waitFor(() => commands(from).length >= 3, 8000, from);
      const stopSentS = Date.now() / 1000;
      assert.equal((await post('/stop', {})).status, 200);
      const stopAnsweredS = Date.now() / 1000;
      const sent = await quiet(from);
      assert.ok(sent.length >= 3, `${sent.length} commands`);
      assert.deepEqual(velocities(sent.at(-1) as StackEvent), [0, 0, 0, 0, 0, 0, 0], 'the last one is zero');
      if (stopAnsweredS < jogSentS + 0.5 - CLOCK_S) {
        assert.ok(
          sent.slice(0, -1).every((e) => !isZero(e)),
          'one zero: the stop ended the jog (no ttl lapsed before)',
        );
        const zeroS = Number(sent.at(-1)?.stamp_s);
        assert.ok(
          zeroS >= stopSentS - CLOCK_S && zeroS <= stopAnsweredS + CLOCK_S,
          `the zero went with the stop (stamp ${zeroS}, stop sent ${stopSentS}, answered ${stopAnsweredS}), before the 500 ms ttl`,
        );
        return;
      }
      assert.ok(attempt < 3, `the stop was not answered within the 500 ms ttl in ${attempt} attempts`);
    }
  });
});
