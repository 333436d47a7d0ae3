/**
 * A client that goes away mid-body (issue 26 item 3), over a real socket: the request is logged once at info level
 * with status 499 (client closed request), never as an unhandled error or a 500, and nothing moves.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sleep, waitFor } from '../support/live.ts';
import { connect, portOf } from '../support/raw-http.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

describe('a client that drops mid-body', () => {
  let server: TestServer;
  let port: number;

  before(async () => {
    server = await startTestServer();
    port = portOf(server.url);
  });
  after(() => server.close());

  const host = () => `Host: 127.0.0.1:${port}\r\n`;
  const cases: [string, () => string][] = [
    [
      'a JSON body (POST /trajectory/send)',
      () =>
        `POST /trajectory/send HTTP/1.1\r\n${host()}Content-Type: application/json\r\nContent-Length: 400\r\n\r\n` +
        '{"points": [{"positions": [0.5, 0, 0, -1.57, 0, 1.57, 0], "time_from_start": 2}',
    ],
    [
      'an upload (POST /trajectory/send_csv)',
      () =>
        `POST /trajectory/send_csv HTTP/1.1\r\n${host()}Content-Type: multipart/form-data; boundary=XX\r\n` +
        'Content-Length: 4000\r\n\r\n--XX\r\nContent-Disposition: form-data; name="file"; filename="p.csv"\r\n\r\n' +
        'time_from_start,j1,j2,j3,j4,j5,j6,j7\r\n2,0.5,0,0,-1.57,0,1.57,0\r\n',
    ],
    [
      'an MCP message (POST /mcp/mcp)',
      () =>
        `POST /mcp/mcp HTTP/1.1\r\n${host()}Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n` +
        'Content-Length: 400\r\n\r\n{"jsonrpc": "2.0", "id": 1, "method": "initialize"',
    ],
  ];

  for (const [what, request] of cases) {
    it(`${what}: one info line with status 499, no error line, the arm still`, async () => {
      const before = await (await fetch(`${server.url}/robot/joint_states`)).json();
      const from = server.logs.length;
      const c = await connect(port);
      c.write(request());
      await sleep(150);
      c.destroy();
      const lines = await waitFor(
        'the request line',
        async () => server.logs.slice(from),
        (ls) => ls.some((l) => l.msg === 'request'),
        5000,
      );
      await sleep(100);
      const mine = server.logs.slice(from).filter((l) => l.path !== '/robot/joint_states');
      assert.deepEqual(
        mine.filter((l) => l.level !== 'info'),
        [],
        'no error line for a client that went away',
      );
      const requestLines = mine.filter((l) => l.msg === 'request');
      assert.equal(requestLines.length, 1, JSON.stringify(lines));
      assert.equal(requestLines[0]?.status, 499, JSON.stringify(requestLines));
      assert.deepEqual((await (await fetch(`${server.url}/robot/joint_states`)).json()).position, before.position);
    });

    it(`${what}, cut short by the client closing its side (FIN): one info line with status 499 and nothing written back`, async () => {
      const from = server.logs.length;
      const c = await connect(port);
      c.write(request());
      await sleep(150);
      c.socket.end();
      await waitFor(
        'the request line',
        async () => server.logs.slice(from),
        (ls) => ls.some((l) => l.msg === 'request'),
        5000,
      );
      await Promise.race([c.closed, sleep(2000)]);
      await sleep(100);
      const mine = server.logs.slice(from).filter((l) => l.path !== '/robot/joint_states');
      assert.deepEqual(
        mine.map((l) => [l.msg, l.status]),
        [['request', 499]],
        'one line: the request, 499 (no parser 400 after it)',
      );
      assert.equal(c.received(), '', 'nothing is written back to a client that closed its side');
      c.destroy();
    });
  }
});
