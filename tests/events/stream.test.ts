/**
 * GET /events on a live server over the simulated arm, with a token (issue 14): auth and
 * validation, joint states at the asked rate following a move, motion events with one id from
 * start to end, the stop event, log lines, sequence status, a slow consumer dropped while the
 * others go on, the document in /openapi.json, and the live page's shell (public) and its
 * robot description (token).
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { EventBus } from '../../lib/events/bus.ts';
import { eventsHandler, MAX_BUFFERED_BYTES } from '../../lib/http/sse.ts';
import { maxDiff, sleep, WORK } from '../support/live.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { openSse, type SseEvent, type SseStream } from '../support/sse.ts';

const TOKEN = 'events-test-token';
const AUTH = { authorization: `Bearer ${TOKEN}` };
const TARGET = [0.4, 0.2, 0, -1.3, 0, 1.3, 0.2];

interface JointStateData {
  stamp: number;
  position: number[];
  velocity: number[];
  effort: number[];
}
interface MotionData {
  id: number;
  kind: string;
  state: string;
  message: string;
}

async function postJson(url: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { ...AUTH, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: await res.json() };
}

const ofType = (type: string) => (event: SseEvent) => event.type === type;

describe('GET /events', () => {
  let server: TestServer;
  const streams: SseStream[] = [];
  const open = async (path = '/events', token: string | null = TOKEN) => {
    const stream = await openSse(server.url, path, token ? { token } : {});
    streams.push(stream);
    return stream;
  };

  before(async () => {
    server = await startTestServer({ web: { token: TOKEN }, sim: { time_scale: 4 } });
  });
  after(async () => {
    for (const stream of streams) stream.close();
    await server?.close();
  });

  it('answers 401 without the token and 422 for a rate outside 1..200', async () => {
    const anonymous = await open('/events', null);
    assert.equal(anonymous.status, 401, 'no token: 401');
    const fast = await open('/events?rate_hz=500');
    assert.equal(fast.status, 422, 'rate_hz 500: 422');
    const res = await fetch(`${server.url}/events`, { method: 'POST', headers: AUTH });
    assert.equal(res.status, 405, 'POST /events: 405');
    assert.equal(res.headers.get('allow'), 'GET', 'Allow: GET');
    await res.body?.cancel();
  });

  it('streams text/event-stream with joint states at rate_hz', async () => {
    const res = await fetch(`${server.url}/events?rate_hz=20`, { headers: AUTH });
    assert.equal(res.status, 200, 'status 200');
    assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/, 'content type');
    await res.body?.cancel();
    const stream = await open('/events?rate_hz=20');
    await sleep(1500);
    const states = stream.events.filter(ofType('joint_state'));
    // The rate by the stamps (a loaded machine may deliver late, but not more often).
    const stamps = states.map((e) => (e.data as JointStateData).stamp);
    const rate = (stamps.length - 1) / ((stamps.at(-1) ?? 0) - (stamps[0] ?? 0));
    assert.ok(states.length >= 10, `joint states keep coming at 20 Hz: ${states.length} in 1.5 s`);
    assert.ok(rate > 15 && rate < 22, `about 20 joint states per second of stamps, got ${rate.toFixed(1)}`);
    const first = states[0]?.data as JointStateData;
    assert.equal(first.position.length, 7, '7 positions');
    assert.equal(first.velocity.length, 7, '7 velocities');
    assert.equal(first.effort.length, 7, '7 efforts');
    assert.ok(Math.abs(first.stamp - Date.now() / 1000) < 5, `stamp in seconds of the epoch: ${first.stamp}`);
    const ids = stream.events.map((e) => e.id ?? 0);
    assert.ok(
      ids.every((id, i) => i === 0 || id > (ids[i - 1] ?? 0)),
      `ids increase: ${ids.slice(0, 10).join(', ')}`,
    );
    stream.close();
  });

  it('shows a move: motion started and finished with one id, joint states reaching the target', async () => {
    const stream = await open('/events?rate_hz=50');
    const answer = await postJson(server.url, '/robot/move/joints', { joints: TARGET, speed: 0.5 });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal((answer.body as { success: boolean }).success, true, JSON.stringify(answer.body));
    const started = await stream.next((e) => e.type === 'motion' && (e.data as MotionData).state === 'started');
    const finished = await stream.next((e) => e.type === 'motion' && (e.data as MotionData).state === 'finished');
    const s = started.data as MotionData;
    const f = finished.data as MotionData;
    assert.equal(s.kind, 'move', 'kind move');
    assert.equal(f.id, s.id, 'start and end carry the same motion id');
    const reached = await stream.next(
      (e) => e.type === 'joint_state' && maxDiff((e.data as JointStateData).position, TARGET) < 0.01,
    );
    assert.ok(reached, 'a joint state at the target within 0.01 rad');
    const back = await postJson(server.url, '/robot/move/joints', { joints: WORK, speed: 0.5 });
    assert.equal(back.status, 200, JSON.stringify(back.body));
    stream.close();
  });

  it('publishes the stop, the stopped motion and the trajectory log lines', async () => {
    const stream = await open('/events?rate_hz=10');
    const moving = postJson(server.url, '/robot/move/joints', { joints: TARGET, speed: 0.1 });
    await stream.next((e) => e.type === 'motion' && (e.data as MotionData).state === 'started');
    await sleep(200);
    const stopped = await postJson(server.url, '/stop');
    assert.equal(stopped.status, 200, JSON.stringify(stopped.body));
    const move = await moving;
    assert.equal((move.body as { success: boolean }).success, false, 'the move was stopped');
    const ended = await stream.next((e) => e.type === 'motion' && (e.data as MotionData).state !== 'started');
    assert.equal((ended.data as MotionData).state, 'stopped', `motion state stopped: ${JSON.stringify(ended.data)}`);
    const stop = await stream.next(ofType('stop'));
    const data = stop.data as Record<string, unknown>;
    assert.equal(data.hold_published, true, `the stop event carries the report: ${JSON.stringify(data)}`);
    assert.match(String(data.revoked), /moving to joint angles/, 'and what it took the arm from');
    const line = await stream.next(
      (e) => e.type === 'trajectory_log' && / stop: /.test(String((e.data as { line: string }).line)),
    );
    assert.match((line.data as { line: string }).line, /^\d{4}-\d\d-\d\dT\S+Z stop: /, 'a stamped trajectory log line');
    await postJson(server.url, '/robot/move/joints', { joints: WORK, speed: 0.5 });
    stream.close();
  });

  it('publishes the sequence status and the sequence log lines', async () => {
    const stream = await open('/events?rate_hz=1');
    const form = new FormData();
    const config = { home: { joints: WORK, speed: 0.5 }, waypoints: [{ joints: TARGET, speed: 0.5 }] };
    form.set('config', new Blob([JSON.stringify(config)], { type: 'application/json' }), 'sequence.json');
    form.set('n_iterations', '1');
    form.set('delay_between_iterations', '0');
    const res = await fetch(`${server.url}/sequences/start`, { method: 'POST', headers: AUTH, body: form });
    assert.equal(res.status, 200, await res.text());
    const running = await stream.next(
      (e) => e.type === 'sequence' && (e.data as { status: string }).status === 'running',
    );
    assert.ok('iteration' in (running.data as object), 'running carries iteration');
    const finished = await stream.next(
      (e) => e.type === 'sequence' && (e.data as { status: string }).status === 'finished',
      60_000,
    );
    assert.equal((finished.data as { returncode: number }).returncode, 0, JSON.stringify(finished.data));
    const log = await stream.next(ofType('sequence_log'));
    assert.match((log.data as { line: string }).line, /runner started/, 'the first sequence log line');
    stream.close();
  });

  it('drops a client that does not read, and the others go on', async () => {
    // A raw socket that sends the request and then never reads: its buffer fills and the server drops it.
    const { port } = new URL(server.url);
    const socket = net.connect(Number(port), '127.0.0.1');
    socket.on('error', () => undefined);
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(
      `GET /events?rate_hz=200 HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`,
    );
    socket.pause();
    const reader = await open('/events?rate_hz=50');
    // Bulky events: trajectory log lines of 16 KiB fill the slow client's socket and then its buffer.
    const line = 'x'.repeat(16 * 1024);
    const bus = server.services.events;
    assert.ok(bus, 'the server has an event bus');
    const before = bus.size;
    // 4 lines (64 KiB) every 2 ms: the reading client keeps up, the paused one's socket and buffer fill.
    for (let i = 0; i < 4000 && bus.size === before; i++) {
      server.services.trajectoryLog.push(line);
      if (i % 4 === 3) await sleep(2);
    }
    assert.equal(bus.size, before - 1, `the slow client was dropped (buffer ${MAX_BUFFERED_BYTES} bytes)`);
    const count = reader.events.length;
    await sleep(300);
    assert.ok(reader.events.length > count, 'the reading client still receives events');
    socket.destroy();
    reader.close();
  });

  it('is documented in /openapi.json as text/event-stream', async () => {
    const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as {
      paths: Record<string, { get?: { responses: Record<string, { content?: Record<string, unknown> }> } }>;
    };
    const content = doc.paths['/events']?.get?.responses['200']?.content ?? {};
    assert.ok('text/event-stream' in content, `GET /events 200 is text/event-stream: ${JSON.stringify(content)}`);
  });

  it('serves the live page without a token, its robot description only with it', async () => {
    const page = await fetch(`${server.url}/`);
    assert.equal(page.status, 200, 'GET / without a token: 200');
    const html = await page.text();
    assert.match(html, /data-action="stop"/, 'the page has the stop button');
    for (const asset of [
      '/ui/app.js',
      '/ui/hold.js',
      '/ui/held.js',
      '/ui/jog-panel.js',
      '/ui/positions.js',
      '/ui/vendor/three/build/three.module.js',
      '/ui/vendor/urdf-loader/URDFLoader.js',
    ]) {
      const res = await fetch(`${server.url}${asset}`);
      assert.equal(res.status, 200, `${asset}: 200`);
      assert.match(res.headers.get('content-type') ?? '', /javascript/, `${asset} is JavaScript`);
      await res.body?.cancel();
    }
    for (const outside of [
      '/ui/vendor/three/package.json',
      '/ui/vendor/three/src/Three.js',
      '/ui/vendor/x/y.js',
      '/ui/hold.d.ts',
    ]) {
      const res = await fetch(`${server.url}${outside}`);
      assert.ok(res.status === 401 || res.status === 404, `${outside} is not served (${res.status})`);
      await res.body?.cancel();
    }
    const anonymous = await fetch(`${server.url}/ui/robot.urdf`);
    assert.equal(anonymous.status, 401, 'the robot description needs the token');
    await anonymous.body?.cancel();
    const urdf = await fetch(`${server.url}/ui/robot.urdf`, { headers: AUTH });
    assert.equal(urdf.status, 200, 'with the token: 200');
    assert.match(await urdf.text(), /<robot name="iiwa7">/, 'the bundled URDF');
  });
});

describe('GET /events at shutdown', () => {
  it('ends open streams when the server closes, without waiting for the grace period', async () => {
    const server = await startTestServer();
    const stream = await openSse(server.url, '/events');
    assert.equal(stream.status, 200, 'the stream opened');
    await stream.next((e) => e.type === 'joint_state');
    const t0 = performance.now();
    await server.close();
    const ms = performance.now() - t0;
    await stream.ended;
    assert.ok(ms < 1500, `close() took ${ms.toFixed(0)} ms with a stream open (grace period 2 s)`);
  });
});

describe('GET /events: how frames reach a stream', () => {
  /** Reads a stream's text until it ends. */
  async function readAll(res: Response): Promise<string> {
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    let text = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return text;
      text += Buffer.from(value).toString('utf8');
    }
  }
  const ids = (text: string) => [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));

  it('writes what one turn published on the next turn, in order, and nothing is lost when the bus ends the stream', async () => {
    const bus = new EventBus({ heartbeatMs: 0 });
    const handle = eventsHandler(bus);
    const early = await handle(new Request('http://armgate.test/events'));
    const late = await handle(new Request('http://armgate.test/events'));
    const earlyText = readAll(early);
    const lateText = readAll(late);
    for (let n = 1; n <= 5; n++) bus.publish('trajectory_log', { line: `line ${n}` });
    await new Promise((resolve) => setImmediate(resolve));
    // Published in the same turn as the bus closes: still delivered, before the end.
    for (let n = 6; n <= 8; n++) bus.publish('trajectory_log', { line: `line ${n}` });
    bus.close();
    for (const text of [await earlyText, await lateText]) {
      assert.deepEqual(ids(text), [1, 2, 3, 4, 5, 6, 7, 8], 'every event, in order');
      assert.ok(text.startsWith('retry: 2000'), 'after the opening');
    }
  });

  it('bounds a burst: past a client buffer published in one turn, the stream ends instead of queueing more', async () => {
    const bus = new EventBus({ heartbeatMs: 0 });
    const res = await eventsHandler(bus)(new Request('http://armgate.test/events'));
    const text = readAll(res);
    const line = 'x'.repeat(16 * 1024);
    const count = Math.ceil((2 * MAX_BUFFERED_BYTES) / line.length);
    for (let n = 0; n < count; n++) bus.publish('trajectory_log', { line });
    assert.equal(bus.size, 0, 'the client was dropped within the burst');
    const got = ids(await text);
    assert.ok(got.length > 0 && got.length < count, `what fit its buffer, in order: ${got.join(', ')}`);
    assert.deepEqual(
      got,
      got.map((_, i) => i + 1),
    );
    bus.close();
  });
});
