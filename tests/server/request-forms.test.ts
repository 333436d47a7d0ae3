/**
 * Every request form HTTP/1.1 allows (RFC 9112, 3.2) over a real socket (issue 26 item 1): an absolute-form target
 * reaches the same route as its path (POST /stop included: it stops the arm), `OPTIONS *` is answered, and what no
 * route can serve is a 4xx, never a 500.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sleep, waitFor } from '../support/live.ts';
import { connect, portOf, rawRequest } from '../support/raw-http.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { handlers } from '../../handlers/index.ts';

const TOKEN = 'request-forms-token-7c21';

describe('request targets over a real socket', () => {
  let server: TestServer;
  let port: number;
  let authority: string;
  const auth = `Authorization: Bearer ${TOKEN}\r\n`;

  before(async () => {
    server = await startTestServer({ web: { token: TOKEN }, sim: { time_scale: 10 } });
    port = portOf(server.url);
    authority = `127.0.0.1:${port}`;
  });
  after(() => server.close());

  const jointStates = async () => {
    const r = await fetch(`${server.url}/robot/joint_states`, { headers: { authorization: `Bearer ${TOKEN}` } });
    return (await r.json()) as { position: number[]; velocity: number[] };
  };
  const getStates = async () => (await jointStates()).position;
  const getVelocities = async () => (await jointStates()).velocity;

  /** Sets the arm moving (J1 by 1 rad over 20 s), sends `stopRequest` raw, and checks it stopped: the goal given. */
  async function stopAMove(stopRequest: string): Promise<number[]> {
    const states = await getStates();
    const goal = states.map((q, j) => (j === 0 ? q + 1.0 : q));
    const sent = await fetch(`${server.url}/trajectory/send`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ points: [{ positions: goal, time_from_start: 20 }] }),
    });
    assert.equal(sent.status, 200, await sent.text());
    await waitFor('the arm to move', getVelocities, (v) => v.some((x) => x !== 0), 5000, 5);
    const res = await rawRequest(port, stopRequest);
    assert.equal(res.status, 200, res.body);
    assert.equal(JSON.parse(res.body).status, 'stopped');
    const rest = await waitFor('the arm to rest', getVelocities, (v) => v.every((x) => x === 0), 2000, 5);
    assert.ok(rest.every((x) => x === 0));
    return goal;
  }

  it('POST /stop in absolute-form stops a moving arm, as the origin-form does', async () => {
    const goal = await stopAMove(
      `POST http://${authority}/stop HTTP/1.1\r\nHost: ${authority}\r\n${auth}Content-Length: 0\r\n\r\n`,
    );
    const held = await getStates();
    await sleep(200);
    assert.deepEqual(await getStates(), held, 'the arm holds after the absolute-form stop');
    assert.ok((held[0] ?? 0) < (goal[0] ?? 0) - 0.3, 'stopped part way, not at the goal');
  });

  it('serves a request offering a WebSocket upgrade with another method than GET over HTTP/1.1: a stop stops', async () => {
    // RFC 6455, 4.1: a WebSocket handshake is a GET. A POST offering one is no handshake: its offer is not taken and the
    // request is served (RFC 9110, 7.8). Answered 404 "no WebSocket at /stop", a stop was not made.
    const ws =
      'Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n';
    await stopAMove(`POST /stop HTTP/1.1\r\nHost: ${authority}\r\n${auth}${ws}Content-Length: 0\r\n\r\n`);
  });

  it('serves a request offering an upgrade it does not speak (h2c, as curl --http2 sends) over HTTP/1.1: a stop stops', async () => {
    // RFC 9110, 7.8: a server ignores an Upgrade it does not take. Answered 404 "no WebSocket", a stop was not made.
    const h2c = 'Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n';
    await stopAMove(`POST /stop HTTP/1.1\r\nHost: ${authority}\r\n${auth}${h2c}Content-Length: 0\r\n\r\n`);
    // A body comes through too, and a read.
    const body = JSON.stringify({ joints: [0.5, 0, 0, 0, 0, 0, 0], ttl_ms: 20 });
    const jog = await rawRequest(
      port,
      `POST /robot/jog HTTP/1.1\r\nHost: ${authority}\r\n${auth}${h2c}Content-Type: application/json\r\n` +
        `Content-Length: ${body.length}\r\n\r\n${body}`,
    );
    assert.equal(jog.status, 200, jog.body);
    assert.equal(JSON.parse(jog.body).jogging, true);
    const read = await rawRequest(port, `GET /robot/joint_states HTTP/1.1\r\nHost: ${authority}\r\n${auth}${h2c}\r\n`);
    assert.equal(read.status, 200, read.body);
    assert.equal(JSON.parse(read.body).position.length, 7);
  });

  it('answers an absolute-form GET exactly as its origin-form, query included', async () => {
    for (const path of ['/robot/joint_states', '/sequences/status', '/robot/positions', '/nowhere?x=1']) {
      const absolute = await rawRequest(
        port,
        `GET http://${authority}${path} HTTP/1.1\r\nHost: ${authority}\r\n${auth}\r\n`,
      );
      const origin = await rawRequest(port, `GET ${path} HTTP/1.1\r\nHost: ${authority}\r\n${auth}\r\n`);
      assert.equal(absolute.status, origin.status, `${path}: ${absolute.body}`);
      assert.ok(absolute.status < 500, path);
      if (path === '/robot/positions') assert.equal(absolute.body, origin.body);
    }
    // An absolute-form target with no path is the root; an upper-case scheme is the same scheme.
    const root = await rawRequest(port, `GET HTTP://${authority} HTTP/1.1\r\nHost: ${authority}\r\n${auth}\r\n`);
    const slash = await rawRequest(port, `GET / HTTP/1.1\r\nHost: ${authority}\r\n${auth}\r\n`);
    assert.equal(root.status, slash.status);
    assert.equal(root.body, slash.body);
    // The query of an absolute-form target reaches the handler.
    const logs = await rawRequest(
      port,
      `GET http://${authority}/trajectory/logs?lines=zero HTTP/1.1\r\nHost: ${authority}\r\n${auth}\r\n`,
    );
    assert.equal(logs.status, 422, logs.body);
  });

  it("takes the host from an absolute-form target (RFC 9112, 3.2.2): Host is ignored, the target's host admitted", async () => {
    // A rebinding name in Host is not what counts; an unadmitted host in the target is refused as in Host.
    const good = await rawRequest(
      port,
      `GET http://${authority}/robot/positions HTTP/1.1\r\nHost: evil.example\r\n${auth}\r\n`,
    );
    assert.equal(good.status, 200, good.body);
    const bad = await rawRequest(
      port,
      `GET http://evil.example:${port}/robot/positions HTTP/1.1\r\nHost: ${authority}\r\n${auth}\r\n`,
    );
    assert.equal(bad.status, 403, bad.body);
    // Authentication still applies to absolute-form requests.
    const anonymous = await rawRequest(
      port,
      `POST http://${authority}/stop HTTP/1.1\r\nHost: ${authority}\r\nContent-Length: 0\r\n\r\n`,
    );
    assert.equal(anonymous.status, 401, anonymous.body);
  });

  it('answers OPTIONS * with 204 and the methods the server serves', async () => {
    const res = await rawRequest(port, `OPTIONS * HTTP/1.1\r\nHost: ${authority}\r\n\r\n`);
    assert.equal(res.status, 204);
    // PUT (/robot/override) and DELETE (ending an MCP session) are served too.
    assert.equal(res.headers.allow, 'GET, POST, PUT, DELETE, OPTIONS');
    const listed = new Set(res.headers.allow?.split(', '));
    for (const { operation } of handlers) assert.ok(listed.has(operation.rest.method), operation.rest.method);
  });

  it('answers a target no route can serve with a 4xx naming it, never a 500', async () => {
    const cases = [
      `GET * HTTP/1.1\r\nHost: ${authority}\r\n\r\n`,
      `POST * HTTP/1.1\r\nHost: ${authority}\r\nContent-Length: 0\r\n\r\n`,
      `GET ftp://${authority}/robot/positions HTTP/1.1\r\nHost: ${authority}\r\n\r\n`,
      `GET http:///robot/positions HTTP/1.1\r\nHost: ${authority}\r\n\r\n`,
      `GET http://user:pw@${authority}/robot/positions HTTP/1.1\r\nHost: ${authority}\r\n\r\n`,
      `GET http://[::1/robot/positions HTTP/1.1\r\nHost: ${authority}\r\n\r\n`,
      `GET robot/positions HTTP/1.1\r\nHost: ${authority}\r\n\r\n`,
      `GET ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`,
      `CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`,
      // Two Host lines (RFC 9112, 3.2): Node keeps the first; the second, here a foreign one, must not go unseen.
      `POST /robot/move/named HTTP/1.1\r\nHost: ${authority}\r\nHost: evil.example\r\n${auth}Content-Type: application/json\r\nContent-Length: 16\r\n\r\n{"name":"home"}\n`,
      `GET /robot/positions HTTP/1.1\r\nhost: ${authority}\r\nHOST: ${authority}\r\n\r\n`,
    ];
    for (const request of cases) {
      const res = await rawRequest(port, request);
      const line = request.slice(0, request.indexOf('\r\n'));
      assert.ok(res.status >= 400 && res.status < 500, `${line}: ${res.status} ${res.body}`);
      assert.match(JSON.parse(res.body || '{}').detail ?? '', /\S/, `${line}: ${res.status} '${res.body}'`);
    }
    assert.ok(
      !server.logs.some((l) => l.level === 'error'),
      JSON.stringify(server.logs.filter((l) => l.level === 'error')),
    );
  });
});

describe('requests offering an upgrade not taken, on a connection kept open', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ web: { token: TOKEN, limits: { max_connections: 16 } } });
  });
  after(() => server.close());

  it('are answered one after another and hold the place of one connection, not one each', async () => {
    const port = portOf(server.url);
    const h2c = 'Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n';
    const read = `GET /robot/override HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${TOKEN}\r\n`;
    const kept = await connect(port);
    try {
      // 40 of them on one connection: counted as 40 connections they would fill max_connections (16).
      for (let i = 0; i < 40; i++) {
        kept.write(`${read}${h2c}\r\n`);
        assert.equal((await kept.response()).status, 200, `request ${i}`);
      }
      // 15 more connections fit beside it, each served, and the first is still open and served.
      const others = await Promise.all(Array.from({ length: 15 }, () => connect(port)));
      try {
        for (const other of others) other.write(`${read}\r\n`);
        const statuses = await Promise.all(others.map(async (other) => (await other.response()).status));
        assert.deepEqual(statuses, new Array(15).fill(200));
      } finally {
        for (const other of others) other.destroy();
      }
      kept.write(`${read}${h2c}\r\n`);
      assert.equal((await kept.response()).status, 200, 'the first connection still served');
    } finally {
      kept.destroy();
    }
  });
});
