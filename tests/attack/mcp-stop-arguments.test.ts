/**
 * The MCP stop tool called with arguments that are not an object, as a careless client (or a model writing its
 * arguments as a JSON string) sends them: `stop` and `pause` act whatever they are sent with (docs/mcp.md), so the arm
 * stops. They were answered -32602 "arguments must be an object" and the motion went on.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openMcpSession } from '../support/mcp.ts';
import { createTestApp, type TestApp } from '../support/server.ts';

const MCP = '/mcp/mcp';
const JSON_ONLY = { 'content-type': 'application/json', accept: 'application/json' };
const WORK = [0, 0, 0, -1.57, 0, 1.57, 0];

interface Answer {
  error?: { code: number; message: string };
  result?: { isError?: boolean; structuredContent?: Record<string, unknown> };
}

describe('an MCP stop whose arguments are not an object', () => {
  let app: TestApp;
  let session = '';
  const rpc = async (body: unknown): Promise<Answer> =>
    (await (
      await app.request(MCP, {
        method: 'POST',
        headers: { ...JSON_ONLY, 'mcp-session-id': session },
        body: JSON.stringify(body),
      })
    ).json()) as Answer;
  const speed = async () =>
    Math.max(
      ...((await (await app.request('/robot/joint_states')).json()) as { velocity: number[] }).velocity.map(Math.abs),
    );

  before(async () => {
    app = await createTestApp();
    session = (await openMcpSession(app, { name: 'careless' })).id;
  });
  after(async () => {
    await app?.close();
  });

  for (const args of ['{}', 5, [1]]) {
    it(`stops a move when stop is called with arguments ${JSON.stringify(args)}`, async () => {
      const move = app.request('/robot/move/joints', {
        method: 'POST',
        headers: JSON_ONLY,
        body: JSON.stringify({ joints: WORK.map((q, j) => (j === 0 ? q + 0.8 : q)), speed: 0.1 }),
      });
      for (let i = 0; (await speed()) < 0.01; i++) {
        assert.ok(i < 2000, 'the move started');
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      const stopped = await rpc({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'stop', arguments: args },
      });
      assert.equal(stopped.result?.structuredContent?.status, 'stopped', JSON.stringify(stopped));
      const moved = (await (await move).json()) as { success: boolean; message: string };
      assert.equal(moved.success, false, `the move did not reach its goal: ${moved.message}`);
      const back = await app.request('/robot/move/joints', {
        method: 'POST',
        headers: JSON_ONLY,
        body: JSON.stringify({ joints: WORK, speed: 1 }),
      });
      assert.equal(back.status, 200, 'back to work');
      await back.text();
    });
  }

  it('still refuses another tool whose arguments are not an object (-32602, nothing runs)', async () => {
    const answer = await rpc({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'move_to_named_position', arguments: '{"name":"home"}' },
    });
    assert.equal(answer.error?.code, -32602);
    assert.match(answer.error?.message ?? '', /arguments must be an object \(got string\)/);
  });
});
