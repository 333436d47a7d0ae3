import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { HOLD_MIN_TIME_S, holdPoint } from '../../lib/ros/hold.ts';
import { planPtp } from '../../lib/planning/ptp.ts';
import type { JointLimits } from '../../lib/robot/limits.ts';
import { secondsOf } from '../../lib/ros/messages.ts';
import { type ControllerEvent, TrajectoryController } from '../../lib/sim/controller.ts';
import { bundledLimits, JOINTS, WORK } from '../support/arm.ts';

const OTHER = [0.6, 0.4, -0.3, -1.1, 0.2, 1.2, 0.5];
const DT = 0.002;

// Loaded at the top (not in a top-level hook): the file can share a test process with others (scripts/test-groups.mjs).
const limits: JointLimits = await bundledLimits();

/** The largest |acceleration| of the cubic from (q0, v0) to (q1, 0) over T (it is linear in t: check both ends). */
function cubicMaxAcc(q0: number, v0: number, q1: number, timeS: number): number {
  const a2 = (3 * (q1 - q0)) / timeS ** 2 - (2 * v0) / timeS;
  const a3 = (-2 * (q1 - q0)) / timeS ** 3 + v0 / timeS ** 2;
  return Math.max(Math.abs(2 * a2), Math.abs(2 * a2 + 6 * a3 * timeS));
}

describe('holdPoint: a hold point timed to decelerate within the limits', () => {
  it('gives an arm at rest its current position at the floor time, never 0 s', () => {
    const p = holdPoint(WORK, [0, 0, 0, 0, 0, 0, 0], limits);
    assert.deepEqual(p.positions, WORK, 'positions are the current ones');
    assert.deepEqual(p.velocities, [0, 0, 0, 0, 0, 0, 0], 'zero velocities');
    assert.equal(secondsOf(p.time_from_start), HOLD_MIN_TIME_S, 'the floor time');
    assert.ok(secondsOf(p.time_from_start) > 0, 'never 0 s');
  });

  it('takes as long as the slowest joint needs at its acceleration limit, and stops each joint where uniform braking ends', () => {
    const v = [1.5, 0, 0, 0, 0, 0, -3];
    const p = holdPoint(WORK, v, limits);
    const t = secondsOf(p.time_from_start);
    const needed = Math.max(1.5 / (limits.maxAccRadS2[0] ?? 1), 3 / (limits.maxAccRadS2[6] ?? 1));
    assert.ok(Math.abs(t - Math.max(needed, HOLD_MIN_TIME_S)) < 1e-8, `time ${t} s, needed ${needed} s`);
    assert.ok(Math.abs((p.positions[0] ?? 0) - (0 + (1.5 * t) / 2)) < 1e-9, 'joint1 rests at q + v T / 2');
    assert.ok(Math.abs((p.positions[6] ?? 0) - (0 - (3 * t) / 2)) < 1e-9, 'joint7 rests at q + v T / 2');
  });

  it('scales the acceleration and honours a floor of its own', () => {
    const v = [1, 0, 0, 0, 0, 0, 0];
    const full = secondsOf(holdPoint(WORK, v, limits).time_from_start);
    const half = secondsOf(holdPoint(WORK, v, limits, { accelScale: 0.5 }).time_from_start);
    assert.ok(
      Math.abs(half - 2 * full) < 1e-8 || full === HOLD_MIN_TIME_S,
      `half the acceleration: ${half} s vs ${full} s`,
    );
    assert.equal(secondsOf(holdPoint(WORK, v, limits, { minTimeS: 0.5 }).time_from_start), 0.5, 'the original 0.5 s');
  });

  it('reads missing or non-finite velocities as 0 and keeps the positions within the limits', () => {
    const p = holdPoint(WORK, [], limits);
    assert.deepEqual(p.positions, WORK, 'no velocities: the current position');
    const nearLimit = [...WORK];
    nearLimit[0] = (limits.maxRad[0] ?? 0) - 0.001;
    const q = holdPoint(nearLimit, [1.7, Number.NaN, 0, 0, 0, 0, 0], limits);
    assert.ok((q.positions[0] ?? 0) <= (limits.maxRad[0] ?? 0), 'clamped to the position limit');
    assert.equal(q.positions[1], WORK[1], 'NaN velocity read as 0');
  });

  it('property: the controller cubic to the hold point stays within every acceleration limit and never turns back', () => {
    const joint = fc.double({ min: -1, max: 1, noNaN: true });
    fc.assert(
      fc.property(
        fc.array(joint, { minLength: 7, maxLength: 7 }),
        fc.double({ min: 0.1, max: 1, noNaN: true }),
        (unit, accelScale) => {
          const v = unit.map((u, j) => u * (limits.maxVelRadS[j] ?? 0));
          const p = holdPoint(WORK, v, limits, { accelScale });
          const t = secondsOf(p.time_from_start);
          assert.ok(t >= HOLD_MIN_TIME_S, `time ${t} s is at least the floor`);
          for (let j = 0; j < 7; j++) {
            const q0 = WORK[j] ?? 0;
            const q1 = p.positions[j] ?? 0;
            assert.ok(
              q1 >= (limits.minRad[j] ?? 0) && q1 <= (limits.maxRad[j] ?? 0),
              `joint ${j + 1} within its limits`,
            );
            const unclamped = q0 + ((v[j] ?? 0) * t) / 2;
            // A joint that cannot stop before its limit at this deceleration is told to stop at the limit.
            if (Math.abs(unclamped - q1) > 1e-12) continue;
            const acc = cubicMaxAcc(q0, v[j] ?? 0, q1, t);
            const limit = (limits.maxAccRadS2[j] ?? 0) * accelScale;
            assert.ok(acc <= limit * (1 + 1e-6), `joint ${j + 1}: ${acc} rad/s^2 within ${limit}`);
            assert.ok((q1 - q0) * (v[j] ?? 0) >= 0, `joint ${j + 1} does not turn back`);
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it('stops the simulated controller from full motion without clipping, at the hold point, within its time', () => {
    const events: ControllerEvent[] = [];
    const controller = new TrajectoryController(limits, WORK, (e) => events.push(e));
    const plan = planPtp(WORK, OTHER, limits, { speed: 1, accelScale: 1 });
    assert.ok(plan, 'a PTP plan');
    let t = 0;
    assert.ok(controller.follow(plan, t).ok, 'the PTP trajectory is accepted');
    // Into the motion, at speed.
    for (let i = 0; i < 250; i++) {
      t += DT;
      controller.update(t, DT);
    }
    const speed = Math.max(...Array.from(controller.state.qd, Math.abs));
    assert.ok(speed > 0.3, `the arm moves (${speed} rad/s)`);
    const point = holdPoint(Array.from(controller.state.q), Array.from(controller.state.qd), limits);
    const holdS = secondsOf(point.time_from_start);
    const accepted = controller.follow(
      {
        jointNames: JOINTS,
        points: [{ positions: point.positions, velocities: point.velocities, timeFromStartS: holdS }],
      },
      t,
    );
    assert.ok(accepted.ok, `the hold point is accepted: ${accepted.ok ? '' : accepted.error}`);
    const start = t;
    while (controller.isMoving() && t - start < holdS + 1) {
      t += DT;
      controller.update(t, DT);
    }
    assert.ok(!controller.isMoving(), 'the arm came to rest');
    assert.ok(
      t - start <= holdS + 3 * DT,
      `at rest after ${(t - start).toFixed(3)} s (hold point ${holdS.toFixed(3)} s)`,
    );
    assert.ok(
      !events.some((e) => e.kind === 'clipped'),
      `no clipping: ${JSON.stringify(events.filter((e) => e.kind === 'clipped'))}`,
    );
    for (let j = 0; j < 7; j++)
      assert.ok(
        Math.abs((controller.state.q[j] ?? 0) - (point.positions[j] ?? 0)) < 1e-6,
        `joint ${j + 1} at the hold point`,
      );
  });
});
