/**
 * Many requests offering an upgrade not taken (h2c), each pipelined behind a request still being answered, on one
 * keep-alive connection, over a real socket (lib/server/upgrades.ts). Every answer comes, in order; and the connection
 * costs no more for each offer: an error listener was added to its socket per offer (Node's MaxListenersExceededWarning
 * past 10, and a listener kept for every offer as long as the connection lived).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connect, portOf } from '../support/raw-http.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const TOKEN = 'upgrade-offers-many-token-51c2';

describe('upgrade offers pipelined one after another on one connection', () => {
  let server: TestServer;
  let head: string;
  before(async () => {
    server = await startTestServer({ web: { token: TOKEN } });
    head = `Host: 127.0.0.1:${portOf(server.url)}\r\nAuthorization: Bearer ${TOKEN}\r\n`;
  });
  after(() => server.close());

  it('200 offers, each behind a read: 400 answers in order, and no listener piles up on the socket', async () => {
    const warnings: Error[] = [];
    const warned = (w: Error) => warnings.push(w);
    process.on('warning', warned);
    const c = await connect(portOf(server.url));
    try {
      const h2c = 'Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n';
      const read = `GET /robot/joint_states HTTP/1.1\r\n${head}\r\n`;
      const offer = `GET /robot/override HTTP/1.1\r\n${head}${h2c}\r\n`;
      const n = 200;
      c.write((read + offer).repeat(n));
      for (let i = 0; i < 2 * n; i++) {
        const answer = await c.response(30_000);
        assert.equal(answer.status, 200, answer.body);
        assert.equal(
          'percent' in JSON.parse(answer.body),
          i % 2 === 1,
          `answer ${i} is the ${i % 2 ? 'offer' : 'read'}'s`,
        );
      }
      // A warning is emitted on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      c.destroy();
      process.off('warning', warned);
    }
    const piled = warnings.filter((w) => w.name === 'MaxListenersExceededWarning');
    assert.deepEqual(
      piled.map((w) => w.message),
      [],
      'no listener was added per offer',
    );
  });
});
