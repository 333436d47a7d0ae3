/**
 * A stop pipelined behind a request a cap refuses with `Connection: close` (docs/api.md, the caps), over a real socket:
 * the refused request's 503 is the connection's last answer (the close follows it, no answer of the stop's own), and
 * the stop is carried out all the same, as any stop: for a right token of any role (every role may stop), audited and
 * logged as a stop; a wrong token's stop runs nothing. Both refusals: the listener's own 503 before a body (an upload
 * beyond max_uploads, then its lingering close) and the app's 503 to an MCP POST on a connection beyond the per-client
 * cap. A read pipelined there is still never served (tests/server/lingering-close.test.ts).
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { sleep } from '../support/live.ts';
import { connect, parseResponse, portOf, type RawConnection } from '../support/raw-http.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const ADMIN = 'behind-refusals-admin-7c1e93';
const READER = 'behind-refusals-reader-2f80aa';
/** The client address whose connections are all busy (each holding an event stream). */
const CROWDED = '127.0.7.1';

describe('a stop pipelined behind a refusal that closes the connection', () => {
  let server: TestServer;
  let port: number;
  let authority: string;
  const held: RawConnection[] = [];

  before(async () => {
    server = await startTestServer({
      web: {
        token: ADMIN,
        tokens: [{ name: 'viewer', token: READER, role: 'read' }],
        limits: {
          max_uploads: 1,
          max_connections_per_client: 4,
          retry_after_s: 3,
          lingering_time_s: 3,
          lingering_timeout_s: 1,
          body_grace_s: 60,
        },
      },
    });
    port = portOf(server.url);
    authority = `127.0.0.1:${port}`;
    // The one upload place, held by an upload whose body never comes (127.0.0.2: its own address).
    const upload = await connect(port, '127.0.0.2');
    upload.write(`${uploadHead(1000, ADMIN)}--zz\r\n`);
    held.push(upload);
    // Four event streams from one address: every connection of it serves a request (none idle to shed).
    for (let k = 0; k < 4; k++) {
      const c = await connect(port, CROWDED);
      c.write(`GET /events HTTP/1.1\r\nHost: ${authority}\r\nAuthorization: Bearer ${ADMIN}\r\n\r\n`);
      held.push(c);
    }
    for (let i = 0; i < 100 && !held.slice(1).every((c) => c.received().startsWith('HTTP/1.1 200')); i++)
      await sleep(20);
    assert.ok(
      held.slice(1).every((c) => c.received().startsWith('HTTP/1.1 200')),
      'the four streams are open',
    );
  });
  after(async () => {
    for (const c of held) c.destroy();
    await server.close();
  });

  /** The head of a multipart upload to /trajectory/send_csv announcing `length` bytes of body. */
  const uploadHead = (length: number, token: string) =>
    `POST /trajectory/send_csv HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${token}\r\n` +
    `Content-Type: multipart/form-data; boundary=zz\r\nContent-Length: ${length}\r\n\r\n`;
  const stopRequest = (token: string) =>
    `POST /stop HTTP/1.1\r\nHost: ${authority}\r\nAuthorization: Bearer ${token}\r\nContent-Length: 0\r\n\r\n`;

  /** Waits until the server has logged a request line for `path` since log line `from`: its status. */
  const loggedStatus = async (from: number, path: string): Promise<number | undefined> => {
    for (let i = 0; i < 250; i++) {
      const line = server.logs.slice(from).find((l) => l.msg === 'request' && l.path === path);
      if (line) return Number(line.status);
      await sleep(20);
    }
    return undefined;
  };

  /** Answers received in `text`: the status of each response in it. */
  const statuses = (text: string) => [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));

  for (const [who, token] of [
    ['an admin token', ADMIN],
    ['a read token (every role may stop)', READER],
  ] as const) {
    it(`behind the listener's 503 (max_uploads), in the same write: carried out for ${who}; only the 503 and the close come back`, async () => {
      const stops = server.services.arbiter.stopCount;
      const from = server.logs.length;
      const c = await connect(port);
      try {
        c.write(`${uploadHead(10, ADMIN)}0123456789${stopRequest(token)}`);
        const refused = await c.response();
        assert.equal(refused.status, 503, refused.body);
        assert.equal(refused.headers.connection, 'close');
        await c.closed;
        assert.deepEqual(statuses(c.received()), [503], 'the 503 is the last answer on the connection');
      } finally {
        c.destroy();
      }
      assert.equal(await loggedStatus(from, '/stop'), 200, 'the stop is logged as served');
      assert.ok(server.services.arbiter.stopCount > stops, 'the stop was carried out (the arbiter counts it)');
    });
  }

  it("behind the listener's 503, a wrong token's stop is refused as any (401 in the log) and runs nothing", async () => {
    const stops = server.services.arbiter.stopCount;
    const from = server.logs.length;
    const c = await connect(port);
    try {
      c.write(`${uploadHead(10, ADMIN)}0123456789${stopRequest('a-wrong-token')}`);
      assert.equal((await c.response()).status, 503);
      await c.closed;
    } finally {
      c.destroy();
    }
    assert.equal(await loggedStatus(from, '/stop'), 401);
    assert.equal(server.services.arbiter.stopCount, stops, 'nothing was stopped');
  });

  it("behind the listener's 503, sent after it on the same connection (the refused body's end with it): carried out", async () => {
    const stops = server.services.arbiter.stopCount;
    const from = server.logs.length;
    // allowHalfOpen: the server's FIN after its 503 does not end this client's side; it sends the rest, and the stop.
    const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      text += chunk;
    });
    socket.on('error', () => {});
    const closed = new Promise((done) => socket.once('close', done));
    try {
      await new Promise((done) => socket.once('connect', done));
      socket.write(`${uploadHead(10, ADMIN)}01234`);
      for (let i = 0; i < 250 && parseResponse(text) === undefined; i++) await sleep(20);
      assert.equal(parseResponse(text)?.status, 503, text);
      socket.end(`56789${stopRequest(ADMIN)}`);
      await closed;
      assert.deepEqual(statuses(text), [503]);
    } finally {
      socket.destroy();
    }
    assert.equal(await loggedStatus(from, '/stop'), 200);
    assert.ok(server.services.arbiter.stopCount > stops, 'the stop was carried out (the arbiter counts it)');
  });

  it("behind the app's 503 to an MCP POST beyond the per-client cap: carried out; only the 503 and the close come back", async () => {
    const stops = server.services.arbiter.stopCount;
    const from = server.logs.length;
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const c = await connect(port, CROWDED);
    try {
      c.write(
        `POST /mcp/mcp HTTP/1.1\r\nHost: ${authority}\r\nAuthorization: Bearer ${ADMIN}\r\n` +
          'Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n' +
          `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}${stopRequest(ADMIN)}`,
      );
      const refused = await c.response();
      assert.equal(refused.status, 503, refused.body);
      assert.match(JSON.parse(refused.body).detail, /max_connections_per_client/);
      await c.closed;
      assert.deepEqual(statuses(c.received()), [503]);
    } finally {
      c.destroy();
    }
    assert.equal(await loggedStatus(from, '/stop'), 200);
    assert.ok(server.services.arbiter.stopCount > stops, 'the stop was carried out (the arbiter counts it)');
  });
});
