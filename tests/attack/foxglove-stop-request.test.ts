/**
 * The Foxglove stop service called with a request armgate cannot read, from outside: an empty CDR payload (a writer
 * that sends nothing for an empty message), a CDR header alone, JSON `null`, `[]` or nothing, an encoding armgate does
 * not speak. A stop takes no input: it is carried out whatever its request holds (stop wins), as the MCP stop tool is.
 * Each was answered serviceCallFailure and the move went on.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../support/server.ts';
import { type Connected, connect } from '../foxglove/support.ts';

const TOKEN = 'foxglove-stop-token-0a1b2c';
const WORK = [0, 0, 0, -1.57, 0, 1.57, 0];

const requests: readonly (readonly [string, string, Uint8Array])[] = [
  ['an empty CDR payload', 'cdr', new Uint8Array(0)],
  ['a CDR header alone', 'cdr', new Uint8Array([0, 1, 0, 0])],
  ['JSON null', 'json', new TextEncoder().encode('null')],
  ['JSON []', 'json', new TextEncoder().encode('[]')],
  ['no JSON at all', 'json', new Uint8Array(0)],
  ['the ros1 encoding', 'ros1', new Uint8Array(0)],
];

describe('the Foxglove stop service with a request it cannot read', () => {
  let server: TestServer;
  let client: Connected;
  const json = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };

  before(async () => {
    server = await startTestServer({
      web: { token: TOKEN },
      foxglove: { enabled: true, port: 0, address: '127.0.0.1' },
    });
    client = await connect(`${server.foxglove?.url}/?token=${TOKEN}`);
  });
  after(async () => {
    client?.ws.terminate();
    await server?.close();
  });

  for (const [what, encoding, data] of requests) {
    it(`stops a move when /armgate/stop is called with ${what}`, async () => {
      const move = fetch(`${server.url}/robot/move/joints`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ joints: WORK.map((q, j) => (j === 0 ? q + 0.8 : q)), speed: 0.1 }),
      });
      for (let i = 0; ; i++) {
        const states = (await (await fetch(`${server.url}/robot/joint_states`, { headers: json })).json()) as {
          velocity: number[];
        };
        if (Math.max(...states.velocity.map(Math.abs)) > 0.01) break;
        assert.ok(i < 2000, 'the move started');
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      const serviceId = client.service('/armgate/stop')?.id ?? 0;
      client.client.sendServiceCallRequest({ serviceId, callId: 1, encoding, data });
      const moved = (await (await move).json()) as { success: boolean; message: string };
      assert.equal(moved.success, false, `the move was stopped: ${moved.message}`);
      assert.match(moved.message, /stop/i);
      const back = await fetch(`${server.url}/robot/move/joints`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ joints: WORK, speed: 1 }),
      });
      assert.equal(back.status, 200, 'back to work');
      await back.text();
    });
  }
});
