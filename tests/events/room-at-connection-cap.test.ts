/**
 * A new connection beyond web.limits.max_connections_per_client with no idle connection to shed makes room by ending
 * the connection of the address's /events stream stalled longest (5 s at least without a byte taken while bytes
 * waited), as a new stream does at max_event_clients (events2, session 6): with the default caps, one address's 256
 * non-reading streams reach that cap long before max_event_clients (1024), and held every connection of the address
 * (a front end behind the same proxy) but a stop's.
 *
 * A live server whose simulator and stall watch run on a clock the test steps; event_stall_s is an hour.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sleep } from '../support/live.ts';
import { nonReader } from '../support/non-reader.ts';
import type { TestServer } from '../support/server.ts';
import type { SseStream } from '../support/sse.ts';
import { type EventsServer, startEventsServer } from '../support/events-server.ts';

let events: EventsServer;
let server: TestServer;
let port: number;
let TOKEN: string;
let VIEWER: string;

const open = (rate: number) => events.open(rate);

const step = (ms: number) => events.step(ms);

describe('a new connection beyond max_connections_per_client, every connection an event stream', () => {
  before(async () => {
    events = await startEventsServer('room-at-connection-cap', {
      event_stall_s: 3600,
      max_connections_per_client: 4,
      max_event_clients: 100,
    });
    ({ server, port, token: TOKEN, viewer: VIEWER } = events);
  });
  after(async () => {
    await server.close();
  });

  it('ends the connection of the stream stalled longest; a reader keeps its own; none stalled: 503', async () => {
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
    const crowd = [nonReader(port, VIEWER), nonReader(port, VIEWER), nonReader(port, VIEWER)];
    let newcomer: SseStream | undefined;
    try {
      // Four connections of 127.0.0.1, each serving a stream, none stalled yet: the fifth is beyond the cap.
      await step(50);
      const early = await open(1);
      assert.equal(early.status, 503);

      const t0 = performance.now();
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
      const lines = roomLines();
      assert.equal(lines.length, 1, JSON.stringify(lines));
      assert.equal(lines[0]?.level, 'warn');
      assert.equal(lines[0]?.reason, 'reads too slowly');
      assert.equal(lines[0]?.streams, 1);
      assert.match(String(lines[0]?.why), /took nothing for 5 s or more; .*web\.limits\.max_connections_per_client/);
      // One of the three non-readers was ended: reading at last, it gets what the kernel held and then the end; the two
      // others read on. The reader keeps its stream.
      for (const c of crowd) c.readAll();
      const t1 = performance.now();
      while (crowd.filter((c) => c.isClosed()).length === 0 && performance.now() - t1 < 10_000) await sleep(20);
      await step(1000);
      await sleep(100);
      assert.equal(crowd.filter((c) => c.isClosed()).length, 1);
      assert.equal(readerEnded, false, 'the reading client was cut');
      const seen = reader.events.length;
      const tick = reader.next((e) => e.type === 'joint_state', 10_000, seen);
      await step(1500);
      await tick;
      // A stop is served at the cap whatever happens.
      const stop = await fetch(`${server.url}/stop`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } });
      assert.equal(stop.status, 200, await stop.text());
    } finally {
      for (const c of crowd) c.socket.destroy();
      reader.close();
      newcomer?.close();
      await sleep(10);
    }
  });
});
