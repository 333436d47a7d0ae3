/** The ros2 backend's follow of a published trajectory in plan time: pause, resume and override re-time its rest. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { JointLimits } from '../../lib/robot/limits.ts';
import { RetimedPath } from '../../lib/ros/retimed-path.ts';
import { bundledLimits } from '../support/arm.ts';

// Loaded at the top (not in a top-level hook): the file can share a test process with others (scripts/test-groups.mjs).
const limits: JointLimits = await bundledLimits();

const Z = [0, 0, 0, 0, 0, 0, 0];
/** joint1 from 0 to 0.5 rad in 1 s, straight (the second point has positions only: linear). */
const path = () => ({
  jointNames: limits.jointNames,
  points: [
    { positions: Z, velocities: Z, timeFromStartS: 0 },
    { positions: [0.5, 0, 0, 0, 0, 0, 0], timeFromStartS: 1 },
  ],
});

describe('RetimedPath', () => {
  it('follows the plan time as published, pauses on its path, resumes to its end', () => {
    const followed = new RetimedPath(path(), limits, 1000);
    assert.deepEqual(followed.progressAt(1500), { tauS: 0.5, rate: 1 });
    const pause = followed.retime(1500, 0);
    assert.ok(followed.paused);
    const last = pause.points.at(-1);
    assert.ok(last);
    const restQ = last.positions[0] ?? Number.NaN;
    assert.deepEqual(last.velocities, Z, 'it ends at rest');
    assert.ok(restQ > 0.25 && restQ < 0.5, `rests on the way: ${restQ}`);
    for (const p of pause.points) assert.deepEqual(p.positions.slice(1), Z.slice(1), 'on the path: joint1 only');
    const restAt = followed.endsAtMs();
    const there = followed.progressAt(restAt + 500);
    assert.equal(there.rate, 0);
    assert.ok(Math.abs(there.tauS * 0.5 - restQ) < 1e-9, 'plan time and position agree');
    assert.equal(followed.finishedAt(restAt + 500), false, 'paused is not finished');
    const resume = followed.retime(restAt + 500, 1);
    assert.equal(followed.paused, false);
    assert.deepEqual(resume.points.at(-1)?.positions, [0.5, 0, 0, 0, 0, 0, 0], 'the resumed rest ends at the goal');
    assert.ok(Math.abs((resume.points[0]?.positions[0] ?? 0) - restQ) < 0.01, 'from where it rests');
    assert.equal(followed.finishedAt(followed.endsAtMs() + 1), true);
  });

  it('at 50 % the rest of the path takes about twice as long', () => {
    const followed = new RetimedPath(path(), limits, 0);
    const slow = followed.retime(0, 0.5);
    const duration = slow.points.at(-1)?.timeFromStartS ?? 0;
    assert.ok(Math.abs(duration - 2) < 0.05, `${duration} s`);
    assert.ok(Math.abs(followed.progressAt(1000).tauS - 0.5) < 0.02, 'half the plan time after 1 s');
  });
});
