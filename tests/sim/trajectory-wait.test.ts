import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { durationFromS, type JointTrajectoryMsg } from '../../lib/ros/messages.ts';
import { SteppedClock } from '../../lib/clock.ts';
import { SimContext } from '../../lib/sim/context.ts';
import { simConfig } from './sim-config.ts';
import { JOINTS, WORK } from '../support/arm.ts';

// Confirmed completion on the simulator: SimContext.executeTrajectory answers with the simulated
// controller's outcome. time_scale 4: a 1 s trajectory runs in 0.25 s. The simulator runs on a clock the test
// steps (lib/clock.ts): waits advance it, nothing sleeps, and the durations are the clock's, whatever the load.

const clock = new SteppedClock(0, Date.now());
/** Waits `ms` of the simulator's clock. */
const sleep = (ms: number) => clock.advance(ms);
/** `pending`, answered while the clock moves on 5 ms at a time. */
async function stepped<T>(pending: Promise<T>): Promise<T> {
  let done = false;
  void pending.then(
    () => (done = true),
    () => (done = true),
  );
  assert.ok(await clock.until(() => done, 5, 120_000), 'answered within 120 s of the clock');
  return pending;
}

/** A trajectory from the current position through joint 1 at `q1`, arriving at `timeS` (positions only). */
function toJoint1(from: readonly number[], q1: number, timeS: number): JointTrajectoryMsg {
  const goal = [...from];
  goal[0] = q1;
  return {
    header: { stamp: { sec: 0, nanosec: 0 }, frame_id: '' },
    joint_names: [...JOINTS],
    points: [
      {
        positions: from.map((q, j) => q + ((goal[j] ?? 0) - q) / 2),
        velocities: [],
        accelerations: [],
        effort: [],
        time_from_start: durationFromS(timeS / 2),
      },
      { positions: goal, velocities: [], accelerations: [], effort: [], time_from_start: durationFromS(timeS) },
    ],
  };
}

describe('confirmed completion on the simulator (SimContext.executeTrajectory)', () => {
  let sim: SimContext;
  const here = () => Array.from(sim.latestJointState()?.msg.position ?? WORK);
  const settle = async () => {
    for (let i = 0; i < 200 && sim.armActivity(); i++) await sleep(10);
  };

  before(async () => {
    sim = await SimContext.create(await simConfig({ time_scale: 4, initial_position: 'work' }), clock);
  });
  after(() => sim.close());

  it('finished: answers when the controller reaches the last point, after the trajectory time', async () => {
    await settle();
    const result = await stepped(sim.executeTrajectory(toJoint1(here(), 0.3, 1)));
    assert.ok(result.ok, 'answered');
    assert.equal(result.value.outcome, 'finished', result.value.message);
    assert.match(result.value.message, /finished at its last point/);
    assert.ok(result.value.duration_s >= 0.2, `took ${result.value.duration_s} s (0.25 s at time_scale 4)`);
    assert.ok(Math.abs((here()[0] ?? 0) - 0.3) < 1e-3, `joint1 at 0.3 (${here()[0]})`);
    assert.equal(sim.armActivity(), undefined, 'the arm rests');
  });

  it('refused: a trajectory the controller cannot follow, with its reason, at once', async () => {
    await settle();
    const tooFast = toJoint1(here(), 2.5, 0.05);
    const result = await stepped(sim.executeTrajectory(tooFast));
    assert.ok(result.ok, 'answered');
    assert.equal(result.value.outcome, 'refused', result.value.message);
    assert.match(result.value.message, /the controller refused the trajectory: joint1 would need/);
    assert.ok(result.value.duration_s < 0.5, `at once (${result.value.duration_s} s)`);
    const unknown = await stepped(
      sim.executeTrajectory({
        ...toJoint1(here(), 0.2, 1),
        joint_names: ['a', ...JOINTS.slice(1)],
      }),
    );
    assert.ok(unknown.ok && unknown.value.outcome === 'refused', 'unknown joint refused');
    assert.match(unknown.value.message, /unknown joint 'a'/);
  });

  it('stopped: the abort signal stops the trajectory, and the arm decelerates and holds', async () => {
    await settle();
    const abort = new AbortController();
    const pending = sim.executeTrajectory(toJoint1(here(), -0.5, 4), { signal: abort.signal });
    await sleep(300);
    assert.ok(sim.armActivity(), 'moving');
    abort.abort('stopped by POST /stop');
    const result = await stepped(pending);
    assert.ok(result.ok, 'answered');
    assert.equal(result.value.outcome, 'stopped', result.value.message);
    assert.match(result.value.message, /stopped by POST \/stop/);
    await settle();
    assert.equal(sim.armActivity(), undefined, 'the arm came to rest');
    assert.ok((here()[0] ?? 0) > -0.5 + 0.05, `it stopped short of the goal (${here()[0]})`);
  });

  it('stopped: a stop from elsewhere (an empty trajectory, the stop service) ends the wait as stopped', async () => {
    await settle();
    const pending = sim.executeTrajectory(toJoint1(here(), 0.4, 4));
    await sleep(300);
    await sim.publishTrajectory({
      header: { stamp: { sec: 0, nanosec: 0 }, frame_id: '' },
      joint_names: [...JOINTS],
      points: [],
    });
    const result = await stepped(pending);
    assert.ok(result.ok && result.value.outcome === 'stopped', `stopped: ${result.ok ? result.value.message : ''}`);
  });

  it('preempted: a newer trajectory replaces it, and the newer one finishes', async () => {
    await settle();
    const first = sim.executeTrajectory(toJoint1(here(), -0.4, 4));
    await sleep(300);
    const second = sim.executeTrajectory(toJoint1(here(), 0.1, 2));
    const a = await stepped(first);
    assert.ok(a.ok && a.value.outcome === 'preempted', `the first is preempted: ${a.ok ? a.value.message : ''}`);
    const b = await stepped(second);
    assert.ok(b.ok && b.value.outcome === 'finished', `the second finishes: ${b.ok ? b.value.message : ''}`);
  });

  it('preempted: a motion goal that takes the controller replaces it', async () => {
    await settle();
    const pending = sim.executeTrajectory(toJoint1(here(), -0.4, 4));
    await sleep(300);
    const moved = await stepped(sim.moveToJoints({ joints: [...WORK], speed: 0.5 }));
    assert.ok(moved.ok, 'the move answers');
    const result = await stepped(pending);
    assert.ok(result.ok, 'answered');
    // The simulated motion server plans from the joint state of the moving arm, so its trajectory is
    // sometimes refused for a start a few mrad behind (lib/sim/motion.ts); then the first one runs on.
    const expected = moved.value.success ? 'preempted' : 'finished';
    assert.equal(result.value.outcome, expected, `${result.value.message} (move: ${moved.value.message})`);
  });

  it('a motion goal whose signal is already aborted (a stop before it began) never moves the arm', async () => {
    await settle();
    const before = here();
    const stopped = new AbortController();
    stopped.abort('stopped before it began');
    const moved = await stepped(
      sim.moveToJoints({ joints: [0.4, 0.2, 0, -1.2, 0, 1.2, 0], speed: 1 }, { signal: stopped.signal }),
    );
    assert.ok(moved.ok, 'the move answers');
    assert.equal(moved.value.success, false, moved.value.message);
    await sleep(300);
    const moves = here().map((q, j) => Math.abs(q - (before[j] ?? 0)));
    assert.ok(Math.max(...moves) < 1e-9, `nothing moved (${Math.max(...moves)} rad)`);
  });

  it('timeout: no outcome within the wait stops the trajectory and says so', async () => {
    await settle();
    const result = await stepped(sim.executeTrajectory(toJoint1(here(), 0.5, 8), { timeoutS: 0.3 }));
    assert.ok(result.ok, 'answered');
    assert.equal(result.value.outcome, 'timeout', result.value.message);
    assert.match(result.value.message, /no outcome within 0\.300 s: the trajectory was stopped/);
    assert.ok(result.value.duration_s >= 0.29 && result.value.duration_s < 1, `after ${result.value.duration_s} s`);
    await settle();
    assert.equal(sim.armActivity(), undefined, 'the arm came to rest');
  });

  it('an already aborted signal sends nothing', async () => {
    await settle();
    const abort = new AbortController();
    abort.abort('revoked');
    const before = here();
    const result = await stepped(sim.executeTrajectory(toJoint1(before, 0.4, 1), { signal: abort.signal }));
    assert.ok(result.ok && result.value.outcome === 'stopped', 'stopped');
    assert.match(result.value.message, /revoked: nothing was sent/);
    assert.equal(sim.armActivity(), undefined, 'the arm did not move');
  });
});
