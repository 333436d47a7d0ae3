/**
 * The bounds of an MCP POST, through the live server: its size (twice REST's largest JSON body, so that every input
 * REST takes still fits in a call), the number of messages of a batch (refused before any work per message), and the
 * width of the objects the SDK's schemas copy key by key (a message, its params, their arguments and _meta).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MAX_JSON_BODY_BYTES } from '../../lib/body/limits.ts';
import { MAX_MCP_BATCH, MAX_MESSAGE_KEYS } from '../../lib/mcp/batch.ts';
import { MAX_MCP_BODY_BYTES } from '../../lib/mcp/server.ts';
import { initializeRequest, openMcpSession, type RawMcpSession } from '../support/mcp.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const WORK = [0, 0, 0, -1.57, 0, 1.57, 0];
const CALL = (id: number, name: string, args: unknown) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});

interface Answer {
  readonly id?: unknown;
  readonly error?: { code: number; message: string };
  readonly result?: { isError?: boolean; content: { text: string }[] };
}

/** An object of `count` keys k0, k1, ... */
const keys = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, k) => [`k${k}`, k]));

describe('the bounds of an MCP POST', () => {
  let server: TestServer;
  let session: RawMcpSession;
  const post = (body: string, headers: Record<string, string> = session.headers) =>
    fetch(`${server.url}/mcp/mcp`, { method: 'POST', headers, body });

  before(async () => {
    server = await startTestServer();
    session = await openMcpSession(server.url, { name: 'bounds' });
  });
  after(async () => {
    await server?.close();
  });

  it('refuses a body over twice the REST JSON limit (413) and still carries the largest REST body in a call', async () => {
    assert.equal(MAX_MCP_BODY_BYTES, 2 * MAX_JSON_BODY_BYTES);
    const over = await post(JSON.stringify({ ...initializeRequest('big'), pad: ' '.repeat(MAX_MCP_BODY_BYTES) }), {
      'content-type': 'application/json',
      accept: 'application/json',
    });
    assert.equal(over.status, 413);
    assert.deepEqual(((await over.json()) as Answer).error, {
      code: -32000,
      message: `Payload Too Large: at most ${MAX_MCP_BODY_BYTES} bytes`,
    });
    // A trajectory body as large as REST takes, its last point beyond the joint limits: both faces read it whole and
    // refuse that point (nothing moves); neither refuses it for its size.
    const point = (i: number) => ({ positions: WORK.map((q) => q + 1e-9 * i), time_from_start: i * 0.01 });
    const points: ReturnType<typeof point>[] = [];
    for (let i = 1, size = 20; size < MAX_JSON_BODY_BYTES - 300; i++) {
      points.push(point(i));
      size += JSON.stringify(point(i)).length + 1;
    }
    const count = points.length;
    points.push({ positions: [9, 0, 0, -1.57, 0, 1.57, 0], time_from_start: (count + 1) * 0.01 });
    const args = { points };
    assert.ok(JSON.stringify(args).length <= MAX_JSON_BODY_BYTES);
    const rest = await fetch(`${server.url}/trajectory/send`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(args),
    });
    const restText = await rest.text();
    assert.equal(rest.status, 422, restText);
    assert.match(restText, new RegExp(`"points",${points.length - 1},`), 'REST names the last point');
    // Spelled with a space after each comma and colon: the same input, 1.2 times the bytes.
    const spaced = JSON.stringify(CALL(7, 'send_trajectory', args)).replace(/([,:])/g, '$1 ');
    assert.ok(spaced.length > MAX_JSON_BODY_BYTES);
    const mcp = (await (await post(spaced)).json()) as Answer;
    assert.equal(mcp.result?.isError, true, JSON.stringify(mcp).slice(0, 300));
    assert.match(mcp.result?.content[0]?.text ?? '', new RegExp(`points\\.${points.length - 1}`), 'MCP names it too');
  });

  it(`refuses a batch of more than ${MAX_MCP_BATCH} messages before looking at any of them (400, -32600)`, async () => {
    const calls = Array.from({ length: MAX_MCP_BATCH + 1 }, (_, i) => CALL(100 + i, 'get_joint_states', {}));
    const batchRefusal = { code: -32600, message: `Invalid Request: Batch must not exceed ${MAX_MCP_BATCH} messages` };
    // Its first call's arguments are not an object (refused -32602 when it is looked at): the count comes first.
    const bad = await post(JSON.stringify([CALL(99, 'get_tcp_pose', 'x'), ...calls.slice(1)]));
    assert.equal(bad.status, 400);
    assert.deepEqual(((await bad.json()) as Answer).error, batchRefusal);
    // Without a session too: the count comes before the session is looked for.
    const sessionless = await post(JSON.stringify(calls), {
      'content-type': 'application/json',
      accept: 'application/json',
    });
    assert.equal(sessionless.status, 400);
    assert.deepEqual(((await sessionless.json()) as Answer).error, batchRefusal);
    // A batch as large as the body limit allows: refused the same.
    const many: string[] = [];
    for (let i = 0, size = 2; size < MAX_MCP_BODY_BYTES - 200; i++) {
      const call = JSON.stringify(CALL(1000 + i, 'get_joint_states', {}));
      many.push(call);
      size += call.length + 1;
    }
    const largest = await post(`[${many.join(',')}]`);
    assert.equal(largest.status, 400);
    assert.deepEqual(((await largest.json()) as Answer).error, batchRefusal);
    // The largest batch taken still runs every call.
    const taken = await post(JSON.stringify(calls.slice(1)));
    assert.equal(taken.status, 200);
    const answers = (await taken.json()) as Answer[];
    assert.equal(answers.length, MAX_MCP_BATCH);
    assert.ok(answers.every((a) => a.result && !a.result.isError));
  });

  it(`refuses an object of more than ${MAX_MESSAGE_KEYS} keys where the SDK copies every key, naming it`, async () => {
    const answerOf = async (body: unknown) => {
      const res = await post(JSON.stringify(body));
      return { status: res.status, answer: (await res.json()) as Answer };
    };
    const widest = await answerOf(CALL(1, 'get_joint_states', keys(MAX_MESSAGE_KEYS)));
    assert.equal(widest.status, 200);
    assert.equal(widest.answer.result?.isError, true, 'as wide as allowed: the tool names the unknown argument');
    assert.match(widest.answer.result?.content[0]?.text ?? '', /unknown argument 'k0'/);
    const wider = await answerOf(CALL(2, 'get_joint_states', keys(MAX_MESSAGE_KEYS + 1)));
    assert.equal(wider.status, 200);
    assert.deepEqual(wider.answer, {
      jsonrpc: '2.0',
      id: 2,
      error: {
        code: -32602,
        message: `Invalid params: params.arguments has more than ${MAX_MESSAGE_KEYS} keys (no message this server takes has as many)`,
      },
    });
    const meta = await answerOf({ ...CALL(3, 'get_joint_states', {}), params: { name: 'x', _meta: keys(100) } });
    assert.match(meta.answer.error?.message ?? '', /^Invalid params: params\._meta has more than/);
    const notification = await answerOf({ jsonrpc: '2.0', method: 'notifications/progress', params: keys(100) });
    assert.equal(notification.status, 400);
    assert.equal(notification.answer.error?.code, -32600);
    assert.match(notification.answer.error?.message ?? '', /^Invalid Request: params has more than/);
    // A message with members JSON-RPC has not: the SDK's own refusal, wide or not.
    const member = await answerOf({ ...CALL(4, 'get_joint_states', {}), ...keys(100) });
    assert.equal(member.status, 400);
    assert.deepEqual(member.answer.error, { code: -32700, message: 'Parse error: Invalid JSON-RPC message' });
  });
});
