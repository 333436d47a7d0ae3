import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { matFromQuat } from '../../lib/kinematics/rotation.ts';
import {
  MOVEIT_FRAME_TRANSFORM_FAILURE,
  MOVEIT_INVALID_LINK_NAME,
  MOVEIT_SUCCESS,
  type GetPositionFkRequest,
} from '../../lib/ros/messages.ts';
import { SteppedClock } from '../../lib/clock.ts';
import { SimContext } from '../../lib/sim/context.ts';
import { dhFlangePose } from '../support/dh.ts';
import { testConfig } from '../support/server.ts';
import { JOINTS } from '../support/arm.ts';

const LIMITS = [2.97, 2.09, 2.97, 2.09, 2.97, 2.09, 3.05];

function fkRequest(q: readonly number[], link = 'flange', frame = 'base_link'): GetPositionFkRequest {
  return {
    header: { stamp: { sec: 0, nanosec: 0 }, frame_id: frame },
    fk_link_names: [link],
    robot_state: { joint_state: { name: [...JOINTS], position: [...q] } },
  };
}

describe('simulated FK service (MuJoCo) against an independent DH computation', () => {
  let sim: SimContext;
  before(async () => {
    sim = await SimContext.create(await testConfig({ sim: { publish_joint_states: false } }));
  });
  after(async () => {
    await sim.close();
  });

  it('puts the flange at (0, 0, 1.266) with z up at all-zero angles', async () => {
    const res = await sim.computeFk(fkRequest([0, 0, 0, 0, 0, 0, 0]));
    assert.ok(res.ok);
    const pose = res.value.pose_stamped[0]?.pose;
    assert.ok(pose);
    assert.ok(Math.abs(pose.position.x) < 1e-12 && Math.abs(pose.position.y) < 1e-12);
    assert.ok(Math.abs(pose.position.z - 1.266) < 1e-9);
    assert.ok(Math.abs(pose.orientation.w - 1) < 1e-12);
  });

  it('puts the flange near (0.400, 0, 0.614) pointing down at work', async () => {
    const res = await sim.computeFk(fkRequest([0, 0, 0, -1.57, 0, 1.57, 0]));
    assert.ok(res.ok);
    const pose = res.value.pose_stamped[0]?.pose;
    assert.ok(pose);
    assert.ok(Math.abs(pose.position.x - 0.4) < 1e-3 && Math.abs(pose.position.z - 0.614) < 1e-3);
    const r = matFromQuat(new Float64Array(9), pose.orientation);
    assert.ok((r[8] ?? 0) < -0.999, 'flange z axis points down');
  });

  it('matches DH position and rotation at random in-limit configurations', async () => {
    const config = fc.tuple(...LIMITS.map((l) => fc.double({ min: -l, max: l, noNaN: true })));
    await fc.assert(
      fc.asyncProperty(config, async (q) => {
        const res = await sim.computeFk(fkRequest(q));
        assert.ok(res.ok);
        assert.equal(res.value.error_code.val, MOVEIT_SUCCESS);
        const pose = res.value.pose_stamped[0]?.pose;
        assert.ok(pose);
        const dh = dhFlangePose(q);
        const r = matFromQuat(new Float64Array(9), pose.orientation);
        const p = [pose.position.x, pose.position.y, pose.position.z];
        for (const [i, v] of p.entries()) assert.ok(Math.abs(v - (dh.position[i] ?? 0)) < 1e-9, `position ${i}`);
        for (const [i, v] of r.entries()) assert.ok(Math.abs(v - (dh.rotation[i] ?? 0)) < 1e-9, `rotation ${i}`);
      }),
      { numRuns: 300 },
    );
  });

  it('fills joints the request leaves out from the current state', async () => {
    const res = await sim.computeFk({ ...fkRequest([]), robot_state: { joint_state: { name: [], position: [] } } });
    assert.ok(res.ok);
    const z = res.value.pose_stamped[0]?.pose.position.z ?? 0;
    assert.ok(Math.abs(z - 0.614) < 1e-3, 'the arm holds at work');
  });

  it('answers INVALID_LINK_NAME for an unknown link and FRAME_TRANSFORM_FAILURE for another frame', async () => {
    const link = await sim.computeFk(fkRequest([0, 0, 0, 0, 0, 0, 0], 'no_such_link'));
    assert.ok(link.ok);
    assert.equal(link.value.error_code.val, MOVEIT_INVALID_LINK_NAME);
    const frame = await sim.computeFk(fkRequest([0, 0, 0, 0, 0, 0, 0], 'flange', 'world'));
    assert.ok(frame.ok);
    assert.equal(frame.value.error_code.val, MOVEIT_FRAME_TRANSFORM_FAILURE);
  });
});

describe('simulated FK with a tool offset', () => {
  it('moves the TCP by the offset along the flange axes', async () => {
    const sim = await SimContext.create(
      await testConfig({ sim: { publish_joint_states: false, tool_offset: { z: 0.1 } } }),
    );
    try {
      const res = await sim.computeFk(fkRequest([0, 0, 0, -1.57, 0, 1.57, 0]));
      assert.ok(res.ok);
      const z = res.value.pose_stamped[0]?.pose.position.z ?? 0;
      assert.ok(Math.abs(z - (0.6143 - 0.1)) < 1e-3, `tool 0.1 m further down, got ${z}`);
    } finally {
      await sim.close();
    }
  });
});

describe('simulated joint states', () => {
  it('publishes at the configured rate with velocity and gravity-holding effort at work', async () => {
    // On a clock the test steps: the rate is the publisher's, whatever a loaded machine does to the event loop.
    const clock = new SteppedClock(0, Date.now());
    const sim = await SimContext.create(await testConfig({ sim: { joint_state_rate_hz: 100 } }), clock);
    try {
      const next = sim.nextJointState(1000);
      await clock.advance(10);
      const first = await next;
      // A message every 10 ms of the clock: 9 ms after one, none yet; at 10 ms, the next.
      for (let k = 0; k < 50; k++) {
        let message: unknown;
        void sim.nextJointState(1000).then((m) => {
          message = m;
        });
        await clock.advance(9);
        assert.equal(message, undefined, `no message 9 ms after message ${k}`);
        await clock.advance(1);
        assert.ok(message, `message ${k + 1} 10 ms after message ${k}`);
      }
      assert.ok(first);
      assert.deepEqual(first.name, JOINTS);
      assert.deepEqual(first.velocity, [0, 0, 0, 0, 0, 0, 0]);
      assert.ok(Math.abs(first.effort[1] ?? 0) > 5, `A2 holds the forearm: ${first.effort[1]}`);
      assert.ok(Math.abs(first.effort[3] ?? 0) > 5, `A4 holds the forearm: ${first.effort[3]}`);
      assert.ok(first.header.stamp.sec > 1_600_000_000, 'stamped with wall time');
    } finally {
      await sim.close();
    }
  });

  it('stays silent when publish_joint_states is false', async () => {
    const sim = await SimContext.create(await testConfig({ sim: { publish_joint_states: false } }));
    try {
      assert.equal(sim.latestJointState(), undefined);
      assert.equal(await sim.nextJointState(150), undefined);
    } finally {
      await sim.close();
    }
  });
});
