/**
 * Pause, resume and override on the simulated joint trajectory controller (issue 24), every
 * controller period checked: the path rate is driven to 0 (pause), back to 1 (resume) and to p/100
 * (override) within the acceleration limits, the arm stays on the planned path, and the rest of the
 * plan (lib/planning/time-scaling.ts's retimeTrajectory) is the same motion as trajectory points.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { planPtp } from '../../lib/planning/ptp.ts';
import { retimeTrajectory } from '../../lib/planning/time-scaling.ts';
import { timeParameterize } from '../../lib/planning/timing.ts';
import {
  createSample,
  type JointTrajectory,
  sampleTrajectory,
  trajectoryDuration,
} from '../../lib/planning/trajectory.ts';
import type { JointLimits } from '../../lib/robot/limits.ts';
import { type ControllerEvent, TrajectoryController } from '../../lib/sim/controller.ts';
import { bundledLimits, WORK } from '../support/arm.ts';

const FAR = [1.5, 0.6, -0.8, -0.6, 0.9, 0.4, 1.2];
const DT = 0.002;

// Loaded at the top (not in a top-level hook): the file can share a test process with others (scripts/test-groups.mjs).
const limits: JointLimits = await bundledLimits();

/** Distance (rad, max over joints) from q to the nearest point of the plan: a coarse scan, then a fine one around the best. */
function offPath(plan: JointTrajectory, q: readonly number[]): number {
  const sample = createSample(7);
  const duration = trajectoryDuration(plan);
  const distanceAt = (t: number) => {
    sampleTrajectory(plan, t, sample);
    let d = 0;
    for (let j = 0; j < 7; j++) d = Math.max(d, Math.abs((sample.q[j] ?? 0) - (q[j] ?? 0)));
    return d;
  };
  const coarse = 2000;
  let bestT = 0;
  let best = Number.POSITIVE_INFINITY;
  for (let k = 0; k <= coarse; k++) {
    const d = distanceAt((duration * k) / coarse);
    if (d < best) [best, bestT] = [d, (duration * k) / coarse];
  }
  const span = duration / coarse;
  for (let k = -1000; k <= 1000; k++)
    best = Math.min(best, distanceAt(Math.min(duration, Math.max(0, bestT + (span * k) / 1000))));
  return best;
}

interface Run {
  readonly controller: TrajectoryController;
  readonly events: ControllerEvent[];
  t: number;
  worstAccRatio: number;
  worstVelRatio: number;
  step(): void;
}

/** A controller stepped by hand; every period's velocity change is checked against the limits. */
function harness(initial: readonly number[] = WORK): Run {
  const events: ControllerEvent[] = [];
  const controller = new TrajectoryController(limits, initial, (e) => events.push(e));
  const run: Run = {
    controller,
    events,
    t: 0,
    worstAccRatio: 0,
    worstVelRatio: 0,
    step() {
      const before = Array.from(controller.state.qd);
      run.t += DT;
      controller.update(run.t, DT);
      for (let j = 0; j < 7; j++) {
        const v = controller.state.qd[j] ?? 0;
        const a = Math.abs(v - (before[j] ?? 0)) / DT;
        run.worstAccRatio = Math.max(run.worstAccRatio, a / (limits.maxAccRadS2[j] ?? 1));
        run.worstVelRatio = Math.max(run.worstVelRatio, Math.abs(v) / (limits.maxVelRadS[j] ?? 1));
      }
    },
  };
  return run;
}

const speedOf = (c: TrajectoryController) => Math.max(...Array.from(c.state.qd, Math.abs));
/** Seconds to rest if each joint braked alone at its limit. */
const restTimeS = (c: TrajectoryController) =>
  Math.max(...Array.from(c.state.qd, (v, j) => Math.abs(v) / (limits.maxAccRadS2[j] ?? 1)));

describe('time-scaling on the simulated controller', () => {
  for (const [name, plan] of [
    ['a PTP move at speed 1', () => planPtp(WORK, FAR, limits, { speed: 1, accelScale: 0 })],
    [
      'a multi-point trajectory',
      () =>
        timeParameterize(
          [WORK, [0.5, 0.3, -0.2, -1.2, 0.3, 1.0, 0.4], [1.0, 0.1, -0.6, -0.9, 0.7, 0.7, 0.9], FAR],
          limits,
          { speed: 0.8, accelScale: 0 },
        ),
    ],
  ] as const) {
    it(`${name}: pause brakes on the path within the limits, holds, and resume finishes at the goal`, () => {
      const trajectory = plan();
      const run = harness();
      const { controller } = run;
      assert.ok(controller.follow(trajectory, 0).ok);
      const duration = trajectoryDuration(trajectory);
      while (run.t < duration * 0.45) run.step();
      const speed = speedOf(controller);
      assert.ok(speed > 0.5, `moving at ${speed} rad/s`);
      const bound = restTimeS(controller);
      controller.setRateTarget(0);
      const pausedAt = run.t;
      let worstOff = 0;
      while (!run.events.some((e) => e.kind === 'paused') && run.t < pausedAt + 5) {
        run.step();
        worstOff = Math.max(worstOff, offPath(trajectory, Array.from(controller.state.q)));
      }
      const tookS = run.t - pausedAt;
      assert.ok(
        run.events.some((e) => e.kind === 'paused'),
        'came to rest',
      );
      assert.equal(speedOf(controller), 0);
      // The braking a joint alone at its limit needs, plus the 5 % margin of the rate and one period.
      assert.ok(
        tookS <= bound / 0.95 + 2 * DT,
        `rest after ${tookS.toFixed(4)} s (joint braking alone: ${bound.toFixed(4)} s)`,
      );
      assert.ok(worstOff < 1e-5, `on the path (${worstOff} rad off)`);
      assert.ok(run.worstAccRatio <= 1 + 1e-6, `acceleration ratio ${run.worstAccRatio}`);
      assert.ok(run.worstVelRatio <= 1 + 1e-6, `velocity ratio ${run.worstVelRatio}`);
      // Held: nothing moves for a second, the controller stays paused with the trajectory active.
      const held = Array.from(controller.state.q);
      for (let k = 0; k < 500; k++) run.step();
      assert.deepEqual(Array.from(controller.state.q), held);
      assert.equal(controller.isPausedAtRest(), true);
      assert.equal(controller.needsUpdates(), false, 'the driver may sleep while paused');
      // Resume: to the goal, within the limits, on the path.
      controller.setRateTarget(1);
      while (!run.events.some((e) => e.kind === 'finished') && run.t < pausedAt + 30) {
        run.step();
        worstOff = Math.max(worstOff, offPath(trajectory, Array.from(controller.state.q)));
      }
      assert.ok(
        run.events.some((e) => e.kind === 'finished'),
        'finished',
      );
      assert.ok(worstOff < 1e-5, `on the path (${worstOff} rad off)`);
      assert.ok(run.worstAccRatio <= 1 + 1e-6, `acceleration ratio ${run.worstAccRatio}`);
      for (const [j, q] of FAR.entries())
        assert.ok(Math.abs((controller.state.q[j] ?? 0) - q) < 1e-9, `joint${j + 1} at the goal`);
      assert.equal(
        run.events.some((e) => e.kind === 'clipped'),
        false,
        'the drives followed exactly',
      );
    });
  }

  it('override 50 % mid-motion doubles the remaining time (within 10 %), within the limits', () => {
    const trajectory = planPtp(WORK, FAR, limits, { speed: 1, accelScale: 0 });
    const duration = trajectoryDuration(trajectory);
    const run = harness();
    assert.ok(run.controller.follow(trajectory, 0).ok);
    while (run.t < duration * 0.3) run.step();
    const at = run.t;
    run.controller.setRateTarget(0.5);
    while (!run.events.some((e) => e.kind === 'finished') && run.t < 60) run.step();
    const remaining = duration - at;
    const took = run.t - at;
    assert.ok(Math.abs(took / remaining - 2) <= 0.2, `remaining ${remaining.toFixed(3)} s took ${took.toFixed(3)} s`);
    assert.ok(run.worstAccRatio <= 1 + 1e-6, `acceleration ratio ${run.worstAccRatio}`);
    assert.equal(
      run.events.some((e) => e.kind === 'clipped'),
      false,
    );
  });

  it('a trajectory that starts while paused holds at its start until resumed', () => {
    const run = harness();
    run.controller.setRateTarget(0);
    assert.ok(run.controller.follow(planPtp(WORK, FAR, limits, { speed: 0.5, accelScale: 0 }), 0).ok);
    for (let k = 0; k < 100; k++) run.step();
    assert.deepEqual(Array.from(run.controller.state.q), WORK);
    assert.ok(run.events.some((e) => e.kind === 'paused'));
    run.controller.setRateTarget(1);
    while (!run.events.some((e) => e.kind === 'finished') && run.t < 60) run.step();
    assert.ok(run.events.some((e) => e.kind === 'finished'));
    assert.ok(run.worstAccRatio <= 1 + 1e-6, `acceleration ratio ${run.worstAccRatio}`);
  });

  it('a cancel while paused holds at once (the arm is at rest)', () => {
    const run = harness();
    const trajectory = planPtp(WORK, FAR, limits, { speed: 1, accelScale: 0 });
    assert.ok(run.controller.follow(trajectory, 0).ok);
    while (run.t < 0.5) run.step();
    run.controller.setRateTarget(0);
    while (!run.controller.isPausedAtRest()) run.step();
    run.controller.cancel();
    assert.equal(run.controller.isMoving(), false);
    assert.equal(run.events.at(-1)?.kind, 'hold');
  });

  it('retimeTrajectory gives the same pause as points: ends at rest on the path, within the limits', () => {
    const trajectory = planPtp(WORK, FAR, limits, { speed: 1, accelScale: 0 });
    const from = trajectoryDuration(trajectory) * 0.4;
    const paused = retimeTrajectory(trajectory, limits, {
      fromTauS: from,
      fromRate: 1,
      target: 0,
      dtS: DT,
      everyS: 0.01,
    });
    const last = paused.points.at(-1);
    assert.ok(last);
    assert.ok(last.velocities?.every((v) => v === 0));
    assert.ok(offPath(trajectory, last.positions) < 1e-5);
    for (let k = 1; k < paused.points.length; k++) {
      const a = paused.points[k - 1];
      const b = paused.points[k];
      if (!a || !b) continue;
      const dt = b.timeFromStartS - a.timeFromStartS;
      for (let j = 0; j < 7; j++) {
        const acc = Math.abs((b.velocities?.[j] ?? 0) - (a.velocities?.[j] ?? 0)) / dt;
        assert.ok(acc <= (limits.maxAccRadS2[j] ?? 0) * (1 + 1e-6), `point ${k} joint${j + 1}: ${acc} rad/s^2`);
      }
    }
    // Resume from there: runs to the goal.
    const resumed = retimeTrajectory(trajectory, limits, {
      fromTauS: from + 0.1,
      fromRate: 0,
      target: 1,
      dtS: DT,
      everyS: 0.01,
    });
    for (const [j, q] of FAR.entries()) assert.ok(Math.abs((resumed.points.at(-1)?.positions[j] ?? 0) - q) < 1e-9);
  });
});
