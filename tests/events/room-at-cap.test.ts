/**
 * A new /events stream at web.limits.max_event_clients makes room (events2, session 6): the stream whose client has
 * gone longest without taking a byte while bytes waited for it, for ROOM_MIN_STALL_MS (5 s) at least, is ended (the
 * warn line and last comment of the stall rule) and the new one is served; when no stream has stalled so long (a client
 * that reads, at 1 Hz or faster; one whose socket's buffers are not full yet), the new one is answered 503 as before.
 *
 * A live server whose simulator and stall watch run on a clock the test steps (as tests/events/stalled-streams.test.ts):
 * event_stall_s is an hour, so only making room ends a stream here.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sleep } from '../support/live.ts';
import type { TestServer } from '../support/server.ts';
import { nonReader } from '../support/non-reader.ts';
import type { SseStream } from '../support/sse.ts';
import { type EventsServer, startEventsServer } from '../support/events-server.ts';

let events: EventsServer;
let server: TestServer;
let port: number;
let TOKEN: string;
let VIEWER: string;

const open = (rate: number) => events.open(rate);

const step = (ms: number) => events.step(ms);

describe('a new /events stream at max_event_clients', () => {
  before(async () => {
    events = await startEventsServer('room-at-cap', { event_stall_s: 3600, max_event_clients: 2 });
    ({ server, port, token: TOKEN, viewer: VIEWER } = events);
  });
  after(async () => {
    await server.close();
  });

  it('ends the stream stalled longest to make room; a client that reads keeps its stream; none stalled: 503', async () => {
    const from = server.logs.length;
    const roomLines = () =>
      server.logs
        .slice(from)
        .filter((l) => l.msg === 'event streams ended' && /its place was wanted/.test(String(l.why)));
    const reader = await open(1);
    assert.equal(reader.status, 200);
    let readerEnded = false;
    void reader.ended.then(() => {
      readerEnded = true;
    });
    const never = nonReader(port, VIEWER);
    const opened: SseStream[] = [];
    try {
      // Its socket's buffers are not full yet: nothing waits in the server, it cannot be told from a reader.
      await step(50);
      const early = await open(1);
      assert.equal(early.status, 503);

      // The joint states fill the non-reader's socket (the kernel's buffers first), then it stalls: a new stream is
      // served once it took nothing for 5 s of the clock, and that stream is the one ended.
      const t0 = performance.now();
      let newcomer: SseStream | undefined;
      for (let k = 0; k < 2000 && performance.now() - t0 < 180_000; k++) {
        await step(500);
        const attempt = await open(1);
        if (attempt.status === 200) {
          newcomer = attempt;
          break;
        }
        assert.equal(attempt.status, 503);
      }
      assert.ok(newcomer, 'no room was made');
      opened.push(newcomer);
      const lines = roomLines();
      assert.equal(lines.length, 1, JSON.stringify(lines));
      assert.equal(lines[0]?.level, 'warn');
      assert.equal(lines[0]?.reason, 'reads too slowly');
      assert.equal(lines[0]?.streams, 1);
      assert.match(String(lines[0]?.why), /took nothing for 5 s or more; .*web\.limits\.max_event_clients/);
      // The non-reader, reading at last, gets what the kernel held for it, then the end of its stream.
      never.readAll();
      await never.closed;
      assert.match(never.text(), /^HTTP\/1\.1 200/);
      assert.ok(never.text().length > 100_000, `what the kernel held: ${never.text().length} bytes`);

      // The two that read hold both places for as long as they read, at 1 Hz: a new stream is refused, none is cut.
      await step(20_000);
      const refused = await open(1);
      assert.equal(refused.status, 503);
      assert.equal(readerEnded, false, 'the reading client was cut');
      assert.equal(roomLines().length, 1);
      const seen = reader.events.length;
      const tick = reader.next((e) => e.type === 'joint_state', 10_000, seen);
      await step(1500);
      await tick;
      const stop = await fetch(`${server.url}/stop`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } });
      assert.equal(stop.status, 200, await stop.text());
    } finally {
      never.socket.destroy();
      reader.close();
      for (const stream of opened) stream.close();
      await sleep(10);
    }
  });
});
