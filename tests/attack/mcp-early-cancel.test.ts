/**
 * An MCP cancellation that reaches the server before the call it names, from outside over a socket: the call's body is
 * still arriving (or the call waits for its turn) while the cancellation, run at once, finds nothing in flight. The
 * call must not run when it comes: the arm moved after its client had cancelled it. A stop is carried out all the same.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openMcpSession } from '../support/mcp.ts';
import { connect, portOf } from '../support/raw-http.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const TOKEN = 'early-cancel-token-5e1d9a';
const WORK = [0, 0, 0, -1.57, 0, 1.57, 0];

interface JointStates {
  position: number[];
}

describe('an MCP cancellation that comes before its call', () => {
  let server: TestServer;
  let session = '';
  const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', accept: 'application/json' };
  const rpc = async (body: unknown) => {
    const answer = await fetch(`${server.url}/mcp/mcp`, {
      method: 'POST',
      headers: { ...headers, 'mcp-session-id': session },
      body: JSON.stringify(body),
    });
    return { status: answer.status, text: await answer.text() };
  };
  const cancel = (requestId: number) =>
    rpc({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, reason: 'the user cancelled' } });
  const positions = async () =>
    ((await (await fetch(`${server.url}/robot/joint_states`, { headers })).json()) as JointStates).position;
  /** Sends tools/call `id` with its body cut after 20 bytes; `rest()` sends the rest and resolves with the answer. */
  const callInTwo = async (id: number, name: string, args: Record<string, unknown>) => {
    const body = JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
    const connection = await connect(portOf(server.url));
    connection.write(
      `POST /mcp/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKEN}\r\n` +
        `Content-Type: application/json\r\nAccept: application/json\r\nMcp-Session-Id: ${session}\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 20)}`,
    );
    return async () => {
      connection.write(body.slice(20));
      const answer = await connection.response(60_000);
      connection.destroy();
      return JSON.parse(answer.body) as {
        error?: { code: number };
        result?: { isError?: boolean; structuredContent?: Record<string, unknown> };
      };
    };
  };

  before(async () => {
    server = await startTestServer({ web: { token: TOKEN }, sim: { time_scale: 5 } });
    session = (await openMcpSession(server.url, { name: 'early', headers })).id;
  });
  after(async () => {
    await server?.close();
  });

  it('answers a motion call cancelled before its body ended as cancelled, and the arm does not move', async () => {
    const start = await positions();
    const rest = await callInTwo(7, 'move_to_joints', { joints: WORK.map((q, j) => (j === 0 ? q + 0.5 : q)) });
    assert.equal((await cancel(7)).status, 202, 'the cancellation is taken');
    const answer = await rest();
    assert.equal(answer.error?.code, -32800, `cancelled, not run: ${JSON.stringify(answer)}`);
    const now = await positions();
    assert.ok(Math.abs((now[0] ?? 0) - (start[0] ?? 0)) < 1e-6, `J1 did not move (${start[0]} -> ${now[0]})`);
  });

  it('carries out a stop whose id was cancelled before it came (stop wins)', async () => {
    const rest = await callInTwo(8, 'stop', {});
    assert.equal((await cancel(8)).status, 202);
    const answer = await rest();
    assert.equal(answer.result?.structuredContent?.status, 'stopped', JSON.stringify(answer));
  });

  it('answers a cancelled id only once: the same cancellation named a request that had already ended', async () => {
    const first = await rpc({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'get_joint_states' } });
    assert.equal(first.status, 200);
    assert.equal((await cancel(9)).status, 202, 'a late cancellation (the answer crossed it) is taken');
    const again = await rpc({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'get_joint_states' } });
    assert.equal(JSON.parse(again.text).error?.code, -32800, 'a request reusing the id is the one cancelled');
    const third = await rpc({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'get_joint_states' } });
    assert.ok(JSON.parse(third.text).result, 'then the id is served again');
    // The same through the SDK's transport (a batch is never handed straight to the Server).
    assert.equal((await cancel(10)).status, 202);
    const batch = await rpc([{ jsonrpc: '2.0', id: 10, method: 'tools/call', params: { name: 'get_joint_states' } }]);
    assert.equal(JSON.parse(batch.text)[0]?.error?.code, -32800, batch.text);
  });
});
