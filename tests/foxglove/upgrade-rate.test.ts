/**
 * WebSocket upgrades are rate-limited per client address, before any WebSocket work, on the Foxglove face and the
 * jog socket alike (lib/net/upgrade-rate.ts): a client reconnecting in a loop gets 429 with Retry-After beyond a
 * burst, another address opens at once, a stop is served, and past the guess limit the stop-only connection still
 * opens within the rate (issue 37, round 2: Foxglove connection churn).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { UPGRADE_POLICY } from '../../lib/net/upgrade-rate.ts';
import { GUESS_POLICY } from '../../lib/auth/guesses.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { connect as rawConnect, portOf, type RawResponse } from '../support/raw-http.ts';
import { connect as foxgloveConnect } from './support.ts';

const TOKEN = 'upgrade-rate-admin-token-3e9b71';
/** Upgrades sent at once from one address: five times the burst. */
const CROWD = UPGRADE_POLICY.burst * 5;

/** `CROWD` upgrade requests written at once from `from` (all connected first), and their answers' heads. */
async function crowd(port: number, from: string, head: string): Promise<RawResponse[]> {
  const sockets = await Promise.all(Array.from({ length: CROWD }, () => rawConnect(port, from)));
  for (const c of sockets) c.write(head);
  try {
    return await Promise.all(sockets.map((c) => c.response(60_000)));
  } finally {
    for (const c of sockets) c.destroy();
  }
}

/** What the crowd got: every answer a 101 or a 429 with Retry-After; at least half refused (none were before). */
function assertLimited(answers: readonly RawResponse[], what: RegExp): void {
  const opened = answers.filter((a) => a.status === 101).length;
  const refused = answers.filter((a) => a.status === 429);
  assert.equal(opened + refused.length, CROWD, `101 or 429 only: ${answers.map((a) => a.status).join(',')}`);
  assert.ok(opened >= UPGRADE_POLICY.burst, `the burst opens (${opened})`);
  assert.ok(refused.length >= CROWD / 2, `beyond the burst, refused: ${refused.length} of ${CROWD} (none before)`);
  for (const r of refused) {
    assert.ok(Number(r.headers['retry-after']) >= 1, `Retry-After ${r.headers['retry-after']}`);
    assert.match((JSON.parse(r.body) as { detail: string }).detail, what);
    assert.equal(r.headers.upgrade, undefined, 'refused before any WebSocket work');
  }
}

describe('WebSocket upgrades per client address', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({
      // No refill of wrong tokens while the test runs (a loaded machine may take seconds over it).
      web: { token: TOKEN, limits: { token_guess_refill_s: 3600 } },
      foxglove: { enabled: true, port: 0, address: '127.0.0.1' },
    });
  });
  after(() => server.close());

  const stop = async (from: string) => {
    const c = await rawConnect(portOf(server.url), from);
    try {
      c.write(`POST /stop HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Length: 0\r\n\r\n`);
      return (await c.response(30_000)).status;
    } finally {
      c.destroy();
    }
  };

  it('Foxglove: beyond a burst from one address, 429 with Retry-After; another address opens at once', async () => {
    const url = new URL(server.foxglove?.url ?? '');
    const head =
      `GET /?token=${TOKEN} HTTP/1.1\r\nHost: 127.0.0.1:${url.port}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
      'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n' +
      'Sec-WebSocket-Protocol: foxglove.websocket.v1\r\n\r\n';
    assertLimited(await crowd(Number(url.port), '127.0.0.21', head), /more than 20 Foxglove upgrades at once/);
    const other = await foxgloveConnect(`${server.foxglove?.url}/?token=${TOKEN}`, {}, { localAddress: '127.0.0.22' });
    assert.ok(other.channels.length > 0, 'another address: a whole connection');
    other.close();
    assert.equal(await stop('127.0.0.23'), 200, 'a stop is served');
  });

  it('the jog socket: the same rule', async () => {
    const head =
      'GET /robot/jog HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n' +
      'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n' +
      `Authorization: Bearer ${TOKEN}\r\n\r\n`;
    assertLimited(await crowd(portOf(server.url), '127.0.0.24', head), /more than 20 jog WebSocket upgrades at once/);
    const c = await rawConnect(portOf(server.url), '127.0.0.25');
    c.write(head);
    assert.equal((await c.response(30_000)).status, 101, 'another address opens at once');
    c.destroy();
    assert.equal(await stop('127.0.0.26'), 200, 'a stop is served');
  });

  it('past the guess limit, the stop-only Foxglove connection still opens within the rate', async () => {
    const from = '127.0.0.27';
    const url = `${server.foxglove?.url}`;
    for (let i = 0; i < GUESS_POLICY.burst; i++)
      await assert.rejects(
        foxgloveConnect(`${url}/?token=wrong-${i}`, {}, { localAddress: from }),
        (e: { status?: number }) => e.status === 401,
      );
    const right = await foxgloveConnect(`${url}/?token=${TOKEN}`, {}, { localAddress: from });
    assert.deepEqual(
      right.services.map((s) => s.name),
      ['/armgate/stop', '/armgate/pause'],
    );
    right.close();
  });
});
