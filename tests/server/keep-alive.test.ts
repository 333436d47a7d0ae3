/**
 * The idle keep-alive connection, over a real socket: every answer advertises `Keep-Alive: timeout=5`, and the server
 * closes a connection idle since its last answer later than that (Node's own margin, 1 s: docs/api.md), never before,
 * so that a client reusing the connection within the advertised time never meets a close it was not told of. The
 * margin is the safe direction: a client (undici) reuses a connection up to the advertised time less a threshold.
 * Timed on the wall clock from below only (load delays a close, never hastens it); the upper bound is loose.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { KEEP_ALIVE_TIMEOUT_MS } from '../../lib/server/listener.ts';
import { connect, portOf } from '../support/raw-http.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

describe('an idle keep-alive connection', () => {
  let server: TestServer;
  let port: number;
  before(async () => {
    server = await startTestServer();
    port = portOf(server.url);
  });
  after(() => server.close());

  it('is closed after the Keep-Alive timeout its answers advertise, not before', async () => {
    const c = await connect(port);
    try {
      c.write(`GET /robot/joint_states HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
      const res = await c.response();
      const answeredAt = performance.now();
      assert.equal(res.status, 200, res.body);
      assert.equal(res.headers.connection, 'keep-alive');
      const advertised = Number(/^timeout=(\d+)$/.exec(res.headers['keep-alive'] ?? '')?.[1]);
      assert.equal(advertised * 1000, KEEP_ALIVE_TIMEOUT_MS, `Keep-Alive: ${res.headers['keep-alive']}`);
      let timer: number | NodeJS.Timeout | undefined;
      const gone = await Promise.race([
        c.closed.then(() => performance.now() - answeredAt),
        new Promise<undefined>((resolve) => {
          timer = setTimeout(resolve, 30_000);
        }),
      ]);
      clearTimeout(timer);
      assert.ok(gone !== undefined, 'the idle connection is closed');
      assert.ok(gone > advertised * 1000, `closed ${Math.round(gone)} ms after the answer, advertised ${advertised} s`);
    } finally {
      c.destroy();
    }
  });
});
