/**
 * POST /trajectory/send on the simulated arm on a clock the test steps (lib/clock.ts): what is published on
 * the controller topic, and the arm following the points to the last one, sampled every 10 ms of the clock, so the
 * samples are where the trajectory puts the arm then whatever the machine's load (moved from trajectory.test.ts,
 * whose app runs on the wall clock: one app per process).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { JointTrajectoryMsg } from '../../lib/ros/messages.ts';
import { SteppedClock } from '../../lib/clock.ts';
import { SimContext } from '../../lib/sim/context.ts';
import { JOINT_NAMES, jointStates, type JointStates, logLines, maxDiff, post, type Target } from '../support/live.ts';
import { createTestApp, testConfig } from '../support/server.ts';

const TIME_SCALE = 10;
const TOPIC = '/iiwa_arm_controller/joint_trajectory';

describe('POST /trajectory/send on a stepped clock', () => {
  it('answers {status: sent, points: N, times_increasing: true} and the arm follows the points to the last one', async () => {
    // On a clock the test steps (10 ms between reads): every sample is where the trajectory puts it then,
    // whatever the machine's load; an app of its own, the simulator on that clock.
    const clock = new SteppedClock(0, Date.now());
    const own = await createTestApp(
      {},
      { context: await SimContext.create(await testConfig({ sim: { time_scale: TIME_SCALE } }), clock) },
    );
    const url: Target = own;
    const published: JointTrajectoryMsg[] = [];
    const off = own.context.subscribe(TOPIC, (msg) => published.push(msg as JointTrajectoryMsg));
    try {
      const start = await jointStates(url);
      assert.ok(
        start.velocity.every((v) => v === 0),
        'at rest',
      );
      const q0 = start.position;
      const via = (j1: number, j7: number) => q0.map((q, j) => (j === 0 ? j1 : j === 6 ? j7 : q));
      const points = [
        { positions: via(0.1, 0.05), time_from_start: 1 },
        { positions: via(0.25, 0.1), time_from_start: 2 },
        { positions: via(0.4, 0.2), time_from_start: 3 },
      ];
      const count = published.length;
      const sentAt = clock.nowMs();
      const res = await post(url, '/trajectory/send', { points });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, { status: 'sent', points: 3, duration: 3, time_scale: 1, times_increasing: true });
      // The message on the controller topic: joint1..joint7, the points, time_from_start as a ROS duration.
      assert.equal(published.length, count + 1);
      const msg = published.at(-1);
      assert.deepEqual(msg?.joint_names, [...JOINT_NAMES]);
      assert.deepEqual(
        msg?.points.map((p) => ({ positions: p.positions, time_from_start: p.time_from_start })),
        points.map((p) => ({ positions: p.positions, time_from_start: { sec: p.time_from_start, nanosec: 0 } })),
      );
      // validate_limits (default true): armgate filled in velocities, so the controller interpolates a cubic spline;
      // joint1 rises through every point (the three-point estimate), nothing else moves, and the last point is at rest.
      const velocities = msg?.points.map((p) => p.velocities) ?? [];
      assert.equal(velocities.length, 3);
      assert.ok(velocities.every((v) => v.length === 7));
      assert.ok((velocities[0]?.[0] ?? 0) > 0 && (velocities[1]?.[0] ?? 0) > 0, JSON.stringify(velocities));
      assert.deepEqual(velocities[2], [0, 0, 0, 0, 0, 0, 0]);
      assert.ok(velocities.every((v) => v.every((x, j) => x === 0 || j === 0 || j === 6)));
      // Sample the motion: joint1 rises monotonically through intermediate values and stops exactly at the last point.
      const samples: JointStates[] = [];
      for (;;) {
        const s = await jointStates(url);
        samples.push(s);
        if (s.velocity.every((v) => v === 0) && maxDiff(s.position, points[2]?.positions ?? []) < 1e-9) break;
        assert.ok(clock.nowMs() - sentAt < 5000, 'the arm reaches the last point');
        await clock.advance(10);
      }
      const elapsedS = (clock.nowMs() - sentAt) / 1000;
      assert.ok(
        elapsedS >= 3 / TIME_SCALE && elapsedS < 3 / TIME_SCALE + 0.1,
        `the motion took its time (${elapsedS.toFixed(3)} s of the clock for 3 s simulated at x${TIME_SCALE})`,
      );
      const j1 = samples.map((s) => s.position[0] ?? Number.NaN);
      assert.ok(
        j1.some((q) => q > 0.02 && q < 0.38),
        `intermediate positions seen: ${j1.map((q) => q.toFixed(3)).join(' ')}`,
      );
      for (let k = 1; k < j1.length; k++) assert.ok((j1[k] ?? 0) >= (j1[k - 1] ?? 0) - 1e-12, 'joint1 never goes back');
      const end = samples.at(-1);
      assert.ok(end);
      assert.ok(
        maxDiff(end.position, points[2]?.positions ?? []) < 1e-9,
        `ends at the last point: ${end.position.join(', ')}`,
      );
      const lines = await logLines(url, '/trajectory/logs', 20);
      const accepted = lines.findIndex((l) => /controller: accepted trajectory #\d+ \(3 points/.test(l));
      assert.ok(accepted >= 0, lines.join('\n'));
      assert.ok(
        lines.findIndex((l) =>
          /publishing 3 points \(3 s\) from POST \/trajectory\/send on \/iiwa_arm_controller\/joint_trajectory/.test(l),
        ) < accepted,
      );
      assert.ok(
        lines.slice(accepted).some((l) => /controller: trajectory #\d+ finished/.test(l)),
        lines.join('\n'),
      );
      assert.ok(
        lines.slice(accepted).some((l) => /controller: holding position \[0\.4000,/.test(l)),
        lines.join('\n'),
      );
    } finally {
      off();
      await own.close();
    }
  });
});
