/**
 * What a streamed jog message commands at a moment (lib/ros/rcl-jog.ts commandedAt), as the controller interpolates
 * it: the knots at their times, a constant acceleration between knots whose displacement is the trapezoid's, the
 * braking tail to the hold point, and rest after it. Pure.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createSample, type JointSample } from '../../lib/planning/trajectory.ts';
import { commandedAt } from '../../lib/ros/rcl-jog.ts';

const knot = (q: number, qd: number): JointSample => {
  const s = createSample(1);
  s.q[0] = q;
  s.qd[0] = qd;
  return s;
};

describe('commandedAt', () => {
  // From rest, 0.004 s at 10 rad/s² to 0.04 rad/s, then braking at 10 rad/s² to rest: 0.004 s more.
  const sent = {
    atMs: 0,
    knots: [knot(0, 0), knot(0.00008, 0.04), knot(0.00016, 0)],
    times: [0, 0.004, 0.008],
  };
  const at = (t: number) => {
    const out = createSample(1);
    commandedAt(sent, t, out);
    return { q: out.q[0] ?? Number.NaN, qd: out.qd[0] ?? Number.NaN };
  };

  it('passes through its knots at their times', () => {
    for (const [k, t] of sent.times.entries()) {
      const { q, qd } = at(t);
      assert.ok(Math.abs(q - (sent.knots[k]?.q[0] ?? 0)) < 1e-12, `q at ${t}`);
      assert.ok(Math.abs(qd - (sent.knots[k]?.qd[0] ?? 0)) < 1e-12, `qd at ${t}`);
    }
  });

  it('between knots whose displacement is the trapezoid: constant acceleration (the engine ramp, the braking)', () => {
    const mid = at(0.002);
    assert.ok(Math.abs(mid.qd - 0.02) < 1e-12, `qd ${mid.qd}`);
    assert.ok(Math.abs(mid.q - 0.5 * 10 * 0.002 ** 2) < 1e-12, `q ${mid.q}`);
    const braking = at(0.006);
    assert.ok(Math.abs(braking.qd - 0.02) < 1e-12, `qd ${braking.qd}`);
  });

  it('holds the last knot after its time, and starts at the first before 0', () => {
    assert.deepEqual(at(1), { q: 0.00016, qd: 0 });
    assert.deepEqual(at(-0.01), { q: 0, qd: 0 });
  });
});
