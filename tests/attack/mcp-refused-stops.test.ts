/**
 * An MCP stop tool's call in a POST the endpoint refuses for its form or its session, as a careless client sends it:
 * without a session, on a session that ended, in a batch with a bad message or of too many, with an id still in flight,
 * beside a call with bad arguments or too many of them, under another JSON-RPC version, with an Accept or a charset refused before the body
 * is needed. Nothing else in such a POST runs, but the stop is carried out all the same (stop wins, as past the guess
 * limit); the answer is the refusal. Each left the arm moving.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openMcpSession } from '../support/mcp.ts';
import { createTestApp, type TestApp } from '../support/server.ts';

const MCP = '/mcp/mcp';
const JSON_ONLY = { 'content-type': 'application/json', accept: 'application/json' };
const WORK = [0, 0, 0, -1.57, 0, 1.57, 0];
const STOP = (id: unknown) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'stop', arguments: {} } });

describe('an MCP stop in a POST refused for its form or its session', () => {
  let app: TestApp;
  let session = '';
  const post = (body: unknown, sessionId: string | null = session) =>
    app.request(MCP, {
      method: 'POST',
      headers: { ...JSON_ONLY, ...(sessionId === null ? {} : { 'mcp-session-id': sessionId }) },
      body: JSON.stringify(body),
    });
  const speed = async () =>
    Math.max(
      ...((await (await app.request('/robot/joint_states')).json()) as { velocity: number[] }).velocity.map(Math.abs),
    );
  const untilMoving = async () => {
    for (let i = 0; (await speed()) < 0.01; i++) {
      assert.ok(i < 2000, 'the move started');
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  };
  /** Starts a move over REST, runs `refused` once the arm moves, and resolves with the move's answer. */
  const whileMoving = async (refused: () => Promise<Response>) => {
    const move = app.request('/robot/move/joints', {
      method: 'POST',
      headers: JSON_ONLY,
      body: JSON.stringify({ joints: WORK.map((q, j) => (j === 0 ? q + 0.8 : q)), speed: 0.1 }),
    });
    await untilMoving();
    const refusal = await refused();
    const moved = (await (await move).json()) as { success: boolean; message: string };
    await (
      await app.request('/robot/move/joints', {
        method: 'POST',
        headers: JSON_ONLY,
        body: JSON.stringify({ joints: WORK, speed: 1 }),
      })
    ).text();
    return { refusal, moved };
  };

  before(async () => {
    app = await createTestApp();
    session = (await openMcpSession(app, { name: 'careless' })).id;
  });
  after(async () => {
    await app?.close();
  });

  const cases: readonly (readonly [string, number, () => Promise<Response>])[] = [
    ['without a session', 400, () => post(STOP(1), null)],
    [
      'on a session this server never issued (a restart)',
      404,
      () => post(STOP(1), `${'a'.repeat(22)}.${'b'.repeat(22)}`),
    ],
    [
      'in a batch with a message that is not JSON-RPC',
      400,
      () => post([STOP(1), { jsonrpc: '2.0', id: 2, method: 5 }]),
    ],
    [
      'in a batch of 101 messages',
      400,
      () => post([STOP(1), ...Array.from({ length: 100 }, (_, i) => ({ jsonrpc: '2.0', id: 10 + i, method: 'ping' }))]),
    ],
    [
      'at the end of a batch of 10,000 messages (refused for its count before any message is looked at)',
      400,
      () =>
        post([...Array.from({ length: 9999 }, (_, i) => ({ jsonrpc: '2.0', id: 10 + i, method: 'ping' })), STOP(1)]),
    ],
    [
      'beside a call whose arguments have more keys than any message this server takes',
      200,
      () =>
        post([
          STOP(1),
          {
            jsonrpc: '2.0',
            id: 2,
            method: 'tools/call',
            params: {
              name: 'get_tcp_pose',
              arguments: Object.fromEntries(Array.from({ length: 100 }, (_, k) => [`k${k}`, k])),
            },
          },
        ]),
    ],
    ['as JSON-RPC 1.0', 400, () => post({ ...STOP(1), jsonrpc: '1.0' })],
    [
      'sent as text/plain (curl -d sends a form type)',
      415,
      () =>
        app.request(MCP, {
          method: 'POST',
          headers: { 'content-type': 'text/plain', accept: 'application/json', 'mcp-session-id': session },
          body: JSON.stringify(STOP(1)),
        }),
    ],
    [
      'with a charset other than UTF-8 (refused before its body is needed)',
      415,
      () =>
        app.request(MCP, {
          method: 'POST',
          headers: {
            'content-type': 'application/json; charset=iso-8859-1',
            accept: 'application/json',
            'mcp-session-id': session,
          },
          body: JSON.stringify(STOP(1)),
        }),
    ],
    [
      'with an Accept of neither JSON nor a stream (refused before its body is needed)',
      406,
      () =>
        app.request(MCP, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'text/html', 'mcp-session-id': session },
          body: JSON.stringify(STOP(1)),
        }),
    ],
    [
      'in a batch, with an Accept of neither and no session',
      406,
      () =>
        app.request(MCP, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'text/plain' },
          body: JSON.stringify([{ jsonrpc: '2.0', method: 'notifications/initialized' }, STOP(1)]),
        }),
    ],
    [
      'beside a call whose arguments are not an object',
      200,
      () =>
        post([
          STOP(1),
          { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'get_tcp_pose', arguments: 'x' } },
        ]),
    ],
  ];
  for (const [what, status, refused] of cases) {
    it(`stops the arm for a stop ${what} (answered ${status})`, async () => {
      const { refusal, moved } = await whileMoving(refused);
      assert.equal(refusal.status, status, await refusal.text());
      assert.equal(moved.success, false, `the move was stopped: ${moved.message}`);
      assert.match(moved.message, /stop/i);
    });
  }

  it('stops the arm for a stop whose id is the one of the move still running in the session (400 -32600)', async () => {
    const move = post({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name: 'move_to_joints',
        arguments: { joints: WORK.map((q, j) => (j === 0 ? q + 0.8 : q)), speed: 0.1 },
      },
    });
    await untilMoving();
    const refusal = await post(STOP(1));
    assert.equal(refusal.status, 400);
    assert.match(await refusal.text(), /-32600/);
    const moved = (await (await move).json()) as { result?: { structuredContent?: { success?: boolean } } };
    assert.equal(moved.result?.structuredContent?.success, false, JSON.stringify(moved));
    await (
      await app.request('/robot/move/joints', {
        method: 'POST',
        headers: JSON_ONLY,
        body: JSON.stringify({ joints: WORK, speed: 1 }),
      })
    ).text();
  });

  it('runs nothing else of a refused POST: a move in a refused batch does not start', async () => {
    const before = ((await (await app.request('/robot/joint_states')).json()) as { position: number[] }).position;
    const refusal = await post([
      {
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name: 'move_to_joints', arguments: { joints: WORK.map((q, j) => (j === 0 ? q + 0.8 : q)) } },
      },
      { jsonrpc: '2.0', id: 4, method: 5 },
    ]);
    assert.equal(refusal.status, 400);
    await refusal.text();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const now = ((await (await app.request('/robot/joint_states')).json()) as { position: number[] }).position;
    assert.ok(Math.abs((now[0] ?? 0) - (before[0] ?? 0)) < 1e-9, 'J1 did not move');
  });
});
