/**
 * /events streams whose clients do not read (atk3's finding, session 6): 1,024 of them held every place of
 * web.limits.max_event_clients for as long as they stayed open, and a front end opening /events afterwards was refused.
 * A stream that takes no byte for web.limits.event_stall_s while bytes wait for it (its socket's buffers full) is
 * ended, counted in a log line, and its place is free at once; a client that reads keeps its stream.
 *
 * A live server whose simulator and stall watch run on a clock the test steps: the arm's joint states (1 kHz publisher,
 * 200 Hz streams) fill the sockets of the clients that do not read (the kernel's buffers, a few MB, first) as fast as
 * the machine steps the clock, and the stall time passes on that clock, whatever the machine's load.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { SteppedClock } from '../../lib/clock.ts';
import { sleep } from '../support/live.ts';
import type { TestServer } from '../support/server.ts';
import { openSse, type SseStream } from '../support/sse.ts';
import { type EventsServer, startEventsServer } from '../support/events-server.ts';

let events: EventsServer;
let server: TestServer;
let clock: SteppedClock;
let port: number;
let TOKEN: string;
let VIEWER: string;

interface RawStream {
  readonly socket: net.Socket;
  text(): string;
  /** Reads on at full speed (what the kernel holds for it, then the server's end of the stream). */
  readAll(): void;
  readonly closed: Promise<void>;
}

/** A raw GET /events with the viewer's token; `read`: bytes it takes every 50 ms of the machine's time (0: none). */
function rawStream(read: number): RawStream {
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  let text = '';
  const closed = new Promise<void>((resolve) =>
    socket.on('close', () => {
      clearInterval(timer);
      resolve();
    }),
  );
  socket.write(
    `GET /events?rate_hz=200 HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${VIEWER}\r\n\r\n`,
  );
  socket.once('data', (chunk: Buffer) => {
    // The head and what came with it, then nothing more than `read` bytes at a time.
    text += chunk.toString('latin1');
    socket.pause();
  });
  const timer = setInterval(() => {
    if (read === 0) return;
    const chunk = socket.read(read) as Buffer | null;
    if (chunk) text += chunk.toString('latin1');
  }, 50);
  const readAll = () => {
    clearInterval(timer);
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
    });
    socket.resume();
  };
  return { socket, text: () => text, readAll, closed };
}

describe('an /events stream whose client does not read', () => {
  before(async () => {
    events = await startEventsServer('stalled-streams', { event_stall_s: 2, max_event_clients: 3 });
    ({ server, clock, port, token: TOKEN, viewer: VIEWER } = events);
  });
  after(async () => {
    await server.close();
  });

  it('is ended once it took nothing for event_stall_s, logged; its place is free, a reader keeps its stream', async () => {
    const reader = await openSse(server.url, '/events?rate_hz=200', { token: VIEWER });
    assert.equal(reader.status, 200);
    const from = server.logs.length;
    const never = rawStream(0);
    const trickle = rawStream(1);
    try {
      // Three streams hold the three places: a fourth is refused until one gives its place back.
      await clock.advance(50);
      const fourth = await fetch(`${server.url}/events`, { headers: { authorization: `Bearer ${VIEWER}` } });
      assert.equal(fourth.status, 503, await fourth.text());
      await endsBoth(reader, never, trickle, from);
    } finally {
      never.socket.destroy();
      trickle.socket.destroy();
      reader.close();
    }
  });
});

/** Steps the clock until the server ended the streams of `never` and `trickle`, then checks what each client sees. */
async function endsBoth(reader: SseStream, never: RawStream, trickle: RawStream, from: number): Promise<void> {
  let readerEnded = false;
  void reader.ended.then(() => {
    readerEnded = true;
  });
  const endedLines = () => server.logs.slice(from).filter((l) => l.msg === 'event streams ended');
  const endedCount = () => endedLines().reduce((n, l) => n + Number(l.streams), 0);
  // The arm's joint states fill the two sockets (about 100 s of the clock on loopback), then the stall time passes:
  // the clock runs on until both are ended (at most 20 min of it, 3 min of the machine's time).
  const t0 = performance.now();
  for (let k = 0; k < 240_000 && endedCount() < 2 && performance.now() - t0 < 180_000; k++) await clock.advance(5);
  const lines = endedLines();
  assert.equal(endedCount(), 2, JSON.stringify(lines));
  for (const line of lines) {
    assert.equal(line.reason, 'reads too slowly');
    assert.match(String(line.why), /took nothing for 2 s: web\.limits\.event_stall_s/);
  }
  // The two clients, reading at last, get what the kernel held for them and then the end of the stream.
  never.readAll();
  trickle.readAll();
  await Promise.all([never.closed, trickle.closed]);
  assert.match(never.text(), /^HTTP\/1\.1 200/);
  assert.match(trickle.text(), /^HTTP\/1\.1 200/);
  assert.ok(never.text().length > 100_000, `what the kernel held: ${never.text().length} bytes`);
  // The reader read all along: its stream is open and still carries the joint states.
  assert.equal(readerEnded, false, 'the reading client was cut');
  const seen = reader.events.length;
  await clock.advance(100);
  await sleep(50);
  const last = await reader.next((e) => e.type === 'joint_state', 10_000, seen);
  assert.ok(last.id !== undefined);

  // Their two places are free (max_event_clients: 3): two streams open, one reconnecting with Last-Event-ID.
  const again = await openSse(server.url, '/events?rate_hz=50', { token: VIEWER });
  const resumed = await fetch(`${server.url}/events?rate_hz=50`, {
    headers: { authorization: `Bearer ${VIEWER}`, 'last-event-id': String(last.id) },
  });
  assert.equal(again.status, 200);
  assert.equal(resumed.status, 200, await (resumed.status === 200 ? Promise.resolve('') : resumed.text()));
  await resumed.body?.cancel();
  const stop = await fetch(`${server.url}/stop`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } });
  assert.equal(stop.status, 200, await stop.text());
  const stopEvent = again.next((e) => e.type === 'stop', 10_000);
  await clock.advance(20);
  await stopEvent;
  again.close();
}
