import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { watchServer } from '../../lib/ros/server-watch.ts';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

describe('the watch on the server of a goal in flight', () => {
  it('fires once the server has been gone for a second, with the reason', async () => {
    const watch = watchServer(() => false, 'the server left the graph');
    await sleep(900);
    assert.equal(watch.signal.aborted, false, 'not before a second');
    await sleep(700);
    assert.equal(watch.signal.aborted, true);
    assert.equal(watch.signal.reason, 'the server left the graph');
  });

  it('does not fire for a server that blinks out and back within the second', async () => {
    let up = true;
    const watch = watchServer(() => up, 'gone');
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
    const thrown = watchServer(() => {
      throw new Error('destroyed');
    }, 'gone');
    const stopped = watchServer(() => false, 'gone');
    stopped.stop();
    await sleep(1500);
    assert.equal(thrown.signal.aborted, false);
    assert.equal(stopped.signal.aborted, false);
  });
});
