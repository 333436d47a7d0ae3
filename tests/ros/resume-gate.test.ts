/** The gate where paused ros2 motion goals wait: a resume lets them go, a stop or the caller's abort ends them. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ResumeGate } from '../../lib/ros/resume-gate.ts';

describe('ResumeGate', () => {
  it('holds waiters until resume, and counts them', async () => {
    const gate = new ResumeGate();
    const a = gate.wait();
    const b = gate.wait();
    assert.equal(gate.size, 2);
    assert.equal(gate.resume(), 2);
    assert.deepEqual(await Promise.all([a, b]), [{ resumed: true }, { resumed: true }]);
    assert.equal(gate.size, 0);
    assert.equal(gate.resume(), 0, 'nothing left to resume');
  });

  it('a stop ends every wait with its reason; the caller aborting ends its own wait only', async () => {
    const gate = new ResumeGate();
    const caller = new AbortController();
    const mine = gate.wait(caller.signal);
    const other = gate.wait();
    caller.abort('the client went away');
    assert.deepEqual(await mine, { resumed: false, reason: 'the client went away' });
    assert.equal(gate.size, 1);
    assert.equal(gate.end('stopped'), 1);
    assert.deepEqual(await other, { resumed: false, reason: 'stopped' });
    const late = await gate.wait(AbortSignal.abort('already gone'));
    assert.deepEqual(late, { resumed: false, reason: 'already gone' }, 'an aborted signal never waits');
    assert.equal(gate.size, 0);
  });
});
