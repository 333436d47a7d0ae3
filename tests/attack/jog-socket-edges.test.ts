/**
 * The HTTP edges of the jog WebSocket's path, through the live server: an upgrade with a query the route does not
 * define is a 422 with the query field's path, as a REST route answers it (never a handshake, never a 500); a GET
 * without the upgrade is 426 Upgrade Required naming the WebSocket (RFC 9110 15.5.22); another method there is 405
 * whose Allow lists GET (the upgrade) beside POST (the REST jog).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { portOf, rawRequest } from '../support/raw-http.ts';
import type { TestServer } from '../support/server.ts';
import { startSteppedServer } from '../support/stepped.ts';

const ADMIN = 'admin-token-4b3c2d1e0f9a';

let server: TestServer;

/** A WebSocket upgrade of `target` with the admin token, as raw bytes (the answer when it is refused). */
const upgrade = (target: string) =>
  rawRequest(
    portOf(server.url),
    `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1:${portOf(server.url)}\r\nAuthorization: Bearer ${ADMIN}\r\n` +
      'Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n' +
      'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
  );

const auth = { authorization: `Bearer ${ADMIN}` };

describe('the jog WebSocket path, at its HTTP edges', () => {
  before(async () => {
    ({ server } = await startSteppedServer({ web: { token: ADMIN } }));
  });
  after(async () => {
    await server.close();
  });

  it('opens with no query (101)', async () => {
    const answer = await upgrade('/robot/jog');
    assert.equal(answer.status, 101);
  });

  it('refuses an upgrade with an unknown query parameter 422, as the REST jog refuses one', async () => {
    const answer = await upgrade('/robot/jog?token=abc');
    assert.equal(answer.status, 422);
    assert.match(answer.headers['content-type'] ?? '', /application\/json/);
    const body = JSON.parse(answer.body) as { detail: { loc: unknown[]; msg: string; type: string }[] };
    assert.deepEqual(body.detail[0]?.loc, ['query', 'token']);
    assert.equal(body.detail[0]?.type, 'extra_forbidden');
    const rest = await fetch(`${server.url}/robot/jog?token=abc`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ joints: [0, 0, 0, 0, 0, 0, 0] }),
    });
    assert.equal(rest.status, 422);
    assert.deepEqual(body, await rest.json(), 'the same body as the REST route');
  });

  it('refuses an empty parameter or a repeated one alike, and goes on serving', async () => {
    for (const target of ['/robot/jog?x', '/robot/jog?a=1&a=2', '/robot/jog?%ZZ=%00']) {
      const answer = await upgrade(target);
      assert.equal(answer.status, 422, target);
      assert.equal((JSON.parse(answer.body) as { detail: { loc: unknown[] }[] }).detail[0]?.loc[0], 'query');
    }
    const read = await fetch(`${server.url}/robot/joint_states`, { headers: auth });
    assert.equal(read.status, 200);
  });

  it('answers a GET without the upgrade 426 Upgrade Required, saying to open a WebSocket', async () => {
    const answer = await fetch(`${server.url}/robot/jog`, { headers: auth });
    assert.equal(answer.status, 426);
    assert.equal(answer.headers.get('upgrade'), 'websocket');
    const body = (await answer.json()) as { detail: string };
    assert.match(body.detail, /WebSocket/);
    assert.match(body.detail, /POST \/robot\/jog/, 'it names the REST jog too');
  });

  it('answers OPTIONS without an Origin, and another method, 405 with GET in Allow beside POST', async () => {
    for (const method of ['OPTIONS', 'DELETE', 'PUT']) {
      const answer = await fetch(`${server.url}/robot/jog`, { method, headers: auth });
      assert.equal(answer.status, 405, method);
      const allow = (answer.headers.get('allow') ?? '').split(/,\s*/).sort();
      assert.deepEqual(allow, ['GET', 'POST'], method);
      await answer.body?.cancel();
    }
  });

  it('keeps a REST-only path to its own methods (no GET in Allow)', async () => {
    const answer = await fetch(`${server.url}/stop`, { method: 'DELETE', headers: auth });
    assert.equal(answer.status, 405);
    assert.equal(answer.headers.get('allow'), 'POST');
  });
});
