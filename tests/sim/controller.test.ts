import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { planPtp } from '../../lib/planning/ptp.ts';
import {
  createSample,
  type JointTrajectory,
  sampleTrajectory,
  trajectoryDuration,
} from '../../lib/planning/trajectory.ts';
import type { JointLimits } from '../../lib/robot/limits.ts';
import { type ControllerEvent, TrajectoryController } from '../../lib/sim/controller.ts';
import { bundledLimits, JOINTS, WORK } from '../support/arm.ts';

const OTHER = [0.6, 0.4, -0.3, -1.1, 0.2, 1.2, 0.5];
/** 500 Hz, the simulator's default controller rate. */
const DT = 0.002;

// Loaded at the top (not in a top-level hook): the file can share a test process with others (scripts/test-groups.mjs).
const limits: JointLimits = await bundledLimits();

/**
 * A controller driven with explicit times (no timers). Every update is checked for jumps: no joint
 * moves more than its velocity limit allows in one period.
 */
class Harness {
  readonly events: ControllerEvent[] = [];
  readonly controller: TrajectoryController;
  t = 0;

  constructor(initial: readonly number[] = WORK) {
    this.controller = new TrajectoryController(limits, initial, (event) => this.events.push(event));
  }

  get q(): number[] {
    return Array.from(this.controller.state.q);
  }

  get qd(): number[] {
    return Array.from(this.controller.state.qd);
  }

  /** One controller period; `each` sees the state before and after. */
  step(each?: (before: { q: number[]; qd: number[] }) => void): void {
    const before = { q: this.q, qd: this.qd };
    this.t += DT;
    this.controller.update(this.t, DT);
    const after = this.controller.state.q;
    for (let j = 0; j < 7; j++) {
      const dq = Math.abs((after[j] ?? 0) - (before.q[j] ?? 0));
      const allowed = (limits.maxVelRadS[j] ?? 0) * DT * 1.0001;
      if (dq > allowed)
        assert.fail(`${JOINTS[j]} jumps by ${dq} rad in one period at t = ${this.t.toFixed(3)} s (allowed ${allowed})`);
    }
    each?.(before);
  }

  /** Runs for `seconds` of controller time. */
  run(seconds: number, each?: (before: { q: number[]; qd: number[] }) => void): void {
    const steps = Math.round(seconds / DT);
    for (let k = 0; k < steps; k++) this.step(each);
  }

  /** Runs until the controller holds (or `maxSeconds` pass). */
  runUntilIdle(maxSeconds: number, each?: (before: { q: number[]; qd: number[] }) => void): void {
    const steps = Math.round(maxSeconds / DT);
    for (let k = 0; k < steps && this.controller.isMoving(); k++) this.step(each);
    assert.equal(this.controller.isMoving(), false, `still moving after ${maxSeconds} s`);
  }

  kinds(): string[] {
    return this.events.map((e) => e.kind);
  }
}

const onePoint = (
  positions: readonly number[],
  timeFromStartS: number,
  jointNames: readonly string[] = JOINTS,
): JointTrajectory => ({
  jointNames,
  points: [{ positions, timeFromStartS }],
});

describe('trajectory controller (simulated, ros2_controllers semantics)', () => {
  it('holds its start-up position with zero velocity until it gets a trajectory', () => {
    const h = new Harness();
    h.run(1);
    assert.deepEqual(h.q, WORK);
    assert.deepEqual(h.qd, [0, 0, 0, 0, 0, 0, 0]);
    assert.equal(h.controller.isMoving(), false);
    assert.deepEqual(h.events, []);
  });

  it('follows a planned trajectory sample by sample, ends exactly at its last point and holds there', () => {
    const h = new Harness();
    const trajectory = planPtp(WORK, OTHER, limits, { speed: 0.5, accelScale: 0 });
    const accepted = h.controller.follow(trajectory, h.t);
    assert.ok(accepted.ok);
    const startS = h.t;
    const expected = createSample(7);
    h.runUntilIdle(trajectoryDuration(trajectory) + 0.1, () => {
      if (!h.controller.isMoving()) return;
      sampleTrajectory(trajectory, h.t - startS, expected);
      for (let j = 0; j < 7; j++)
        assert.ok(
          Math.abs((h.q[j] ?? 0) - (expected.q[j] ?? 0)) < 1e-12,
          `${JOINTS[j]} tracks the trajectory at t = ${h.t}`,
        );
    });
    assert.deepEqual(h.q, OTHER, 'exactly at the last point');
    assert.deepEqual(h.qd, [0, 0, 0, 0, 0, 0, 0]);
    assert.deepEqual(h.kinds(), ['accepted', 'finished', 'hold']);
    h.run(0.5);
    assert.deepEqual(h.q, OTHER, 'and holds there');
    assert.equal(h.controller.isMoving(), false);
  });

  it('interpolates from the current position to a first point later than t = 0 (positions only: linearly)', () => {
    const h = new Harness();
    const target = WORK.map((v, j) => (j === 0 ? v + 0.5 : v));
    assert.ok(h.controller.follow(onePoint(target, 1), h.t).ok);
    h.run(0.5);
    assert.ok(Math.abs((h.q[0] ?? 0) - 0.25) < 1e-9, `halfway at half time: ${h.q[0]}`);
    h.runUntilIdle(1);
    assert.deepEqual(h.q, target);
  });

  it('lets a new trajectory preempt the running one (events preempted, then accepted) without a jump', () => {
    const h = new Harness();
    const first = h.controller.follow(planPtp(WORK, OTHER, limits, { speed: 0.3, accelScale: 0 }), h.t);
    assert.ok(first.ok);
    h.run(1);
    assert.ok(h.controller.isMoving());
    const moving = h.q;
    const replacement = [0.1, -0.2, 0.2, -1.4, -0.2, 1.4, -0.3];
    const second = h.controller.follow(onePoint(replacement, 2), h.t);
    assert.ok(second.ok);
    assert.deepEqual(
      h.events.map((e) => [e.kind, 'id' in e ? e.id : undefined]),
      [
        ['accepted', first.value],
        ['preempted', first.value],
        ['accepted', second.value],
      ],
    );
    h.step();
    for (let j = 0; j < 7; j++)
      assert.ok(Math.abs((h.q[j] ?? 0) - (moving[j] ?? 0)) < 0.01, 'continues from where the arm was');
    h.runUntilIdle(3);
    assert.deepEqual(h.q, replacement);
    assert.deepEqual(h.kinds().slice(-2), ['finished', 'hold']);
  });

  it('takes the joints in any order and reorders them to its own', () => {
    const h = new Harness();
    const reversed = [...JOINTS].reverse();
    assert.ok(h.controller.follow(onePoint([...OTHER].reverse(), 2, reversed), h.t).ok);
    h.runUntilIdle(3);
    assert.deepEqual(h.q, OTHER);
  });

  const refusals: { what: string; trajectory: () => JointTrajectory; reason: RegExp }[] = [
    {
      what: 'an unknown joint',
      trajectory: () => onePoint(OTHER, 2, [...JOINTS.slice(0, 6), 'joint8']),
      reason: /unknown joint 'joint8'/,
    },
    {
      what: 'a duplicate joint',
      trajectory: () => onePoint(OTHER, 2, [...JOINTS.slice(0, 6), 'joint1']),
      reason: /joint 'joint1' appears twice/,
    },
    {
      what: 'a missing joint',
      trajectory: () => onePoint(OTHER.slice(0, 6), 2, JOINTS.slice(0, 6)),
      reason: /lacks joint7/,
    },
    {
      what: 'non-increasing times',
      trajectory: () => ({
        jointNames: JOINTS,
        points: [
          { positions: OTHER, timeFromStartS: 2 },
          { positions: WORK, timeFromStartS: 2 },
        ],
      }),
      reason: /point 1: time_from_start 2 s does not increase/,
    },
    {
      what: 'decreasing times',
      trajectory: () => ({
        jointNames: JOINTS,
        points: [
          { positions: OTHER, timeFromStartS: 2 },
          { positions: WORK, timeFromStartS: 1 },
        ],
      }),
      reason: /does not increase/,
    },
    {
      what: 'a point beyond the position limits',
      trajectory: () =>
        onePoint(
          WORK.map((v, j) => (j === 1 ? 2.5 : v)),
          5,
        ),
      reason: /joint2 = 2\.5 rad is outside its limits \[-2\.1, 2\.1\]/,
    },
    {
      what: 'a first point at t = 0 away from the current position (a jump)',
      trajectory: () => ({
        jointNames: JOINTS,
        points: [
          { positions: OTHER, timeFromStartS: 0 },
          { positions: WORK, timeFromStartS: 3 },
        ],
      }),
      reason: /first point is at time 0 but .* rad away from the current position: following it would jump/,
    },
    {
      what: 'a segment faster than the velocity limit',
      trajectory: () =>
        onePoint(
          WORK.map((v, j) => (j === 0 ? v + 1 : v)),
          0.1,
        ),
      reason: /joint1 would need 10\.000 rad\/s .*limit 1\.71 rad\/s/,
    },
    {
      what: 'a cubic segment whose velocity peaks above the limit between its points',
      trajectory: () => ({
        jointNames: JOINTS,
        // 1.5 rad in 1 s averages 1.5 rad/s, but starting and ending at rest the cubic peaks at 2.25 rad/s
        points: [
          {
            positions: WORK.map((v, j) => (j === 0 ? v + 1.5 : v)),
            velocities: [0, 0, 0, 0, 0, 0, 0],
            timeFromStartS: 1,
          },
        ],
      }),
      reason: /joint1 would need 2\.2\d\d rad\/s/,
    },
    { what: 'no points', trajectory: () => ({ jointNames: JOINTS, points: [] }), reason: /no points/ },
  ];

  for (const { what, trajectory, reason } of refusals) {
    it(`refuses ${what}, saying why, and does not move`, () => {
      const h = new Harness();
      const result = h.controller.follow(trajectory(), h.t);
      assert.ok(!result.ok, 'refused');
      assert.match(result.error, reason);
      assert.equal(h.events.length, 1);
      const event = h.events[0];
      assert.ok(event?.kind === 'refused');
      assert.equal(event.reason, result.error);
      h.run(0.5);
      assert.deepEqual(h.q, WORK);
      assert.deepEqual(h.qd, [0, 0, 0, 0, 0, 0, 0]);
      assert.equal(h.controller.isMoving(), false);
    });
  }

  it('keeps executing the active trajectory when a new one is refused', () => {
    const h = new Harness();
    const trajectory = planPtp(WORK, OTHER, limits, { speed: 0.5, accelScale: 0 });
    assert.ok(h.controller.follow(trajectory, h.t).ok);
    h.run(0.5);
    assert.ok(!h.controller.follow(onePoint(OTHER, 2, [...JOINTS.slice(0, 6), 'joint8']), h.t).ok);
    h.runUntilIdle(trajectoryDuration(trajectory));
    assert.deepEqual(h.q, OTHER);
    assert.deepEqual(h.kinds(), ['accepted', 'refused', 'finished', 'hold']);
  });

  it('on cancel decelerates every joint within its acceleration limit, then holds with zero velocity', () => {
    const h = new Harness();
    const far = [1.5, 0.8, -1.5, -0.4, 1.5, 0.3, 2];
    const trajectory = planPtp(WORK, far, limits, { speed: 1, accelScale: 0 });
    const id = h.controller.follow(trajectory, h.t);
    assert.ok(id.ok);
    h.run(trajectoryDuration(trajectory) / 2);
    const fastest = Math.max(...h.qd.map((v, j) => Math.abs(v) / (limits.maxVelRadS[j] ?? 1)));
    assert.ok(fastest > 0.5, `moving fast when cancelled (${fastest.toFixed(2)} of a velocity limit)`);
    h.controller.cancel();
    assert.deepEqual(h.kinds().slice(-1), ['cancelled']);
    h.runUntilIdle(2, (before) => {
      const qd = h.qd;
      for (let j = 0; j < 7; j++) {
        const v0 = before.qd[j] ?? 0;
        const v1 = qd[j] ?? 0;
        const a = limits.maxAccRadS2[j] ?? 0;
        assert.ok(
          Math.abs(v1 - v0) <= a * DT * (1 + 1e-9),
          `${JOINTS[j]} decelerates by ${Math.abs(v1 - v0) / DT} rad/s^2 (limit ${a})`,
        );
        assert.ok(Math.abs(v1) <= Math.abs(v0) && v1 * v0 >= 0, `${JOINTS[j]} slows down without reversing`);
      }
    });
    assert.deepEqual(h.qd, [0, 0, 0, 0, 0, 0, 0]);
    const stopped = h.q;
    const last = h.events.at(-1);
    assert.ok(last?.kind === 'hold');
    assert.deepEqual(last.positions, stopped);
    h.run(0.5);
    assert.deepEqual(h.q, stopped, 'holds where it stopped');
    assert.equal(h.controller.activeId(), undefined);
  });

  it('treats one point at t = 0 near the current position as a hold request and decelerates', () => {
    const h = new Harness();
    const trajectory = planPtp(WORK, OTHER, limits, { speed: 1, accelScale: 0 });
    assert.ok(h.controller.follow(trajectory, h.t).ok);
    h.run(trajectoryDuration(trajectory) / 2);
    const result = h.controller.follow(onePoint(h.q, 0), h.t);
    assert.ok(result.ok);
    assert.deepEqual(h.kinds().slice(-2), ['hold-request', 'cancelled']);
    h.runUntilIdle(2);
    assert.deepEqual(h.qd, [0, 0, 0, 0, 0, 0, 0]);
    assert.equal(h.kinds().at(-1), 'hold');
  });

  it('ignores a cancel while holding', () => {
    const h = new Harness();
    h.controller.cancel();
    h.run(0.2);
    assert.deepEqual(h.q, WORK);
    assert.deepEqual(h.events, []);
    assert.equal(h.controller.isMoving(), false);
  });
});

describe('the simulated drives: never beyond the acceleration limit, velocities matching positions (issue 11)', () => {
  /** Steps until idle, asserting each period: |dv| within the acceleration limit, |v| within the velocity limit, the positions' finite difference matching the velocities, the positions within their limits. */
  function runChecked(h: Harness, maxSeconds: number): { maxAcc: number[]; maxQ: number[] } {
    const maxAcc = [0, 0, 0, 0, 0, 0, 0];
    const maxQ = [...h.q];
    h.runUntilIdle(maxSeconds, (before) => {
      const q = h.q;
      const qd = h.qd;
      for (let j = 0; j < 7; j++) {
        const a = limits.maxAccRadS2[j] ?? 0;
        const acc = Math.abs((qd[j] ?? 0) - (before.qd[j] ?? 0)) / DT;
        maxAcc[j] = Math.max(maxAcc[j] ?? 0, acc);
        maxQ[j] = Math.max(maxQ[j] ?? 0, q[j] ?? 0);
        assert.ok(acc <= a * (1 + 1e-6) + 1e-6, `${JOINTS[j]}: ${acc} rad/s^2 at t = ${h.t.toFixed(3)} (limit ${a})`);
        assert.ok(Math.abs(qd[j] ?? 0) <= (limits.maxVelRadS[j] ?? 0) * (1 + 1e-9), `${JOINTS[j]}: ${qd[j]} rad/s`);
        const moved = ((q[j] ?? 0) - (before.q[j] ?? 0)) / DT;
        const reported = ((qd[j] ?? 0) + (before.qd[j] ?? 0)) / 2;
        assert.ok(
          Math.abs(moved - reported) <= a * DT + 1e-9,
          `${JOINTS[j]} moved at ${moved} rad/s but reported ${reported} at t = ${h.t.toFixed(3)}`,
        );
        assert.ok(
          (q[j] ?? 0) <= (limits.maxRad[j] ?? 0) && (q[j] ?? 0) >= (limits.minRad[j] ?? 0),
          `${JOINTS[j]} = ${q[j]} within its limits`,
        );
      }
    });
    return { maxAcc, maxQ };
  }

  it('follows a position-only point from rest (a velocity step) with limited acceleration, logs the clip once, and still ends exactly at the point', () => {
    const h = new Harness();
    const target = WORK.map((v, j) => (j === 0 ? v + 0.5 : v));
    assert.ok(h.controller.follow(onePoint(target, 1), h.t).ok, 'accepted');
    const { maxAcc } = runChecked(h, 3);
    assert.ok((maxAcc[0] ?? 0) > 0.9 * (limits.maxAccRadS2[0] ?? 0), 'it accelerated at the limit, not more');
    assert.deepEqual(h.q, target);
    assert.deepEqual(h.kinds(), ['accepted', 'clipped', 'finished', 'hold']);
    const clipped = h.events[1];
    assert.ok(clipped?.kind === 'clipped', h.kinds().join(', '));
    assert.equal(clipped.joint, 'joint1');
    assert.equal(clipped.cause, 'acceleration');
    assert.ok(clipped.needRadS2 >= 0.5 / DT, `needed ${clipped.needRadS2} rad/s^2: 0.5 rad/s at once`);
    assert.equal(clipped.limitRadS2, limits.maxAccRadS2[0]);
  });

  it('never passes a position limit: a position-only trajectory arriving at joint1 = 2.97 at 1.5 rad/s brakes in time', () => {
    const h = new Harness();
    const target = WORK.map((v, j) => (j === 0 ? 2.97 : v));
    assert.ok(h.controller.follow(onePoint(target, 2), h.t).ok, 'accepted');
    const { maxQ } = runChecked(h, 4);
    assert.ok((maxQ[0] ?? 0) <= 2.97, `joint1 peaked at ${maxQ[0]}`);
    assert.ok(Math.abs((h.q[0] ?? 0) - 2.97) < 1e-9, `and ends at the point: ${h.q[0]}`);
  });

  it('moves within the acceleration and velocity limits for a zig-zag every 20 ms, and for a reversal sent mid-motion', () => {
    const h = new Harness();
    const zigzag: JointTrajectory = {
      jointNames: JOINTS,
      // 0.03 rad every 20 ms: 1.5 rad/s (within the velocity limit), reversing at once (75 rad/s^2 and more).
      points: Array.from({ length: 20 }, (_, i) => ({
        positions: WORK.map((v, j) => (j === 0 ? (i % 2 ? 0.03 : 0) : v)),
        timeFromStartS: 0.02 * (i + 1),
      })),
    };
    const accepted = h.controller.follow(zigzag, h.t);
    assert.ok(accepted.ok, accepted.ok ? '' : accepted.error);
    runChecked(h, 3);
    const far = WORK.map((v, j) => (j === 0 ? 1.2 : v));
    assert.ok(h.controller.follow(planPtp(h.q, far, limits, { speed: 1, accelScale: 0 }), h.t).ok, 'accepted');
    h.run(0.4);
    assert.ok((h.qd[0] ?? 0) > 1.5 && (h.q[0] ?? 0) > 0.5, `moving at ${h.qd[0]} rad/s, at ${h.q[0]} rad`);
    // Back to WORK (joint1 0.54 rad away) in 1 s: 0.54 rad/s the other way, at once.
    const back = h.controller.follow(onePoint(WORK, 1), h.t);
    assert.ok(back.ok, back.ok ? '' : back.error);
    runChecked(h, 5);
    assert.deepEqual(h.q, WORK);
  });

  it('follows planned trajectories at full speed and acceleration exactly, without a clip', () => {
    const h = new Harness();
    const trajectory = planPtp(WORK, OTHER, limits, { speed: 1, accelScale: 1 });
    assert.ok(h.controller.follow(trajectory, h.t).ok, 'accepted');
    const startS = h.t;
    const expected = createSample(7);
    h.runUntilIdle(trajectoryDuration(trajectory) + 0.1, () => {
      if (!h.controller.isMoving()) return;
      sampleTrajectory(trajectory, h.t - startS, expected);
      for (let j = 0; j < 7; j++)
        assert.ok(
          Math.abs((h.q[j] ?? 0) - (expected.q[j] ?? 0)) < 1e-12,
          `${JOINTS[j]} tracks the trajectory at t = ${h.t}`,
        );
    });
    assert.deepEqual(h.kinds(), ['accepted', 'finished', 'hold']);
  });

  it('starts a trajectory at the first update after it arrived, so a late update skips none of it', () => {
    const h = new Harness();
    const trajectory = planPtp(WORK, OTHER, limits, { speed: 1, accelScale: 0 });
    assert.ok(h.controller.follow(trajectory, h.t).ok, 'accepted');
    h.t += 0.25; // the controller runs again only 0.25 s after the trajectory arrived
    const expected = createSample(7);
    h.step();
    sampleTrajectory(trajectory, DT, expected);
    for (let j = 0; j < 7; j++)
      assert.ok(Math.abs((h.q[j] ?? 0) - (expected.q[j] ?? 0)) < 1e-12, `${JOINTS[j]} starts at the beginning`);
    h.runUntilIdle(trajectoryDuration(trajectory) + 0.1);
    assert.deepEqual(h.kinds(), ['accepted', 'finished', 'hold']);
  });

  it('refuses a spline whose positions pass a limit between its points, naming the joint and the bound', () => {
    const h = new Harness();
    const result = h.controller.follow(
      {
        jointNames: JOINTS,
        points: [
          { positions: [0, 1.9, 0, -1.57, 0, 1.57, 0], velocities: [0, 1.2, 0, 0, 0, 0, 0], timeFromStartS: 2 },
          { positions: [0, 2.0, 0, -1.57, 0, 1.57, 0], velocities: [0, -1.2, 0, 0, 0, 0, 0], timeFromStartS: 2.6 },
        ],
      },
      h.t,
    );
    assert.ok(!result.ok, 'refused');
    assert.match(
      result.error,
      /^point 1: joint2 would reach 2\.\d+ rad near t = 2\.\d+ s, outside its limits \[-2\.1, 2\.1\]$/,
    );
  });

  it('checks a trajectory message in slices (the event loop runs meanwhile) and follows it; a cancel meanwhile supersedes it', async () => {
    const h = new Harness();
    const count = 20_000;
    const msg = {
      header: { stamp: { sec: 0, nanosec: 0 }, frame_id: '' },
      joint_names: [...JOINTS],
      points: Array.from({ length: count }, (_, i) => {
        const t = 0.01 * (i + 1);
        return {
          positions: WORK.map((v, j) => (j === 0 ? 0.1 * (1 - Math.cos(t / 20)) : v)),
          velocities: [],
          accelerations: [],
          effort: [],
          time_from_start: { sec: Math.floor(t), nanosec: Math.round((t % 1) * 1e9) },
        };
      }),
    };
    let turns = 0;
    const ticker = setInterval(() => turns++, 0);
    try {
      const accepted = await h.controller.followMessage(msg, () => h.t);
      assert.ok(accepted.ok, accepted.ok ? '' : accepted.error);
      assert.ok(turns > 0, 'timers ran while it was checked');
      assert.deepEqual(h.kinds(), ['accepted']);
      h.run(1);
      assert.ok((h.q[0] ?? 0) > 0, 'the arm follows it');
      const pending = h.controller.followMessage(msg, () => h.t);
      h.controller.cancel();
      const superseded = await pending;
      assert.ok(!superseded.ok && /superseded by a newer command/.test(superseded.error), JSON.stringify(superseded));
      assert.deepEqual(h.kinds().slice(-2), ['cancelled', 'refused']);
      h.runUntilIdle(2);
      assert.equal(h.controller.activeId(), undefined, 'the cancel won');
    } finally {
      clearInterval(ticker);
    }
  });
});
