/**
 * The ros2 backend's motion timeout (timeouts.motion_s) runs on the context's clock, as the simulator's does: over the
 * rclnodejs stand-in (tests/support/rcl-server.ts) with the simulator, the rclnodejs context and the app on one clock
 * the test steps, a goal that outlasts 0.4 s of that clock is cancelled then, and not while the clock stands still,
 * however long the machine takes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SteppedClock } from '../../lib/clock.ts';
import { OTHER } from '../support/rcl-checks.ts';
import { type RclTestServer, startRclTestServer } from '../support/rcl-server.ts';
import { steppedUntilSettled } from '../support/stepped.ts';

describe('rclnodejs context: the motion timeout on the clock', () => {
  let t: RclTestServer;
  let clock: SteppedClock;
  before(async () => {
    clock = new SteppedClock(0, Date.now());
    t = await steppedUntilSettled(
      clock,
      startRclTestServer({
        sim: { sim: { time_scale: 1 } },
        clock,
        timeouts: { server_wait_s: 5, fk_s: 0.3, motion_s: 0.4 },
      }),
      'start-up',
    );
    assert.ok(await clock.until(() => t.context.latestJointState() !== undefined, 2, 2000), 'a first joint state');
  });
  after(() => t.close());

  it('cancels an action goal at 0.4 s of the clock, not before: 200 success false saying so', async () => {
    let answered = false;
    const sentMs = clock.nowMs();
    const reply = t.server
      .request('/robot/move/joints', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ joints: OTHER, speed: 0.05 }),
      })
      .finally(() => {
        answered = true;
      });
    // The goal goes out (its timeout starts then, not before it was sent) and the arm moves to 0.35 s of the clock...
    assert.ok(await clock.until(() => t.sim.armActivity() !== undefined, 2, 200), 'the goal moves the arm');
    while (clock.nowMs() - sentMs < 350) await clock.advance(5);
    assert.equal(answered, false, 'no answer before motion_s of the clock');
    // ...then the clock stands still for 600 ms of the machine: the goal is not cancelled meanwhile.
    await new Promise((resolve) => setTimeout(resolve, 600));
    assert.equal(answered, false, 'no answer while the clock stands still short of motion_s');
    assert.deepEqual(t.standin.cancels, [], 'nothing cancelled yet');
    const res = await steppedUntilSettled(clock, reply, 'the move past motion_s', 5000, 5);
    assert.deepEqual(await res.json(), { success: false, message: 'timed out after 0.4 s: the motion was cancelled' });
    assert.deepEqual(t.standin.cancels, ['cobot/move_to_joints']);
  });
});
