import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { holdPoint } from '../../lib/ros/hold.ts';
import { durationFromS, type JointTrajectoryMsg } from '../../lib/ros/messages.ts';
import { RclContext } from '../../lib/ros/rcl-context.ts';
import type { Config } from '../../lib/settings/load.ts';
import { SimContext } from '../../lib/sim/context.ts';
import { JOINTS, sleep } from '../support/rcl-checks.ts';
import { createStandin } from '../support/rclnodejs-standin.ts';
import { testConfig } from '../support/server.ts';

// A stop's hold point on the ros2 backend (issue 24, item 6): RclContext.publishTrajectory and armActivity against the
// in-process stand-in for rclnodejs backed by the simulator (not ROS 2; the suites of tests/ros2, npm run test:ros2, are for that).

const message = (points: JointTrajectoryMsg['points']): JointTrajectoryMsg => ({
  header: { stamp: { sec: 0, nanosec: 0 }, frame_id: '' },
  joint_names: [...JOINTS],
  points,
});

describe('RclContext: a hold point holds the arm only while it brakes', () => {
  let ctx: RclContext;
  let sim: SimContext;
  before(async () => {
    const simConfig = await testConfig({ sim: { time_scale: 1 } });
    sim = await SimContext.create(simConfig);
    const config: Config = { ...simConfig, robot: { ...simConfig.robot, backend: 'ros2' } };
    ctx = await RclContext.create(config, createStandin(sim).module);
    for (let i = 0; i < 100 && !ctx.latestJointState(); i++) await sleep(10);
  });
  after(async () => {
    await ctx.close();
    for (let i = 0; i < 300 && sim.armActivity(); i++) await sleep(10);
    await sim.close();
  });

  const state = () => {
    const latest = ctx.latestJointState();
    assert.ok(latest, 'a joint state');
    return latest.msg;
  };

  it('at rest: the arm is free at once (the 0.1 s floor of the point does not count)', async () => {
    const { position, velocity } = state();
    const hold = holdPoint(position, velocity, ctx.limits);
    assert.equal(hold.time_from_start.nanosec, 100_000_000, 'the floor of a hold point at rest');
    assert.ok((await ctx.publishTrajectory(message([hold]))).ok);
    assert.equal(ctx.armActivity(), undefined);
  });

  it('moving: until the hold point brakes the arm to rest, a stopping activity with the time left', async () => {
    const from = [...state().position];
    const goal = [...from];
    goal[0] = (goal[0] ?? 0) + 0.8;
    const move = {
      positions: goal,
      velocities: [],
      accelerations: [],
      effort: [],
      time_from_start: durationFromS(1.2),
    };
    assert.ok((await ctx.publishTrajectory(message([move]))).ok);
    assert.equal(ctx.armActivity()?.kind, 'trajectory');
    for (let i = 0; i < 200 && Math.abs(state().velocity[0] ?? 0) < 0.3; i++) await sleep(5);
    const { position, velocity } = state();
    assert.ok(Math.abs(velocity[0] ?? 0) >= 0.3, 'joint1 moves');
    const hold = holdPoint(position, velocity, ctx.limits);
    assert.ok((await ctx.publishTrajectory(message([hold]))).ok);
    const busy = ctx.armActivity();
    assert.equal(busy?.kind, 'stopping');
    const holdS = hold.time_from_start.sec + hold.time_from_start.nanosec / 1e9;
    assert.ok((busy?.restInS ?? 0) > 0 && (busy?.restInS ?? 0) <= holdS, JSON.stringify(busy));
    await sleep(holdS * 1000 + 20);
    assert.equal(ctx.armActivity(), undefined, 'free once the hold point has braked the arm');
  });

  it('a single point near an arm at rest (a small motion) is a trajectory, not a hold', async () => {
    for (let i = 0; i < 300 && sim.armActivity(); i++) await sleep(10);
    const goal = [...state().position];
    goal[1] = (goal[1] ?? 0) + 0.05;
    const far = { positions: goal, velocities: [], accelerations: [], effort: [], time_from_start: durationFromS(1) };
    assert.ok((await ctx.publishTrajectory(message([far]))).ok);
    assert.equal(ctx.armActivity()?.kind, 'trajectory');
  });

  it("under an override a stop's hold point goes out as it is, however far; the same point as a trajectory is re-timed", async () => {
    for (let i = 0; i < 300 && (sim.armActivity() || ctx.armActivity()); i++) await sleep(10);
    const seen: JointTrajectoryMsg[] = [];
    const unsubscribe = sim.subscribe(sim.endpoints.interfaces.trajectory.name, (m) =>
      seen.push(m as JointTrajectoryMsg),
    );
    assert.ok((await ctx.setExecutionRate(0.5)).ok);
    try {
      const goal = state().position.map((q, i) => (i === 0 ? q + 0.3 : q));
      // As a fast arm's hold point is: farther than a hold point is recognized by its distance (0.1 rad).
      const point = {
        positions: goal,
        velocities: goal.map(() => 0),
        accelerations: [],
        effort: [],
        time_from_start: durationFromS(0.6),
      };
      assert.ok((await ctx.publishTrajectory(message([point]), { hold: true })).ok);
      for (let i = 0; i < 100 && seen.length === 0; i++) await sleep(5);
      assert.equal(seen.at(-1)?.points.length, 1, 'the hold point as it is');
      assert.deepEqual(seen.at(-1)?.points[0]?.positions, goal);
      assert.deepEqual(seen.at(-1)?.points[0]?.time_from_start, durationFromS(0.6));
      for (let i = 0; i < 300 && (sim.armActivity() || ctx.armActivity()); i++) await sleep(10);
      const back = state().position.map((q, i) => (i === 0 ? q - 0.3 : q));
      const count = seen.length;
      assert.ok((await ctx.publishTrajectory(message([{ ...point, positions: back }]))).ok);
      for (let i = 0; i < 100 && seen.length === count; i++) await sleep(5);
      const retimed = seen.at(-1);
      const lastS = retimed?.points.at(-1)?.time_from_start;
      assert.ok((retimed?.points.length ?? 0) > 1, 'a trajectory under the override goes out re-timed');
      assert.ok((lastS?.sec ?? 0) + (lastS?.nanosec ?? 0) / 1e9 > 0.6 * 1.5, 'and slower');
    } finally {
      assert.ok((await ctx.setExecutionRate(1)).ok);
      unsubscribe();
      for (let i = 0; i < 300 && (sim.armActivity() || ctx.armActivity()); i++) await sleep(10);
    }
  });
});
