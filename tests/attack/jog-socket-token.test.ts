/**
 * The jog WebSocket's upgrade with a token in the subprotocol `armgate.token.<base64url>` that no settings token can
 * be: characters a header cannot carry (beyond Latin-1, U+FFFD of invalid UTF-8, control characters). Each is a wrong
 * token (401), and the server goes on serving: such an upgrade, without any valid token, ended the process.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import type { TestServer } from '../support/server.ts';
import { startSteppedServer } from '../support/stepped.ts';

const ADMIN = 'admin-token-9c8b7a6f5e4d';
const OPERATOR = 'opérateur-token-1f2e3d4c';

let server: TestServer;

const asProtocol = (token: Buffer | string) => `armgate.token.${Buffer.from(token).toString('base64url')}`;

/** The status of an upgrade offering `protocols` (101 when it opened). */
function upgrade(protocols: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${server.url.replace('http', 'ws')}/robot/jog`, protocols);
    ws.on('open', () => {
      ws.close();
      resolve(101);
    });
    ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    ws.on('error', reject);
  });
}

describe('the jog WebSocket, a token in the subprotocol that no header could carry', () => {
  before(async () => {
    ({ server } = await startSteppedServer({
      web: { token: ADMIN, tokens: [{ name: 'operator', token: OPERATOR, role: 'operate' }] },
    }));
  });
  after(async () => {
    await server.close();
  });

  for (const [what, token] of [
    ['a character beyond Latin-1', `\u{1F916}${ADMIN}`],
    ['invalid UTF-8 (read as U+FFFD)', Buffer.concat([Buffer.from([0xc3, 0x28]), Buffer.from(ADMIN)])],
    ['a line break', `${ADMIN}\r\nX-Injected: 1`],
    ['a NUL', `${ADMIN}\u0000`],
  ] as const) {
    it(`${what}: 401, and the server goes on serving`, async () => {
      assert.equal(await upgrade(['armgate.jog.v1', asProtocol(token)]), 401);
      const read = await fetch(`${server.url}/robot/joint_states`, { headers: { authorization: `Bearer ${ADMIN}` } });
      assert.equal(read.status, 200);
    });
  }

  it('a settings token with a character beyond ASCII opens the socket when offered as the subprotocol', async () => {
    assert.equal(await upgrade(['armgate.jog.v1', asProtocol(OPERATOR)]), 101);
  });
});
