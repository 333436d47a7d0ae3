/**
 * Jogging through MoveIt Servo (lib/ros/rcl-servo.ts) through RclJog's public surface, over a recording Servo port
 * (no ROS): the command type is asked once per kind even when Servo answers slowly while commands keep coming; the
 * commands carry the port's stamp and stop after the ttl with one zero command and the jog's end (ttl); a pause sends
 * zero velocities; without Servo on the graph, a configured envelope, or a bounded step, the trajectory path as before.
 * The real-graph counterpart is tests/ros2/servo.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Chain } from '../../lib/kinematics/chain.ts';
import type { JogEvent } from '../../lib/ros/context.ts';
import type { JointStateMsg, JointTrajectoryMsg } from '../../lib/ros/messages.ts';
import { RclJog } from '../../lib/ros/rcl-jog.ts';
import type { JointJogMsg, ServoCommandKind, Stamp, TwistStampedMsg } from '../../lib/ros/rcl-servo.ts';
import { ok } from '../../lib/result.ts';
import type { JointLimits } from '../../lib/robot/limits.ts';
import { type Clock, SteppedClock, systemClock } from '../../lib/clock.ts';

const NAMES = ['joint1', 'joint2', 'joint3', 'joint4', 'joint5', 'joint6', 'joint7'];
const VMAX = [1.71, 1.71, 1.75, 2.27, 2.44, 3.14, 3.14];
const LIMITS: JointLimits = {
  jointNames: NAMES,
  minRad: NAMES.map(() => -2.9),
  maxRad: NAMES.map(() => 2.9),
  maxVelRadS: VMAX,
  maxAccRadS2: NAMES.map(() => 8),
  maxJerkRadS3: NAMES.map(() => 100),
  cartesian: { maxTransVelMS: 1, maxTransAccMS2: 1, maxRotVelRadS: 1 } as JointLimits['cartesian'],
};
const SPEEDS = { jointSpeed: 0.25, tcpSpeedMS: 0.25, tcpAngularSpeedRadS: 0.5 };
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const EMPTY_CHAIN: Chain = {
  jointNames: [],
  originPos: new Float64Array(0),
  originRot: new Float64Array(0),
  axis: new Float64Array(0),
  tipPos: new Float64Array(3),
  tipRot: new Float64Array(9),
};

function rig(options: { present?: boolean; switchDelayMs?: number; envelope?: boolean; clock?: Clock } = {}) {
  const clock = options.clock ?? systemClock;
  const switches: ServoCommandKind[] = [];
  const joints: JointJogMsg[] = [];
  const twists: TwistStampedMsg[] = [];
  const trajectories: JointTrajectoryMsg[] = [];
  const events: JogEvent[] = [];
  let rate = 1;
  let tick = 0;
  const state = (): JointStateMsg => ({
    header: { stamp: { sec: 0, nanosec: 0 }, frame_id: '' },
    name: [...NAMES],
    position: NAMES.map(() => 0),
    velocity: NAMES.map(() => 0),
    effort: [],
  });
  const port = {
    limits: LIMITS,
    jointNames: NAMES,
    nowMs: () => clock.nowMs(),
    after: (ms: number, fn: () => void) => clock.after(ms, fn),
    state,
    nextState: async (timeoutMs: number) => {
      await sleep(Math.min(timeoutMs, 10));
      return state();
    },
    publish: (msg: JointTrajectoryMsg) => {
      trajectories.push(msg);
      return ok(undefined);
    },
    rate: () => rate,
    log: () => undefined,
    servo: {
      frames: { base: 'base_link', tool: 'tcp' },
      port: {
        present: () => options.present ?? true,
        switchCommandType: async (kind: ServoCommandKind) => {
          switches.push(kind);
          await sleep(options.switchDelayMs ?? 0);
          return true;
        },
        publishJointJog: (msg: JointJogMsg) => {
          joints.push(msg);
          return ok(undefined);
        },
        publishTwist: (msg: TwistStampedMsg) => {
          twists.push(msg);
          return ok(undefined);
        },
        stamp: (): Stamp => ({ sec: 1000, nanosec: ++tick }),
      },
    },
  };
  const envelope = options.envelope ? ({ workspace: undefined, keepOut: [] } as never) : undefined;
  const jog = new RclJog(port, SPEEDS, ok({ chain: EMPTY_CHAIN, envelope }));
  jog.onEvents((event) => events.push(event));
  const ended = () =>
    new Promise<JogEvent>((resolve) => {
      const off = jog.onEvents((event) => {
        if (event.state === 'ended') {
          off();
          resolve(event);
        }
      });
    });
  return { jog, switches, joints, twists, trajectories, events, ended, setRate: (r: number) => (rate = r) };
}

const joint5 = { kind: 'joints', fractions: [0, 0, 0, 0, 1, 0, 0] } as const;

describe('jogging through MoveIt Servo (RclJog over a recording Servo port)', () => {
  it("sends a command each 20 ms of the port's clock, none while it stands still, and ends at its ttl on it", async () => {
    const clock = new SteppedClock();
    const r = rig({ clock });
    const end = r.ended();
    assert.deepEqual(r.jog.jog({ target: joint5, ttlS: 0.5 }), ok(undefined));
    // The switch of command type is an answer of another process (the machine's time): then the first command.
    for (let i = 0; i < 500 && r.joints.length === 0; i++) await sleep(2);
    const first = r.joints.length;
    assert.equal(first, 1, 'the first command once the switch is answered');
    await sleep(200);
    assert.equal(r.joints.length, first, 'no command in 200 ms of the machine while the clock stands still');
    await clock.advance(100);
    assert.equal(r.joints.length, first + 5, 'one each 20 ms of the clock');
    // Past the ttl on the clock: a zero command, then the end once the arm is seen at rest (on the clock too).
    let ended = false;
    void end.then(() => {
      ended = true;
    });
    for (let i = 0; i < 1000 && !ended; i++) {
      await clock.advance(20);
      await sleep(1);
    }
    assert.equal((await end).reason, 'ttl');
    assert.deepEqual(r.joints.at(-1)?.velocities, [0, 0, 0, 0, 0, 0, 0], 'a zero command last');
    assert.equal(r.joints.length, first + 5 + 20, 'a command each period to the ttl (0.5 s), then the zero');
  });

  it('one switch while commands keep coming during a slow answer; stamped JointJog; a zero and the end after the ttl', async () => {
    const r = rig({ switchDelayMs: 120 });
    const end = r.ended();
    const until = performance.now() + 300;
    while (performance.now() < until) {
      assert.deepEqual(r.jog.jog({ target: joint5, ttlS: 0.1 }), ok(undefined));
      assert.equal(r.jog.active(), true);
      await sleep(20);
    }
    const event = await end;
    assert.equal(event.reason, 'ttl');
    assert.deepEqual(r.switches, [0], 'JOINT_JOG asked once');
    assert.ok(r.joints.length >= 3, `${r.joints.length} commands`);
    assert.deepEqual(r.trajectories, [], 'nothing on the controller topic');
    const moving = r.joints.slice(0, -1);
    for (const msg of moving) {
      assert.deepEqual(msg.joint_names, NAMES);
      assert.ok(Math.abs((msg.velocities[4] ?? 0) - 0.25 * 2.44) < 1e-12);
      assert.equal(msg.header.stamp.sec, 1000, "the port's (node's) clock");
    }
    assert.deepEqual(r.joints.at(-1)?.velocities, [0, 0, 0, 0, 0, 0, 0], 'a zero command last');
    const count = r.joints.length;
    await sleep(100);
    assert.equal(r.joints.length, count, 'nothing after the end');
    assert.equal(r.jog.active(), false);
  });

  it('a pause sends zero velocities while held; a tool-frame twist in the TCP link', async () => {
    const r = rig();
    r.setRate(0);
    r.jog.jog({ target: joint5, ttlS: 0.1 });
    await r.ended();
    assert.ok(r.joints.length > 0);
    assert.ok(r.joints.every((m) => m.velocities.every((v) => v === 0)));
    r.setRate(0.5);
    const end = r.ended();
    r.jog.jog({ target: { kind: 'cartesian', linear: [0, 0, 1], angular: [0, 0, 0], frame: 'tool' }, ttlS: 0.06 });
    await end;
    assert.deepEqual(r.switches, [0, 1], 'TWIST asked for the Cartesian jog');
    assert.equal(r.twists[0]?.header.frame_id, 'tcp');
    assert.ok(Math.abs((r.twists[0]?.twist.linear.z ?? 0) - 0.25 * 0.5) < 1e-12, 'tcp speed x the override');
  });

  it('a stop: one zero command, nothing after, ended by the stop', async () => {
    const r = rig();
    const end = r.ended();
    r.jog.jog({ target: joint5, ttlS: 0.5 });
    await sleep(60);
    r.jog.halt();
    const count = r.joints.length;
    assert.deepEqual(r.joints.at(-1)?.velocities, [0, 0, 0, 0, 0, 0, 0]);
    assert.equal((await end).reason, 'stop');
    await sleep(100);
    assert.equal(r.joints.length, count);
  });

  it('the trajectory path without Servo on the graph, with an envelope, or for a step', async () => {
    for (const options of [{ present: false }, { envelope: true }]) {
      const r = rig(options);
      const end = r.ended();
      r.jog.jog({ target: joint5, ttlS: 0.06 });
      await end;
      assert.deepEqual([r.switches, r.joints], [[], []], JSON.stringify(options));
      assert.ok(r.trajectories.length > 0, 'trajectories on the controller topic');
    }
    const r = rig();
    const end = r.ended();
    r.jog.jog({ target: joint5, ttlS: 1, goal: { amount: 0.01 } });
    await end;
    assert.deepEqual([r.switches, r.joints], [[], []], 'a step');
    assert.ok(r.trajectories.length > 0, 'the step on the controller topic');
  });
});
