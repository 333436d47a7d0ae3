/**
 * What a request line is, over a real socket: every spelling of POST /stop a client can send (a query, a fragment,
 * absolute-form, a trailing slash, percent-encoding, a dot segment, case, other methods) is classified by the route
 * table from its method and path, once, as the listener reads its head: a stop is never refused by a cap and is served
 * as a stop; anything else on a connection beyond a cap is refused 503 before the app sees it. The app routes what the
 * listener let through as it always did (a path the table does not hold exactly goes to the router: a trailing slash or
 * a dot segment still reaches the stop there, as before, though the caps do not count it a stop), and its log line
 * names the path without the query.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connect, portOf, type RawConnection } from '../support/raw-http.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const TOKEN = 'stop-spellings-token-5b0e41';
/** The stop handler's answer when nothing was moving. */
const STOPPED = /hold point published/;

/** The status line's code and what came after the head, once the head is in (a HEAD answer has no body to wait for). */
async function answerTo(c: RawConnection, method: string): Promise<{ status: number; body: string }> {
  if (method !== 'HEAD') return c.response();
  for (let i = 0; i < 200 && !c.received().includes('\r\n\r\n'); i++) await new Promise((r) => setTimeout(r, 10));
  const text = c.received();
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), body: text.slice(text.indexOf('\r\n\r\n') + 4) };
}

describe('every spelling of POST /stop, over a real socket, at and beyond a cap', () => {
  let server: TestServer;
  let port: number;
  let authority: string;
  /** Connections from 127.0.0.8 that hold the address's cap (4), each serving a request whose body never comes. */
  const busy: RawConnection[] = [];

  before(async () => {
    server = await startTestServer({
      web: { token: TOKEN, limits: { max_connections_per_client: 4, body_grace_s: 60 } },
    });
    port = portOf(server.url);
    authority = `127.0.0.1:${port}`;
    for (let i = 0; i < 4; i++) {
      const c = await connect(port, '127.0.0.8');
      c.write(
        `POST /robot/move/joints HTTP/1.1\r\nHost: ${authority}\r\nAuthorization: Bearer ${TOKEN}\r\n` +
          'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{',
      );
      busy.push(c);
    }
  });
  after(async () => {
    for (const c of busy) c.destroy();
    await server.close();
  });

  const openConnections = () =>
    new Promise<number>((resolve, reject) =>
      server.server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
    );

  /** Sends `method target` on a new connection from `from`; its answer and the app's log line for it, if any. */
  async function send(method: string, target: string, from: string, host = authority) {
    const logged = server.logs.length;
    const c = await connect(port, from);
    try {
      c.write(`${method} ${target} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`);
      const answer = await answerTo(c, method);
      const line = server.logs.slice(logged).find((l) => l.msg === 'request');
      return { ...answer, path: line?.path };
    } finally {
      c.destroy();
      // Gone on the server's side too before the next is sent: an idle connection of the address would be shed to make
      // room for the next rather than that one being beyond the cap.
      for (let i = 0; i < 400 && (await openConnections()) > busy.length; i++)
        await new Promise((r) => setTimeout(r, 5));
    }
  }

  // [method, target, status at no cap (200: the stop's answer), status beyond a cap (200: a stop of the table's), the
  // path the log line names]
  const spellings = (authority: string): [string, string, number, number, string][] => [
    ['POST', '/stop', 200, 200, '/stop'],
    ['POST', '/stop?reason=test', 200, 200, '/stop'],
    ['POST', '/stop#fragment', 200, 200, '/stop'],
    ['POST', `http://${authority}/stop`, 200, 200, '/stop'],
    ['POST', `HTTP://${authority}/stop?x=1`, 200, 200, '/stop'],
    ['POST', '/robot/stop', 200, 200, '/robot/stop'],
    ['POST', '/stop/', 200, 200, '/stop'],
    ['POST', '/x/../stop', 200, 200, '/stop'],
    ['POST', '/robot/stop/', 200, 200, '/robot/stop'],
    ['POST', '/robot/./stop?x=1', 200, 200, '/robot/stop'],
    ['POST', '/%73top', 404, 503, '/%73top'],
    ['POST', '/%73top?x=1', 404, 503, '/%73top'],
    ['POST', '/STOP', 404, 503, '/STOP'],
    ['POST', '//stop', 404, 503, '//stop'],
    ['GET', '/stop', 405, 503, '/stop'],
    ['PUT', '/stop', 405, 503, '/stop'],
    ['HEAD', '/stop', 405, 503, '/stop'],
  ];

  it('at no cap: each is answered as its route is, a stop by the stop, and logged at its path without the query', async () => {
    for (const [method, target, status, , path] of spellings(authority)) {
      const res = await send(method, target, '127.0.0.9');
      assert.equal(res.status, status, `${method} ${target}: ${res.body.slice(0, 200)}`);
      if (status === 200) assert.match(res.body, STOPPED, `${method} ${target} is answered by the stop`);
      assert.equal(res.path, path, `${method} ${target}'s log line`);
    }
  });

  it('beyond the per-client cap: the stops the table holds are served, every other spelling is refused 503', async () => {
    for (const [method, target, , beyond] of spellings(authority)) {
      const res = await send(method, target, '127.0.0.8');
      assert.equal(res.status, beyond, `${method} ${target} beyond the cap: ${res.body.slice(0, 200)}`);
      if (beyond === 200) assert.match(res.body, STOPPED, `${method} ${target} is a stop: no cap refuses it`);
      else if (method !== 'HEAD') assert.match(res.body, /max_connections_per_client/);
    }
  });

  it('the route is found from the request line alone: a Host carrying a path is refused, logged at the target', async () => {
    for (const host of [`${authority}/stop?`, `${authority}/stop#`]) {
      const res = await send('GET', '/robot/joint_states', '127.0.0.9', host);
      assert.equal(res.status, 403, `Host ${host}: ${res.body.slice(0, 200)}`);
      assert.match(res.body, /is not served here/);
      assert.equal(res.path, '/robot/joint_states', `Host ${host}: the request's path is its target's`);
    }
  });
});
