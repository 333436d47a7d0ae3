/**
 * The event bus alone (issue 14): each event serialized once for every subscriber, ids that
 * increase, joint states at each subscriber's rate and never faster than they are published,
 * heartbeats, close.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SteppedClock } from '../../lib/clock.ts';
import { EventBus, type EventSink } from '../../lib/events/bus.ts';
import { parseRate } from '../../lib/http/sse.ts';

const Q = [0, 0, 0, -1.57, 0, 1.57, 0];
const ZERO = [0, 0, 0, 0, 0, 0, 0];

/** A sink that keeps its frames as text and the Uint8Array objects themselves. */
function sink(): EventSink & { frames: Uint8Array[]; texts: () => string[]; ended: boolean } {
  const frames: Uint8Array[] = [];
  const s = {
    frames,
    ended: false,
    send: (frame: Uint8Array) => frames.push(frame),
    end: () => {
      s.ended = true;
    },
    texts: () => frames.map((f) => Buffer.from(f).toString('utf8')),
  };
  return s;
}

/** Publishes joint states every `periodMs` from t = 0 to `untilMs` on a bus with a manual clock. */
function publishEvery(periodMs: number, untilMs: number, rates: number[]) {
  let now = 0;
  const bus = new EventBus({ heartbeatMs: 0, now: () => now });
  const sinks = rates.map((hz) => {
    const s = sink();
    bus.subscribe(s, { jointStateHz: hz });
    return s;
  });
  for (now = 0; now < untilMs; now += periodMs) bus.publishJointState(now / 1000, Q, ZERO, ZERO);
  bus.close();
  return sinks;
}

describe('event bus', () => {
  it('serializes an event once: every subscriber gets the same bytes', () => {
    const bus = new EventBus({ heartbeatMs: 0 });
    const a = sink();
    const b = sink();
    bus.subscribe(a, { jointStateHz: 50 });
    bus.subscribe(b, { jointStateHz: 50 });
    const id = bus.publish('motion', { id: 1, kind: 'move', state: 'started', message: 'x' });
    assert.equal(id, 1, 'the first event has id 1');
    assert.equal(a.frames.length, 1, 'a got one frame');
    assert.equal(a.frames[0], b.frames[0], 'both subscribers got the very same Uint8Array');
    assert.equal(
      a.texts()[0],
      'id: 1\nevent: motion\ndata: {"id":1,"kind":"move","state":"started","message":"x"}\n\n',
      'the frame is id, event and one data line',
    );
    bus.close();
  });

  it('numbers events with increasing ids across types', () => {
    const bus = new EventBus({ heartbeatMs: 0 });
    const a = sink();
    bus.subscribe(a, { jointStateHz: 200 });
    bus.publish('trajectory_log', { line: 'one' });
    bus.publishJointState(1, Q, ZERO, ZERO);
    bus.publish('stop', { reason: 'stopped' });
    const ids = a.texts().map((t) => Number(/^id: (\d+)/.exec(t)?.[1]));
    assert.deepEqual(ids, [1, 2, 3], `ids in order: ${ids.join(', ')}`);
    bus.close();
  });

  it('does no work when nobody listens', () => {
    const bus = new EventBus({ heartbeatMs: 0 });
    assert.equal(bus.publish('stop', {}), 0, 'publish without subscribers returns 0');
    bus.publishJointState(1, Q, ZERO, ZERO);
    assert.equal(bus.counts.published, 0, 'nothing was serialized');
    bus.close();
  });

  it('gives each subscriber joint states at its rate, never faster than they are published', () => {
    // 100 Hz published for 2 s; subscribers at 1, 10, 30, 50, 100 and 200 Hz.
    const [s1, s10, s30, s50, s100, s200] = publishEvery(10, 2000, [1, 10, 30, 50, 100, 200]);
    const counts = [s1, s10, s30, s50, s100, s200].map((s) => s?.frames.length ?? -1);
    // Over [0, 2 s) a subscriber takes its first at 0 and may take one more at the window's end.
    const expected = [2, 20, 60, 100, 200, 200];
    for (const [k, hz] of [1, 10, 30, 50].entries()) {
      const n = counts[k] ?? -1;
      const want = expected[k] ?? 0;
      assert.ok(n >= want && n <= want + 1, `${hz} Hz over 2 s: ${want} or ${want + 1} events, got ${n} (${counts})`);
    }
    assert.equal(counts[4], 200, `100 Hz: every message, got ${counts[4]}`);
    assert.equal(counts[5], 200, `200 Hz from a 100 Hz publisher: every message, no more (got ${counts[5]})`);
  });

  it('builds one joint_state frame for all subscribers that take it', () => {
    let now = 0;
    const bus = new EventBus({ heartbeatMs: 0, now: () => now });
    const a = sink();
    const b = sink();
    bus.subscribe(a, { jointStateHz: 50 });
    bus.subscribe(b, { jointStateHz: 50 });
    for (now = 0; now < 100; now += 10) bus.publishJointState(now / 1000, Q, ZERO, ZERO);
    assert.equal(a.frames.length, 5, `5 frames at 50 Hz in 100 ms, got ${a.frames.length}`);
    assert.ok(
      a.frames.every((frame, i) => frame === b.frames[i]),
      'the two subscribers got the same frame objects',
    );
    const data = JSON.parse(a.texts()[0]?.split('data: ')[1] ?? '{}');
    assert.deepEqual(Object.keys(data), ['stamp', 'position', 'velocity', 'effort'], 'joint_state fields');
    assert.deepEqual(data.position, Q, 'positions as published');
    bus.close();
  });

  it('sends a heartbeat comment to every subscriber, on its clock', async () => {
    const clock = new SteppedClock();
    const bus = new EventBus({ heartbeatMs: 20, clock });
    const a = sink();
    const b = sink();
    bus.subscribe(a, { jointStateHz: 50 });
    bus.subscribe(b, { jointStateHz: 50 });
    await clock.advance(19);
    assert.deepEqual(a.texts(), [], 'none before its period');
    await clock.advance(51);
    bus.close();
    assert.ok(a.texts().includes(': heartbeat\n\n'), `a heartbeat came: ${JSON.stringify(a.texts())}`);
    assert.deepEqual(a.texts(), [': heartbeat\n\n', ': heartbeat\n\n', ': heartbeat\n\n'], 'one each 20 ms in 70 ms');
    assert.deepEqual(b.texts(), a.texts(), 'to every subscriber');
    assert.equal(clock.pending(), 0, 'close cancels it');
  });

  it('ends every subscriber on close and refuses new ones', () => {
    const bus = new EventBus({ heartbeatMs: 0 });
    const a = sink();
    bus.subscribe(a, { jointStateHz: 50 });
    bus.close();
    assert.ok(a.ended, 'the subscriber was ended');
    const b = sink();
    bus.subscribe(b, { jointStateHz: 50 });
    assert.ok(b.ended, 'a subscriber after close is ended at once');
    assert.equal(bus.size, 0, 'no subscriber is kept');
  });

  it('an unsubscribed sink gets nothing more', () => {
    const bus = new EventBus({ heartbeatMs: 0 });
    const a = sink();
    const off = bus.subscribe(a, { jointStateHz: 50 });
    off();
    bus.publish('stop', {});
    assert.equal(a.frames.length, 0, 'no frame after unsubscribe');
    bus.close();
  });
});

describe('rate_hz', () => {
  const table: [string, number | string][] = [
    ['http://x/events', 50],
    ['http://x/events?rate_hz=1', 1],
    ['http://x/events?rate_hz=200', 200],
    ['http://x/events?rate_hz=12.5', 12.5],
    ['http://x/events?rate_hz=0', 'value_error'],
    ['http://x/events?rate_hz=201', 'value_error'],
    ['http://x/events?rate_hz=fast', 'type'],
    ['http://x/events?rate_hz=1e999', 'type'],
    ['http://x/events?rate_hz=5&rate_hz=6', 'value_error'],
    ['http://x/events?hz=5', 'extra_forbidden'],
  ];
  for (const [url, expected] of table) {
    it(`${url.slice(15) || '(none)'} -> ${expected}`, () => {
      const rate = parseRate(url);
      if (typeof expected === 'number') {
        assert.ok(rate.ok, `accepted: ${JSON.stringify(rate)}`);
        assert.equal(rate.value, expected, 'the rate');
      } else {
        assert.ok(!rate.ok && rate.error.kind === 'validation', `refused with a 422: ${JSON.stringify(rate)}`);
        assert.equal(rate.error.issues[0].type, expected, 'the issue type');
      }
    });
  }
});
