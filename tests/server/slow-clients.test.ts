/**
 * Slow clients and crowds over a real socket (issue 26 items 4 and 5): a body that does not arrive at the minimum
 * rate is cut with 408 and logged once; headers that do not arrive in time, 408; beyond the caps on connections (in
 * all and per client address), event streams and uploads, 503 with Retry-After before the body is read; POST /stop
 * and reads keep working throughout.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sleep } from '../support/live.ts';
import { connect, portOf, type RawConnection } from '../support/raw-http.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/** POST /stop and a read over fresh connections of this process (127.0.0.1): both answer 200 quickly. */
async function stopAndReadWork(server: TestServer): Promise<void> {
  const t0 = performance.now();
  const stop = await fetch(`${server.url}/stop`, { method: 'POST', headers: { connection: 'close' } });
  assert.equal(stop.status, 200, await stop.text());
  const read = await fetch(`${server.url}/robot/joint_states`, { headers: { connection: 'close' } });
  assert.equal(read.status, 200);
  await read.arrayBuffer();
  assert.ok(performance.now() - t0 < 2000, 'stop and a read answered at once');
}

describe('slow bodies and headers', () => {
  let server: TestServer;
  let port: number;
  before(async () => {
    server = await startTestServer({
      web: { limits: { body_grace_s: 0.5, body_min_bytes_per_s: 200, headers_timeout_s: 1 } },
    });
    port = portOf(server.url);
  });
  after(() => server.close());

  it('cuts a body trickled at 1 byte/s with 408 after the grace, logged once at info level; stop and reads work meanwhile', async () => {
    const from = server.logs.length;
    const trickles: RawConnection[] = [];
    for (let k = 0; k < 20; k++) {
      const c = await connect(port);
      c.write(
        `POST /trajectory/send HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\n` +
          'Content-Length: 100000\r\n\r\n{',
      );
      trickles.push(c);
    }
    const t0 = performance.now();
    const timer = setInterval(() => {
      for (const c of trickles) if (!c.socket.destroyed) c.write(' ');
    }, 1000);
    try {
      await stopAndReadWork(server);
      const answers = await Promise.all(trickles.map((c) => c.response(10_000)));
      const tookMs = performance.now() - t0;
      for (const res of answers) {
        assert.equal(res.status, 408, res.body);
        assert.equal(res.headers.connection, 'close');
        assert.match(
          JSON.parse(res.body).detail,
          /at least 200 bytes\/s is needed \(web\.limits\.body_min_bytes_per_s\)/,
        );
      }
      assert.ok(tookMs < 5000, `cut within the grace and a check (${tookMs.toFixed(0)} ms)`);
      await Promise.all(trickles.map((c) => c.closed));
    } finally {
      clearInterval(timer);
      for (const c of trickles) c.destroy();
    }
    await sleep(200);
    const lines = server.logs.slice(from).filter((l) => l.path === '/trajectory/send');
    assert.equal(lines.length, 20, JSON.stringify(lines));
    assert.ok(
      lines.every((l) => l.level === 'info' && l.status === 408),
      JSON.stringify(lines),
    );
    assert.deepEqual(
      server.logs.slice(from).filter((l) => l.level !== 'info'),
      [],
    );
  });

  it('keeps a body that arrives at the rate, however long after the grace', async () => {
    const c = await connect(port);
    const body = JSON.stringify({ points: [{ positions: [0, 0, 0, -1.57, 0, 1.57, 0], time_from_start: 0 }] });
    c.write(
      `POST /trajectory/send HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${body.length}\r\n\r\n`,
    );
    // About 1,000 bytes/s (5 times the minimum) for 1 s and more.
    for (let at = 0; at < body.length; at += 25) {
      c.write(body.slice(at, at + 25));
      await sleep(25);
    }
    const res = await c.response();
    c.destroy();
    assert.equal(res.status, 200, res.body);
  });

  it('answers headers that do not arrive within headers_timeout_s with 408', async () => {
    const c = await connect(port);
    c.write(`GET /robot/joint_states HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n`);
    const res = await c.response(5000);
    assert.equal(res.status, 408, res.body);
    await c.closed;
  });
});

describe('caps on connections, event streams and uploads', () => {
  let server: TestServer;
  let port: number;
  before(async () => {
    server = await startTestServer({
      web: {
        limits: {
          max_connections: 16,
          max_connections_per_client: 6,
          max_event_clients: 2,
          max_uploads: 1,
          retry_after_s: 3,
        },
      },
    });
    port = portOf(server.url);
  });
  after(() => server.close());

  const get = (c: RawConnection, path: string) => c.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
  const stopOn = (c: RawConnection) =>
    c.write(`POST /stop HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Length: 0\r\n\r\n`);

  /** A POST whose body never comes: the connection serves a request (busy) until its body is cut. */
  const busyOn = (c: RawConnection) =>
    c.write(
      `POST /robot/move/joints HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\n` +
        'Content-Length: 100000\r\n\r\n{',
    );

  it('per client address: beyond the cap the oldest idle connection of that address is closed to make room', async () => {
    const crowd: RawConnection[] = [];
    try {
      for (let k = 0; k < 6; k++) crowd.push(await connect(port, '127.0.0.2'));
      await sleep(50);
      const extra = await connect(port, '127.0.0.2');
      crowd.push(extra);
      await (crowd[0] as RawConnection).closed;
      assert.ok(
        crowd.slice(1).every((c) => !c.socket.destroyed && !c.socket.readableEnded),
        'only the oldest',
      );
      get(extra, '/robot/joint_states');
      assert.equal((await extra.response()).status, 200);
      await stopAndReadWork(server);
    } finally {
      for (const c of crowd) c.destroy();
    }
  });

  it('per client address: beyond the cap with every connection busy, 503 with Retry-After, a stop still served; other addresses unaffected', async () => {
    const crowd: RawConnection[] = [];
    try {
      for (let k = 0; k < 6; k++) {
        const c = await connect(port, '127.0.0.2');
        busyOn(c);
        crowd.push(c);
      }
      await sleep(100);
      const extra = await connect(port, '127.0.0.2');
      crowd.push(extra);
      get(extra, '/robot/joint_states');
      const refused = await extra.response();
      assert.equal(refused.status, 503, refused.body);
      assert.equal(refused.headers['retry-after'], '3');
      assert.match(JSON.parse(refused.body).detail, /web\.limits\.max_connections_per_client/);
      const another = await connect(port, '127.0.0.2');
      crowd.push(another);
      stopOn(another);
      assert.equal((await another.response()).status, 200, 'a stop is served beyond the cap');
      assert.ok(
        crowd.slice(0, 6).every((c) => !c.socket.destroyed && !c.socket.readableEnded),
        'the busy ones are kept',
      );
      await stopAndReadWork(server);
    } finally {
      for (const c of crowd) c.destroy();
    }
  });

  it('in all: beyond max_connections the oldest idle connection of the address holding the most is closed', async () => {
    const crowd: RawConnection[] = [];
    try {
      for (let k = 0; k < 15; k++) crowd.push(await connect(port, `127.0.1.${1 + (k % 4)}`));
      crowd.push(await connect(port, '127.0.1.5'));
      await sleep(50);
      const extra = await connect(port, '127.0.2.1');
      crowd.push(extra);
      // 127.0.1.1 to 127.0.1.3 hold 4 each: the first of them with the most, 127.0.1.1, loses its oldest.
      await (crowd[0] as RawConnection).closed;
      get(extra, '/robot/joint_states');
      assert.equal((await extra.response()).status, 200);
      assert.ok(
        crowd.slice(1).every((c) => !c.socket.destroyed && !c.socket.readableEnded),
        'only the oldest',
      );
    } finally {
      for (const c of crowd) c.destroy();
    }
    await sleep(100);
    await stopAndReadWork(server);
  });

  it('in all: beyond max_connections with every connection busy, 503 for every client address, a stop still served', async () => {
    const crowd: RawConnection[] = [];
    try {
      for (let k = 0; k < 16; k++) {
        const c = await connect(port, `127.0.1.${1 + (k % 4)}`);
        busyOn(c);
        crowd.push(c);
      }
      await sleep(100);
      const extra = await connect(port, '127.0.2.1');
      crowd.push(extra);
      get(extra, '/robot/joint_states');
      const refused = await extra.response();
      assert.equal(refused.status, 503, refused.body);
      assert.match(JSON.parse(refused.body).detail, /web\.limits\.max_connections\)/);
      const stop = await connect(port, '127.0.2.2');
      crowd.push(stop);
      stopOn(stop);
      assert.equal((await stop.response()).status, 200);
    } finally {
      for (const c of crowd) c.destroy();
    }
    await sleep(100);
    await stopAndReadWork(server);
  });

  it('event streams: beyond max_event_clients 503 with Retry-After; a closed stream frees its place', async () => {
    const streams: RawConnection[] = [];
    try {
      for (let k = 0; k < 2; k++) {
        const c = await connect(port);
        get(c, '/events');
        streams.push(c);
      }
      await sleep(200);
      assert.ok(streams.every((c) => /^HTTP\/1\.1 200/.test(c.received())));
      const third = await connect(port);
      get(third, '/events');
      const refused = await third.response();
      third.destroy();
      assert.equal(refused.status, 503, refused.body);
      assert.equal(refused.headers['retry-after'], '3');
      assert.match(JSON.parse(refused.body).detail, /web\.limits\.max_event_clients/);
      await stopAndReadWork(server);
      streams.shift()?.destroy();
      await sleep(200);
      const again = await connect(port);
      streams.push(again);
      get(again, '/events');
      await sleep(200);
      assert.match(again.received(), /^HTTP\/1\.1 200/);
    } finally {
      for (const c of streams) c.destroy();
    }
  });

  it('uploads: beyond max_uploads 503 before the body is read; the upload in flight completes', async () => {
    const csv = 't,joint1,joint2,joint3,joint4,joint5,joint6,joint7\n0,0,0,0,-1.57,0,1.57,0\n';
    const part = `--zz\r\nContent-Disposition: form-data; name="file"; filename="p.csv"\r\n\r\n${csv}\r\n--zz--\r\n`;
    const head = (length: number) =>
      `POST /trajectory/send_csv HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n` +
      `Content-Type: multipart/form-data; boundary=zz\r\nContent-Length: ${length}\r\n\r\n`;
    const first = await connect(port);
    first.write(head(part.length) + part.slice(0, 40));
    await sleep(200);
    // The second announces 10 MB and sends none of it: the answer comes without the body.
    const second = await connect(port);
    second.write(head(10 * 1024 * 1024));
    const refused = await second.response();
    second.destroy();
    assert.equal(refused.status, 503, refused.body);
    assert.equal(refused.headers['retry-after'], '3');
    assert.match(JSON.parse(refused.body).detail, /web\.limits\.max_uploads/);
    first.write(part.slice(40));
    const done = await first.response();
    first.destroy();
    assert.notEqual(done.status, 503, done.body);
    assert.ok(done.status < 500, done.body);
  });
});
