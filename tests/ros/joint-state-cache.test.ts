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

/** The endpoints file's word on the topic: one joint, and the topic's name. */
const ORDER = { joint_names: ['joint1'], interfaces: { joint_states: { name: '/joint_states' } } };

describe('JointStateCache', () => {
  it('keeps the latest message with the clock time it arrived at', async () => {
    const clock = new SteppedClock(1000);
    const cache = new JointStateCache(clock, ORDER);
    assert.equal(cache.latest, undefined);
    cache.put(state(0.1));
    await clock.advance(25);
    cache.put(state(0.2));
    assert.deepEqual(cache.latest, { msg: state(0.2), receivedAtMs: 1025 });
  });

  it('hands the next message to every caller waiting, once', async () => {
    const clock = new SteppedClock();
    const cache = new JointStateCache(clock, ORDER);
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
    const cache = new JointStateCache(clock, ORDER);
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

  it('answers a read with the latest message while under 2 s old, then waits up to 2 s for the next, in joint order', async () => {
    const clock = new SteppedClock();
    const cache = new JointStateCache(clock, { ...ORDER, joint_names: ['joint2', 'joint1'] });
    const both = (q: number): JointStateMsg => ({
      ...state(q),
      name: ['joint1', 'joint2'],
      position: [q, -q],
      velocity: [0, 0],
    });
    cache.put(both(0.1));
    await clock.advance(2000);
    const fresh = await cache.current();
    assert.ok(fresh.ok);
    assert.deepEqual(
      [fresh.value.name, fresh.value.position],
      [
        ['joint2', 'joint1'],
        [-0.1, 0.1],
      ],
    );
    await clock.advance(1);
    const answers: Awaited<ReturnType<JointStateCache['current']>>[] = [];
    void cache.current().then((answer) => answers.push(answer));
    await clock.advance(5);
    assert.equal(answers.length, 0, 'a state over 2 s old is not answered: the read waits for the next');
    cache.put(both(0.2));
    await clock.advance(0);
    const waited = answers[0];
    assert.ok(waited?.ok);
    assert.deepEqual(waited.value.position, [-0.2, 0.2]);
  });

  it('answers unavailable when no message comes within 2 s, and names the joints a message lacks', async () => {
    const clock = new SteppedClock();
    const cache = new JointStateCache(clock, { ...ORDER, joint_names: ['joint1', 'joint2'] });
    const none = cache.current();
    await clock.advance(2000);
    const answer = await none;
    assert.ok(!answer.ok);
    assert.match(answer.error.message, /no joint state on \/joint_states within 2 s/);
    cache.put(state(0.1));
    const lacking = await cache.current();
    assert.ok(!lacking.ok);
    assert.match(lacking.error.message, /lack joint2/);
  });
});
