// The joint-state cache both backends are composed of (lib/ros/joint-state-cache.ts), on a stepped clock: the latest
// message stamped at its arrival, the callers waiting for the next one, and a wait that ends empty at its timeout.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { JointStateCache } from '../../lib/ros/joint-state-cache.ts';
import type { JointStateMsg } from '../../lib/ros/messages.ts';
import { SteppedClock } from '../../lib/clock.ts';

const state = (q: number): JointStateMsg => ({
  header: { stamp: { sec: 0, nanosec: 0 }, frame_id: '' },
  name: ['joint1'],
  position: [q],
  velocity: [0],
  effort: [],
});

describe('JointStateCache', () => {
  it('keeps the latest message with the clock time it arrived at', async () => {
    const clock = new SteppedClock(1000);
    const cache = new JointStateCache(clock);
    assert.equal(cache.latest, undefined);
    cache.put(state(0.1));
    await clock.advance(25);
    cache.put(state(0.2));
    assert.deepEqual(cache.latest, { msg: state(0.2), receivedAtMs: 1025 });
  });

  it('hands the next message to every caller waiting, once', async () => {
    const clock = new SteppedClock();
    const cache = new JointStateCache(clock);
    cache.put(state(0.1));
    const first = cache.next(100);
    const second = cache.next(100);
    await clock.advance(10);
    cache.put(state(0.3));
    assert.deepEqual(await Promise.all([first, second]), [state(0.3), state(0.3)]);
    // Answered: their timers are cancelled and a later message goes to no one.
    assert.equal(clock.pending(), 0);
    const third = cache.next(100);
    cache.put(state(0.4));
    assert.deepEqual(await third, state(0.4));
  });

  it('answers undefined when no message comes within the timeout, and the late message does not reach it', async () => {
    const clock = new SteppedClock();
    const cache = new JointStateCache(clock);
    let answer: JointStateMsg | undefined | 'waiting' = 'waiting';
    void cache.next(50).then((msg) => {
      answer = msg;
    });
    await clock.advance(49);
    assert.equal(answer, 'waiting');
    await clock.advance(1);
    assert.equal(answer, undefined);
    cache.put(state(0.5));
    await clock.advance(1);
    assert.equal(answer, undefined);
    assert.deepEqual(cache.latest?.msg, state(0.5));
  });
});
