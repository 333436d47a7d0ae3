/**
 * The jog engine (lib/motion/jog.ts) on the simulator's drive, in stepped time: speeds, the dead-man, acceleration,
 * joint limits, the TCP's line, the envelope, collisions, singularities, steps, the override.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createFkWorkspace, forwardKinematics } from '../../lib/kinematics/fk.ts';
import { minSingularValue6 } from '../../lib/kinematics/linalg.ts';
import type { Chain } from '../../lib/kinematics/chain.ts';
import type { JointLimits } from '../../lib/robot/limits.ts';
import { createEnvelopeChecker } from '../../lib/safety/envelope.ts';
import { safetyStateFor } from '../../lib/safety/store.ts';
import { testConfig } from '../support/server.ts';
import { DT, SteppedArm, type Trace } from './jog-harness.ts';

// Loaded at the top (not in a top-level hook): the file can share a test process with others (scripts/test-groups.mjs).
const config = await testConfig();
const safety = safetyStateFor(config);
if (!safety.ok) throw new Error(safety.error);
const chain: Chain = safety.value.chain;
const limits: JointLimits = config.limits;
const work: readonly number[] = config.groupStates?.find((g) => g.name === 'work')?.jointsRad ?? [];

const joint = (fractions: number[]) => ({ kind: 'joints', fractions }) as const;
const cartesian = (linear: number[], angular = [0, 0, 0], frame: 'base' | 'tool' = 'base') =>
  ({ kind: 'cartesian', linear, angular, frame }) as const;

/** Largest |acceleration| of each joint over a trace, as a share of its limit. */
function worstAccShare(trace: Trace, q0qd: readonly number[] = [0, 0, 0, 0, 0, 0, 0]): number {
  let worst = 0;
  let previous = q0qd;
  for (const qd of trace.qd) {
    qd.forEach((v, j) => {
      worst = Math.max(worst, Math.abs(v - (previous[j] ?? 0)) / DT / (limits.maxAccRadS2[j] ?? 1));
    });
    previous = qd;
  }
  return worst;
}

/** Largest TCP speed over a trace (finite differences, m/s). */
function tcpSpeed(trace: Trace): number {
  let most = 0;
  for (let i = 1; i < trace.tcp.length; i++) {
    const a = trace.tcp[i - 1] as number[];
    const b = trace.tcp[i] as number[];
    most = Math.max(
      most,
      Math.hypot((b[0] ?? 0) - (a[0] ?? 0), (b[1] ?? 0) - (a[1] ?? 0), (b[2] ?? 0) - (a[2] ?? 0)) / DT,
    );
  }
  return most;
}

describe('jog engine: joints', () => {
  it('a held joint jog moves only that joint, at the jog speed, within the acceleration limits', () => {
    const arm = new SteppedArm(chain, limits, work);
    const trace = arm.run(1, { each: (t) => arm.engine.take(joint([0, 0, -1, 0, 0, 0, 0]), t + 0.2, arm.state.q) });
    const last = trace.q.at(-1) as number[];
    last.forEach((q, j) => {
      if (j !== 2) assert.equal(q, work[j], `joint ${j + 1} moved`);
    });
    const speed = Math.max(...trace.qd.map((qd) => Math.abs(qd[2] ?? 0)));
    assert.ok(Math.abs(speed - 0.25 * 1.75) < 1e-9, `joint3 ran at ${speed} rad/s`);
    assert.ok(worstAccShare(trace) <= 1 + 1e-9);
    assert.equal(trace.clipped, 0, 'the drive followed every command exactly');
  });

  it('one command alone moves at most ttl x speed, and the arm rests within ttl + braking', () => {
    const arm = new SteppedArm(chain, limits, work);
    arm.engine.take(joint([1, 0, 0, 0, 0, 0, 0]), 0.2, arm.state.q);
    const trace = arm.run(1, { untilEnd: true });
    const speed = 0.25 * 1.71;
    const moved = (trace.q.at(-1)?.[0] ?? 0) - (work[0] ?? 0);
    assert.ok(moved > 0 && moved <= 0.2 * speed + 1e-3, `moved ${moved} rad`);
    assert.equal(trace.ended, 'ttl');
    const braking = speed / (limits.maxAccRadS2[0] ?? 1) / 0.9;
    assert.ok((trace.endedAt ?? 9) <= 0.2 + braking + 5 * DT, `at rest at ${trace.endedAt} s`);
    assert.ok(trace.qd.at(-1)?.every((v) => v === 0));
  });

  it('all zeros brake at once and end the jog as released', () => {
    const arm = new SteppedArm(chain, limits, work);
    const trace = arm.run(0.5, {
      untilEnd: true,
      each: (t) =>
        arm.engine.take(t < 0.1 ? joint([0, 0, 0, 0, 0, 0, 1]) : joint([0, 0, 0, 0, 0, 0, 0]), t + 0.2, arm.state.q),
    });
    assert.equal(trace.ended, 'released');
    assert.ok((trace.endedAt ?? 9) < 0.1 + (0.25 * 3.14) / (15.708 * 0.9) + 5 * DT);
  });

  it('a jog into a joint limit stops at it, never beyond, and says so', () => {
    const start = [...work];
    start[0] = 2.8;
    const arm = new SteppedArm(chain, limits, start);
    const trace = arm.run(1.5, { each: (t) => arm.engine.take(joint([1, 0, 0, 0, 0, 0, 0]), t + 0.2, arm.state.q) });
    const highest = Math.max(...trace.q.map((q) => q[0] ?? 0));
    assert.ok(highest <= 2.97, `joint1 reached ${highest}`);
    assert.ok((trace.q.at(-1)?.[0] ?? 0) > 2.97 - 1e-3, `joint1 stopped at ${trace.q.at(-1)?.[0]}`);
    assert.equal(trace.qd.at(-1)?.[0], 0);
    assert.equal(trace.limits.at(-1)?.kind, 'joint_limit');
    assert.equal(trace.clipped, 0);
  });

  it('stops before a collision the model reports', () => {
    const arm = new SteppedArm(chain, limits, work, {
      collision: (q) => ((q[0] ?? 0) > 0.3 ? { kind: 'collision', detail: 'link7 would touch the table' } : undefined),
    });
    const trace = arm.run(2, { each: (t) => arm.engine.take(joint([1, 0, 0, 0, 0, 0, 0]), t + 0.2, arm.state.q) });
    const highest = Math.max(...trace.q.map((q) => q[0] ?? 0));
    assert.ok(highest <= 0.3 && highest > 0.29, `joint1 reached ${highest}`);
    assert.equal(trace.limits.at(-1)?.kind, 'collision');
  });

  it('the override scales the speed; at rate 0 (paused) nothing moves', () => {
    const arm = new SteppedArm(chain, limits, work);
    arm.rate = 0.5;
    const half = arm.run(0.5, { each: (t) => arm.engine.take(joint([0, 1, 0, 0, 0, 0, 0]), t + 0.2, arm.state.q) });
    assert.ok(Math.abs(Math.max(...half.qd.map((qd) => qd[1] ?? 0)) - 0.5 * 0.25 * 1.71) < 1e-9);
    const still = new SteppedArm(chain, limits, work);
    still.rate = 0;
    const paused = still.run(0.5, {
      each: (t) => still.engine.take(joint([0, 1, 0, 0, 0, 0, 0]), t + 0.2, still.state.q),
    });
    assert.deepEqual(paused.q.at(-1), [...work]);
  });

  it('a joint step ends at rest exactly where asked', () => {
    const arm = new SteppedArm(chain, limits, work);
    arm.engine.take(joint([0, 0, 0, -1, 0, 0, 0]), Number.POSITIVE_INFINITY, arm.state.q, { amount: 0.2 });
    const trace = arm.run(3, { untilEnd: true });
    assert.equal(trace.ended, 'released');
    assert.ok(Math.abs((trace.q.at(-1)?.[3] ?? 0) - ((work[3] ?? 0) - 0.2)) < 1e-4);
  });
});

describe('jog engine: Cartesian', () => {
  it('a jog along x keeps y, z within 1 mm, the orientation, and the speed under tcp_speed', () => {
    const arm = new SteppedArm(chain, limits, work);
    const p0 = arm.tcp();
    const trace = arm.run(2, {
      untilEnd: true,
      each: (t) => (t < 0.8 ? arm.engine.take(cartesian([1, 0, 0]), t + 0.2, arm.state.q) : undefined),
    });
    assert.equal(trace.ended, 'ttl');
    const p = trace.tcp.at(-1) as number[];
    assert.ok((p[0] ?? 0) - (p0.pos[0] ?? 0) > 0.15, `moved ${(p[0] ?? 0) - (p0.pos[0] ?? 0)} m along x`);
    for (const tcp of trace.tcp)
      assert.ok(Math.hypot((tcp[1] ?? 0) - (p0.pos[1] ?? 0), (tcp[2] ?? 0) - (p0.pos[2] ?? 0)) < 1e-3);
    for (const rot of trace.rot) assert.ok(rot.every((r, i) => Math.abs(r - (p0.rot[i] ?? 0)) < 1e-3));
    assert.ok(tcpSpeed(trace) <= 0.25 + 1e-9, `TCP at ${tcpSpeed(trace)} m/s`);
    assert.ok(worstAccShare(trace) <= 1 + 1e-9);
  });

  it('turns about the asked axis only (tool frame), the TCP point fixed', () => {
    const arm = new SteppedArm(chain, limits, work);
    const p0 = arm.tcp();
    const trace = arm.run(1, {
      untilEnd: true,
      each: (t) =>
        t < 0.4 ? arm.engine.take(cartesian([0, 0, 0], [0, 0, 1], 'tool'), t + 0.2, arm.state.q) : undefined,
    });
    for (const tcp of trace.tcp) assert.ok(Math.hypot(...tcp.map((x, a) => x - (p0.pos[a] ?? 0))) < 1e-3);
    // The tool's z axis (third column) stays where it was.
    const r = trace.rot.at(-1) as number[];
    assert.ok(
      Math.abs((r[2] ?? 0) - (p0.rot[2] ?? 0)) +
        Math.abs((r[5] ?? 0) - (p0.rot[5] ?? 0)) +
        Math.abs((r[8] ?? 0) - (p0.rot[8] ?? 0)) <
        2e-3,
    );
    assert.ok(Math.abs((r[0] ?? 0) - (p0.rot[0] ?? 0)) > 0.01, 'it turned');
  });

  it('a jog toward the workspace box stops inside it, and says so', () => {
    const envelope = createEnvelopeChecker(chain, {
      workspace: { min: [-1, -1, 0], max: [0.5, 1, 1.5] },
      keepOut: [],
      linkRadiusM: 0.08,
    });
    const arm = new SteppedArm(chain, limits, work, { envelope });
    const trace = arm.run(1.5, { each: (t) => arm.engine.take(cartesian([1, 0, 0]), t + 0.2, arm.state.q) });
    const x = Math.max(...trace.tcp.map((p) => p[0] ?? 0));
    assert.ok(x <= 0.5 && x > 0.49, `TCP reached x = ${x}`);
    assert.equal(trace.limits.at(-1)?.kind, 'workspace');
  });

  it('a jog toward a keep-out box stops outside it (joint and Cartesian)', () => {
    const envelope = createEnvelopeChecker(chain, {
      keepOut: [{ name: 'fixture', min: [0.6, -0.3, 0], max: [0.9, 0.3, 1] }],
      linkRadiusM: 0.08,
    });
    const arm = new SteppedArm(chain, limits, work, { envelope });
    const trace = arm.run(1.5, { each: (t) => arm.engine.take(cartesian([1, 0, 0]), t + 0.2, arm.state.q) });
    for (const q of trace.q) assert.equal(envelope.check(q), undefined);
    assert.equal(trace.limits.at(-1)?.kind, 'keep_out');
    const byJoint = new SteppedArm(chain, limits, work, { envelope });
    const jointTrace = byJoint.run(3, {
      each: (t) => byJoint.engine.take(joint([0, 1, 0, 0, 0, 0, 0]), t + 0.2, byJoint.state.q),
    });
    for (const q of jointTrace.q) assert.equal(envelope.check(q), undefined);
    assert.equal(jointTrace.limits.at(-1)?.kind, 'keep_out');
  });

  it('slows near a singularity and stops before it', () => {
    const start = [0, 0.3, 0, -0.6, 0, 0.5, 0];
    const arm = new SteppedArm(chain, limits, start);
    const trace = arm.run(4, { each: (t) => arm.engine.take(cartesian([0, 0, 1]), t + 0.2, arm.state.q) });
    const ws = createFkWorkspace(chain);
    let smallest = Number.POSITIVE_INFINITY;
    for (const q of trace.q) {
      forwardKinematics(chain, q, ws, true);
      smallest = Math.min(smallest, minSingularValue6(ws.jacobian, 7));
    }
    assert.ok(smallest > 0.015, `the Jacobian's smallest singular value fell to ${smallest}`);
    assert.equal(trace.limits.at(-1)?.kind, 'singularity');
    assert.ok(
      trace.qd.at(-1)?.every((v) => v === 0),
      'at rest before it',
    );
    assert.ok(worstAccShare(trace) <= 1 + 1e-9);
  });

  it('a Cartesian step ends at rest exactly where asked (base and tool frame)', () => {
    for (const [target, axis, amount] of [
      [cartesian([0, 0, -1]), 2, -0.05],
      [cartesian([0, 1, 0]), 1, 0.03],
    ] as const) {
      const arm = new SteppedArm(chain, limits, work);
      const p0 = arm.tcp();
      arm.engine.take(target, Number.POSITIVE_INFINITY, arm.state.q, { amount: Math.abs(amount) });
      const trace = arm.run(3, { untilEnd: true });
      assert.equal(trace.ended, 'released');
      const p = trace.tcp.at(-1) as number[];
      for (const [a, x] of p.entries())
        assert.ok(Math.abs(x - (p0.pos[a] ?? 0) - (a === axis ? amount : 0)) < 1e-4, `axis ${a}: ${x}`);
    }
  });
});
