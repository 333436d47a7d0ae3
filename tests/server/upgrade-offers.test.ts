/**
 * Requests offering an upgrade, pipelined behind another request on one connection, over a real socket. Node's parser
 * hands the socket over at an offer's head while the earlier answer is still to be written; an offer not taken (h2c,
 * or a WebSocket offered by a POST) was then read again by a new parser whose answers were never written: a stop so
 * sent stopped the arm and its client waited for ever. Now every answer comes, in the order asked; a stop offered so
 * is carried out at once, not after the earlier answer (an event stream's never ends), and a jog sent behind it before
 * its answer is 409 as behind any stop. A WebSocket upgrade pipelined so opens after the earlier answer is written.
 * And the upgrade step reads a path as the route table does: `/robot/jog/` is the jog socket, as without an upgrade.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sleep } from '../support/live.ts';
import { connect, portOf, upgradeAnswer } from '../support/raw-http.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const TOKEN = 'upgrade-offers-token-8d2c55';

describe('requests offering an upgrade, pipelined behind another', () => {
  let server: TestServer;
  let port: number;
  let head: string;

  before(async () => {
    server = await startTestServer({ web: { token: TOKEN } });
    port = portOf(server.url);
    head = `Host: 127.0.0.1:${port}\r\nAuthorization: Bearer ${TOKEN}\r\n`;
  });
  after(() => server.close());

  const read = () => `GET /robot/joint_states HTTP/1.1\r\n${head}\r\n`;
  const h2c = 'Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n';
  const offering = (method: string, path: string, offer: string) =>
    `${method} ${path} HTTP/1.1\r\n${head}${offer}${method === 'POST' ? 'Content-Length: 0\r\n' : ''}\r\n`;
  const websocketOffer =
    'Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n' +
    'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: armgate.jog.v1\r\n';

  /** Waits until `check` holds (polling), for at most 5 s: whether it held. */
  const eventually = async (check: () => boolean) => {
    for (let i = 0; i < 250 && !check(); i++) await sleep(20);
    return check();
  };

  for (const [what, offer] of [
    ['h2c', h2c],
    ['a WebSocket (by a POST: not taken)', websocketOffer],
  ] as const) {
    it(`a stop offering ${what} behind a read: both answered, in order, and the arm stopped`, async () => {
      const stops = server.services.arbiter.stopCount;
      const c = await connect(port);
      try {
        c.write(read() + offering('POST', '/stop', offer));
        const first = await c.response(5000);
        assert.equal(first.status, 200, first.body);
        assert.ok(Array.isArray(JSON.parse(first.body).position), 'the read answered first');
        const stop = await c.response(5000);
        assert.equal(stop.status, 200, stop.body);
        assert.equal(JSON.parse(stop.body).success, true, stop.body);
        assert.ok(server.services.arbiter.stopCount > stops, 'the arm was stopped');
        // The connection serves on.
        c.write(read());
        assert.equal((await c.response(5000)).status, 200);
      } finally {
        c.destroy();
      }
    });
  }

  it('a read offering h2c behind a read: both answered, in order', async () => {
    const c = await connect(port);
    try {
      c.write(read() + offering('GET', '/robot/joint_states', h2c));
      for (let i = 0; i < 2; i++) assert.equal((await c.response(5000)).status, 200);
    } finally {
      c.destroy();
    }
  });

  it('a stop offering h2c behind an event stream (an answer that never ends): carried out at once, its answer in its turn', async () => {
    const stops = server.services.arbiter.stopCount;
    const c = await connect(port);
    try {
      c.write(`GET /events HTTP/1.1\r\n${head}\r\n${offering('POST', '/stop', h2c)}`);
      assert.ok(await eventually(() => server.services.arbiter.stopCount > stops), 'the arm was stopped');
      // The stream's head may come after the stop ran (the stream waits its turn in the queue; a stop does not).
      assert.ok(await eventually(() => /^HTTP\/1\.1 200 /.test(c.received())), 'the stream is open');
      assert.ok(!c.received().includes('hold point'), "the stop's answer waits behind the stream's");
    } finally {
      c.destroy();
    }
  });

  it("a jog behind a stop offering h2c, behind a read, all in one write: the jog arrived before the stop's answer and is 409", async () => {
    const body = JSON.stringify({ joints: [0.5, 0, 0, 0, 0, 0, 0], ttl_ms: 500 });
    const jog =
      `POST /robot/jog HTTP/1.1\r\n${head}Content-Type: application/json\r\n` +
      `Content-Length: ${body.length}\r\n\r\n${body}`;
    const c = await connect(port);
    try {
      c.write(read() + offering('POST', '/stop', h2c) + jog);
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await c.response(5000)).status);
      assert.deepEqual(statuses, [200, 200, 409]);
    } finally {
      c.destroy();
    }
  });

  it('a WebSocket upgrade of /robot/jog behind a read: the read is answered, then the 101', async () => {
    const c = await connect(port);
    try {
      c.write(read() + offering('GET', '/robot/jog', websocketOffer));
      assert.ok(await eventually(() => c.received().includes('HTTP/1.1 101')), c.received());
      const text = c.received();
      assert.ok(text.startsWith('HTTP/1.1 200 '), text.slice(0, 200));
      assert.ok(text.indexOf('HTTP/1.1 101') > text.indexOf('"position"'), 'the 101 after the whole read');
    } finally {
      c.destroy();
    }
  });
});

describe('the upgrade step reads a path as the route table does', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ web: { token: TOKEN } });
  });
  after(() => server.close());

  /** The status of a WebSocket upgrade to `path` (101 when it opened) and the body of its refusal. */
  const upgrade = (path: string) =>
    upgradeAnswer(`${server.url.replace('http', 'ws')}${path}`, ['armgate.jog.v1'], {
      authorization: `Bearer ${TOKEN}`,
    });

  it('/robot/jog/ and /robot/x/../jog open the jog socket, as /robot/jog; a path with no socket stays 404', async () => {
    for (const path of ['/robot/jog', '/robot/jog/', '/robot/x/../jog']) {
      const { status, body } = await upgrade(path);
      assert.equal(status, 101, `${path}: ${body}`);
    }
    const plain = await fetch(`${server.url}/robot/jog/`, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(plain.status, 426, 'without the upgrade, the same spelling is the 426 it was');
    await plain.arrayBuffer();
    const none = await upgrade('/robot/jogs/');
    assert.equal(none.status, 404, none.body);
  });
});
