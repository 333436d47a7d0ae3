/**
 * A speed override offering an upgrade not taken (h2c, as curl --http2 offers on every request), pipelined behind a
 * request still being answered (a move), over a real socket. The listener carries out a stop offered so at once
 * (lib/server/upgrades.ts), without its body: set_override is a stop's kind of route (lowering it never waits) but
 * takes a body, and was carried out without it: its client read a 422 'a JSON body is needed' and the lowering it
 * sent was never made. It is served as it came, in its turn.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connect, portOf } from '../support/raw-http.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const TOKEN = 'override-offer-token-4b7e21';

describe('a speed override offering an upgrade, pipelined behind a move', () => {
  let server: TestServer;
  let port: number;
  let head: string;
  before(async () => {
    server = await startTestServer({ web: { token: TOKEN } });
    port = portOf(server.url);
    head = `Host: 127.0.0.1:${port}\r\nAuthorization: Bearer ${TOKEN}\r\n`;
  });
  after(() => server.close());

  const h2c = 'Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n';
  const override = async () =>
    (
      (await (
        await fetch(`${server.url}/robot/override`, { headers: { authorization: `Bearer ${TOKEN}` } })
      ).json()) as {
        percent: number;
      }
    ).percent;

  it('is served with its body, in its turn: the lowering is made and answered 200', async () => {
    assert.equal(await override(), 100);
    const c = await connect(port);
    try {
      const move = JSON.stringify({ joints: [0, 0.5, 0, -1.3, 0, 1.2, 0], speed: 0.3 });
      const body = JSON.stringify({ percent: 30 });
      c.write(
        `POST /robot/move/joints HTTP/1.1\r\n${head}Content-Type: application/json\r\nContent-Length: ${move.length}\r\n\r\n${move}` +
          `PUT /robot/override HTTP/1.1\r\n${head}${h2c}Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      );
      const moved = await c.response(30_000);
      assert.equal(moved.status, 200, moved.body);
      const lowered = await c.response(10_000);
      assert.equal(lowered.status, 200, lowered.body);
      assert.equal(JSON.parse(lowered.body).percent, 30, lowered.body);
    } finally {
      c.destroy();
    }
    assert.equal(await override(), 30, 'the override was lowered');
  });
});
