/**
 * The fan-out never delays a stop (issue 37, item 2): the frames of a turn are written a batch of streams per turn of
 * the event loop, so that a stop read meanwhile runs before the rest; a client that has not taken what it was given
 * gets the newest joint state when it catches up, not a queue of old ones; frames wait while the bus is held (a stop
 * being answered: lib/server/start.ts). Through GET /events served in memory (the handler the live server serves).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EventBus } from '../../lib/events/bus.ts';
import { eventsHandler, STREAMS_PER_TURN } from '../../lib/http/sse.ts';

const Q = [0, 0, 0, -1.57, 0, 1.57, 0];
const ZERO = [0, 0, 0, 0, 0, 0, 0];
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** A stream read as it comes: the text received so far. */
function reading(response: Response): { text: () => string } {
  let text = '';
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  void (async () => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      text += Buffer.from(value).toString('utf8');
    }
  })();
  return { text: () => text };
}

const jointStates = (text: string) => [...text.matchAll(/^event: joint_state$/gm)].length;

describe('the event fan-out', () => {
  it('writes a batch of streams per turn of the event loop: a turn in between comes before 1,000 streams are written', async () => {
    const bus = new EventBus({ heartbeatMs: 0 });
    const handle = eventsHandler(bus);
    const streams = [];
    for (let k = 0; k < 1000; k++) streams.push(reading(await handle(new Request('http://armgate.test/events'))));
    // Let every stream take its opening.
    for (let k = 0; k < 5; k++) await nextTurn();
    bus.publishJointState(1, Q, ZERO, ZERO);
    // What a stop read by the next poll would find: the streams written so far.
    await nextTurn();
    await nextTurn();
    const early = streams.filter((s) => jointStates(s.text()) === 1).length;
    assert.ok(early < 1000, `${early} of 1,000 streams written before the loop came round`);
    assert.ok(early >= STREAMS_PER_TURN, `${early} written: at least a batch per turn`);
    for (let k = 0; k < 1000 / STREAMS_PER_TURN + 5; k++) await nextTurn();
    assert.equal(streams.filter((s) => jointStates(s.text()) === 1).length, 1000, 'then every stream');
    bus.close();
  });

  it('gives a client that has not taken what it was given the newest joint state, not a queue', async () => {
    // A stepped clock: each joint state 10 ms after the last, every one due at 100 Hz.
    let nowMs = 0;
    const bus = new EventBus({ heartbeatMs: 0, now: () => nowMs });
    const response = await eventsHandler(bus)(new Request('http://armgate.test/events?rate_hz=100'));
    // Nobody reads yet: 100 joint states (about 40 KB, within the client's buffer) and a log line come meanwhile.
    for (let k = 1; k <= 100; k++) {
      nowMs += 10;
      bus.publishJointState(k / 100, [k / 1000, ...Q.slice(1)], ZERO, ZERO);
      if (k === 50) bus.publish('trajectory_log', { line: 'halfway' });
      await nextTurn();
    }
    const stream = reading(response);
    for (let k = 0; k < 10; k++) await nextTurn();
    const text = stream.text();
    assert.equal(bus.size, 1, 'the client is kept');
    assert.match(text, /halfway/, 'the other events wait in order');
    assert.ok(jointStates(text) <= 2, `${jointStates(text)} joint states delivered`);
    assert.match(text, /"position":\[0\.1,/, 'the newest: the 100th');
    bus.close();
  });

  it('holds the writing while a stop is answered (the bus held): frames published meanwhile come after', async () => {
    const bus = new EventBus({ heartbeatMs: 0 });
    const stream = reading(await eventsHandler(bus)(new Request('http://armgate.test/events')));
    await nextTurn();
    const release = bus.hold();
    bus.publish('stop', { reason: 'held' });
    for (let k = 0; k < 5; k++) await nextTurn();
    assert.doesNotMatch(stream.text(), /event: stop/, 'not written while held');
    release();
    for (let k = 0; k < 5; k++) await nextTurn();
    assert.match(stream.text(), /event: stop/, 'written once released');
    bus.close();
  });
});
