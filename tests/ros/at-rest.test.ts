import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { REST_VELOCITY_RAD_S } from '../../lib/ros/hold.ts';
import { REST_SPAN_RAD, REST_WINDOW_MS, RestWatch } from '../../lib/ros/at-rest.ts';

const Q = [0.4, 0.2, 0, -1.3, 0, 1.4, 0.2];
const still = Q.map(() => 0);
/** Q with joint 1 moved by `d`. */
const at = (d: number) => Q.map((q, i) => (i === 0 ? q + d : q));

/** Feeds messages every 10 ms (a 100 Hz topic); the index of the first that says rest, or -1. */
function firstRest(messages: readonly { position: readonly number[]; velocity?: readonly number[] }[]): number {
  const watch = new RestWatch();
  return messages.findIndex((m, i) => watch.observe(1000 + 10 * i, m.position, m.velocity));
}

describe('RestWatch: when joint states say the arm rests', () => {
  it('rests once the messages say still for the whole window, not at the first still one', () => {
    const messages = Array.from({ length: 10 }, () => ({ position: Q, velocity: still }));
    assert.equal(firstRest(messages), REST_WINDOW_MS / 10, 'the message that closes the window');
  });

  it('a velocity crossing zero is not rest: the window starts again at the next still message', () => {
    // Settling after a cancel: moving, one message at the zero crossing, moving back, then still.
    const v = (x: number) => Q.map((_, i) => (i === 0 ? x : 0));
    const messages = [
      { position: at(2e-3), velocity: v(0.02) },
      { position: at(2.1e-3), velocity: v(1e-5) },
      { position: at(1.9e-3), velocity: v(-0.02) },
      { position: at(1.5e-3), velocity: v(-0.03) },
      ...Array.from({ length: 8 }, () => ({ position: at(1e-3), velocity: still })),
    ];
    assert.equal(firstRest(messages), 4 + REST_WINDOW_MS / 10);
  });

  it('a joint over the speed bound, on any joint, restarts the window', () => {
    const fast = Q.map((_, i) => (i === 6 ? -2 * REST_VELOCITY_RAD_S : 0));
    const messages = [
      ...Array.from({ length: 4 }, () => ({ position: Q, velocity: still })),
      { position: Q, velocity: fast },
      ...Array.from({ length: 7 }, () => ({ position: Q, velocity: still })),
    ];
    assert.equal(firstRest(messages), 5 + REST_WINDOW_MS / 10);
  });

  it('slow velocities whose positions creep past the span over the window are not rest', () => {
    // 9e-4 rad/s reported, yet joint 1 moves 5e-5 rad a message: a velocity that does not tell the motion.
    const slow = Q.map((_, i) => (i === 0 ? 9e-4 : 0));
    const creeping = Array.from({ length: 20 }, (_, i) => ({ position: at(5e-5 * i), velocity: slow }));
    assert.equal(firstRest(creeping), -1);
    const settled = [...creeping, ...Array.from({ length: 6 }, () => ({ position: at(1e-3), velocity: slow }))];
    assert.equal(firstRest(settled), 20 + REST_WINDOW_MS / 10);
  });

  it('without velocities, positions within the span over the window decide', () => {
    const moving = Array.from({ length: 10 }, (_, i) => ({ position: at(2 * REST_SPAN_RAD * i) }));
    assert.equal(firstRest(moving), -1);
    const resting = Array.from({ length: 10 }, (_, i) => ({ position: at(0.5 * REST_SPAN_RAD * (i % 2)) }));
    assert.equal(firstRest(resting), REST_WINDOW_MS / 10);
  });

  it('velocities of another length than the positions do not count: the positions decide', () => {
    const messages = Array.from({ length: 10 }, () => ({ position: Q, velocity: [0.5] }));
    assert.equal(firstRest(messages), REST_WINDOW_MS / 10);
  });
});
