/** The stepped clock's advance at once: the timers due run in order, each at its time, with no turn of the event loop between. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SteppedClock } from '../../lib/clock.ts';

describe('SteppedClock.advanceAtOnce', () => {
  it('runs the timers due on the way in order, each at its time, within one turn of the event loop', async () => {
    const clock = new SteppedClock();
    const seen: string[] = [];
    let turned = false;
    setImmediate(() => {
      turned = true;
    });
    clock.after(300, () => seen.push(`b ${clock.nowMs()} ${turned}`));
    clock.after(100, () => seen.push(`a ${clock.nowMs()} ${turned}`));
    const every = clock.every(250, () => seen.push(`e ${clock.nowMs()} ${turned}`));
    clock.after(900, () => seen.push('late'));
    clock.advanceAtOnce(600);
    assert.equal(clock.nowMs(), 600);
    assert.equal(turned, false, 'the event loop did not turn');
    assert.deepEqual(seen, ['a 100 false', 'e 250 false', 'b 300 false', 'e 500 false']);
    every.cancel();
    assert.equal(clock.pending(), 1, 'the timer not yet due waits');
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(turned, true);
  });
});
