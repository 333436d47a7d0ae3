/**
 * The stall watch's choice of the stream to end to make room at web.limits.max_event_clients (lib/http/stall-watch.ts):
 * the one that has gone longest without taking a byte while bytes waited, only once that is ROOM_MIN_STALL_MS, never
 * one that reads or owes nothing; over streams whose bytes taken and owed the test sets, on a clock it steps.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SteppedClock } from '../../lib/clock.ts';
import { ROOM_MIN_STALL_MS } from '../../lib/http/sse.ts';
import { StallWatch } from '../../lib/http/stall-watch.ts';

class Stream {
  bytesTaken = 0;
  bytesOwed = 0;
  readonly name: string;
  constructor(name: string) {
    this.name = name;
  }
  taken(): number {
    return this.bytesTaken;
  }
  owed(): number {
    return this.bytesOwed;
  }
}

const STALL_MS = 30_000;

function watched(...names: string[]) {
  const clock = new SteppedClock(0);
  const ended: string[] = [];
  const watch = new StallWatch<Stream>(clock, STALL_MS, (stalled) => ended.push(...stalled.map((s) => s.name)));
  const streams = names.map((name) => new Stream(name));
  for (const stream of streams) watch.add(stream);
  const longest = () => watch.longestStalled(ROOM_MIN_STALL_MS, () => true)?.name;
  return { clock, watch, streams, ended, longest };
}

describe('StallWatch.longestStalled', () => {
  it('is the stream stalled longest, once it took nothing for ROOM_MIN_STALL_MS while bytes waited', async () => {
    const { clock, streams, longest, ended } = watched('a', 'b', 'c');
    const [a, b, c] = streams as [Stream, Stream, Stream];
    // b's buffers are full from the start; a's two seconds later; c reads all along.
    b.bytesOwed = 100;
    await clock.advance(2000);
    a.bytesTaken = 50;
    a.bytesOwed = 100;
    for (let t = 0; t < 10_000; t += 1000) {
      c.bytesTaken += 10;
      c.bytesOwed = 10;
      await clock.advance(1000);
    }
    // b has taken nothing for 12 s, a for 9 s (seen taking at the sweep of 3 s), c reads: b, then a; never c.
    assert.equal(longest(), 'b');
    b.bytesOwed = 0;
    assert.equal(longest(), 'a', 'b owes nothing now: it is no longer stalled');
    assert.deepEqual(ended, []);
  });

  it('is none while the stall is shorter than ROOM_MIN_STALL_MS, or the stream took a byte since the last sweep', async () => {
    const { clock, streams, longest } = watched('a');
    const [a] = streams as [Stream];
    a.bytesOwed = 100;
    await clock.advance(ROOM_MIN_STALL_MS - 1000);
    assert.equal(longest(), undefined);
    await clock.advance(1000);
    assert.equal(longest(), 'a');
    // It read between two sweeps: looked at again, it is not stalled; its stall starts anew.
    a.bytesTaken = 1;
    assert.equal(longest(), undefined);
    await clock.advance(ROOM_MIN_STALL_MS - 1000);
    assert.equal(longest(), undefined);
    await clock.advance(1000);
    assert.equal(longest(), 'a');
  });

  it('passes over a stream not eligible (an in-memory one, which the listener does not count)', async () => {
    const { clock, watch, streams } = watched('a', 'b');
    const [a, b] = streams as [Stream, Stream];
    a.bytesOwed = 100;
    await clock.advance(1000);
    b.bytesOwed = 100;
    await clock.advance(ROOM_MIN_STALL_MS + 1000);
    assert.equal(watch.longestStalled(ROOM_MIN_STALL_MS, (s) => s !== a)?.name, 'b');
  });
});
