import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SteppedClock } from '../../lib/clock.ts';
import { watchServer } from '../../lib/ros/server-watch.ts';

/** The watch's polls run on a stepped clock: `sleep(ms)` moves it `ms` on (no wall-clock wait). */
function stepped(): { clock: SteppedClock; sleep: (ms: number) => Promise<void> } {
  const clock = new SteppedClock();
  return { clock, sleep: (ms) => clock.advance(ms) };
}

describe('the watch on the server of a goal in flight', () => {
  it('fires once the server has been gone for a second, with the reason', async () => {
    const { clock, sleep } = stepped();
    const watch = watchServer(() => false, 'the server left the graph', clock);
    await sleep(900);
    assert.equal(watch.signal.aborted, false, 'not before a second');
    await sleep(700);
    assert.equal(watch.signal.aborted, true);
    assert.equal(watch.signal.reason, 'the server left the graph');
  });

  it('does not fire for a server that blinks out and back within the second', async () => {
    const { clock, sleep } = stepped();
    let up = true;
    const watch = watchServer(() => up, 'gone', clock);
    for (let i = 0; i < 4; i++) {
      up = false;
      await sleep(600);
      up = true;
      await sleep(300);
    }
    assert.equal(watch.signal.aborted, false);
    watch.stop();
  });

  it('ends quietly when asking throws (the client destroyed as the context closes), and after stop', async () => {
    const { clock, sleep } = stepped();
    const thrown = watchServer(
      () => {
        throw new Error('destroyed');
      },
      'gone',
      clock,
    );
    const stopped = watchServer(() => false, 'gone', clock);
    stopped.stop();
    await sleep(1500);
    assert.equal(clock.pending(), 0, 'no poll left waiting');
    assert.equal(thrown.signal.aborted, false);
    assert.equal(stopped.signal.aborted, false);
  });
});
