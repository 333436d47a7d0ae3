/**
 * An MCP stop tool's call on a connection beyond a cap stops the arm, as POST /stop there does (docs/api.md, the
 * caps): the listener lets a request to the MCP endpoint through to the app, which answers the cap's 503 (Retry-After,
 * Connection: close) whatever its token and carries out a right token's stop tools only. A wrong token's stop and a
 * right token's move there run nothing, answered the same 503.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sleep } from '../support/live.ts';
import { connect, portOf, type RawConnection, type RawResponse } from '../support/raw-http.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const ADMIN = 'caps-mcp-admin-token-5d21f0';
/** The client address whose connections are all busy (each holding an event stream). */
const CROWDED = '127.0.6.1';

describe('an MCP stop beyond the per-client cap', () => {
  let server: TestServer;
  let port: number;
  const held: RawConnection[] = [];
  before(async () => {
    server = await startTestServer({
      web: { token: ADMIN, limits: { max_connections_per_client: 4, retry_after_s: 3 } },
    });
    port = portOf(server.url);
    // Four event streams from one address: every connection of it serves a request (none idle to shed).
    for (let k = 0; k < 4; k++) {
      const c = await connect(port, CROWDED);
      c.write(`GET /events HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${ADMIN}\r\n\r\n`);
      held.push(c);
    }
    for (let i = 0; i < 100 && !held.every((c) => c.received().startsWith('HTTP/1.1 200')); i++) await sleep(20);
    assert.ok(
      held.every((c) => c.received().startsWith('HTTP/1.1 200')),
      'the four streams are open',
    );
  });
  after(async () => {
    for (const c of held) c.destroy();
    await server.close();
  });

  /** A tools/call of `name` with `token` and `args`, on a new connection from the crowded address: its answer. */
  const toolBeyondCap = async (token: string, name: string, args: object): Promise<RawResponse> => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name, arguments: args } });
    const c = await connect(port, CROWDED);
    try {
      c.write(
        `POST /mcp/mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${token}\r\n` +
          'Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n' +
          `Mcp-Session-Id: a-session-opened-elsewhere\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      const answer = await c.response();
      await c.closed;
      return answer;
    } finally {
      c.destroy();
    }
  };

  /** The answer of a request beyond the cap: the cap's 503, the same whatever was asked and whatever the token. */
  const assertCapAnswer = (res: RawResponse) => {
    assert.equal(res.status, 503, res.body);
    assert.equal(res.headers['retry-after'], '3');
    assert.equal(res.headers.connection, 'close');
    assert.match(JSON.parse(res.body).detail, /web\.limits\.max_connections_per_client/);
  };

  /** A slow move from another address (127.0.0.1), once it holds the arm: its answer to come (in an object, not awaited). */
  const startMove = async () => {
    const move = fetch(`${server.url}/robot/move/joints`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json', connection: 'close' },
      body: JSON.stringify({ joints: [-1.2, 0.5, 0.5, -0.8, 0.5, 0.8, 1.0], speed: 0.05 }),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as { success: boolean; message: string } }));
    for (let i = 0; i < 200 && server.services.arbiter.activity() === undefined; i++) await sleep(10);
    assert.ok(server.services.arbiter.activity() !== undefined, 'the move holds the arm');
    return { move };
  };

  const velocity = async () => {
    const res = await fetch(`${server.url}/robot/joint_states`, {
      headers: { authorization: `Bearer ${ADMIN}`, connection: 'close' },
    });
    return ((await res.json()) as { velocity: number[] }).velocity;
  };

  /** Whether every joint's velocity (GET /robot/joint_states) comes to 0 within a few seconds. */
  const atRest = async () => {
    for (let i = 0; i < 100; i++) {
      if ((await velocity()).every((v) => Math.abs(v) <= 1e-6)) return true;
      await sleep(50);
    }
    return false;
  };

  it("a wrong token's stop tool call is answered the cap's 503 and stops nothing", async () => {
    const { move } = await startMove();
    try {
      const wrong = await toolBeyondCap('caps-mcp-wrong-token', 'stop', {});
      assertCapAnswer(wrong);
      await sleep(100);
      assert.ok(server.services.arbiter.activity() !== undefined, "a wrong token's stop stops nothing");
    } finally {
      const stop = await fetch(`${server.url}/stop`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN}`, connection: 'close' },
      });
      assert.equal(stop.status, 200);
      await stop.arrayBuffer();
      await move;
    }
  });

  it("a right token's stop tool call is answered the same 503 and the moving arm stops", async () => {
    const { move } = await startMove();
    const answer = await toolBeyondCap(ADMIN, 'stop', {});
    assertCapAnswer(answer);
    const stopped = await move;
    assert.equal(stopped.body.success, false, 'the move was cut short by the stop tool');
    assert.match(stopped.body.message, /stop/i);
    assert.equal(server.services.arbiter.activity(), undefined, 'the arm is free');
    assert.ok(await atRest(), 'the arm is at rest (GET /robot/joint_states)');
  });

  it("a right token's pause tool call is carried out: the arm comes to rest and holds", async () => {
    const { move } = await startMove();
    let answered = false;
    void move.then(() => {
      answered = true;
    });
    assertCapAnswer(await toolBeyondCap(ADMIN, 'pause', {}));
    assert.ok(await atRest(), 'the paused arm is at rest');
    assert.equal(answered, false, 'the paused move still waits (pause cancels nothing)');
    const stop = await fetch(`${server.url}/stop`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, connection: 'close' },
    });
    assert.equal(stop.status, 200);
    await stop.arrayBuffer();
    assert.equal((await move).body.success, false, 'the stop ends the paused move');
  });

  it("a right token's move tool call is refused 503 and the arm does not move", async () => {
    const before = await fetch(`${server.url}/robot/joint_states`, {
      headers: { authorization: `Bearer ${ADMIN}`, connection: 'close' },
    }).then((r) => r.json() as Promise<{ position: number[] }>);
    assertCapAnswer(await toolBeyondCap(ADMIN, 'move_to_joints', { joints: [0.3, 0.3, 0.3, -0.3, 0.3, 0.3, 0.3] }));
    await sleep(200);
    assert.equal(server.services.arbiter.activity(), undefined, 'nothing holds the arm');
    const after = await fetch(`${server.url}/robot/joint_states`, {
      headers: { authorization: `Bearer ${ADMIN}`, connection: 'close' },
    }).then((r) => r.json() as Promise<{ position: number[] }>);
    assert.deepEqual(after.position, before.position, 'the arm has not moved');
  });

  it('POST /stop beyond the cap is served as before (200)', async () => {
    const c = await connect(port, CROWDED);
    try {
      c.write(
        `POST /stop HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${ADMIN}\r\nContent-Length: 0\r\n\r\n`,
      );
      assert.equal((await c.response()).status, 200);
    } finally {
      c.destroy();
    }
    assert.ok(
      held.every((c) => !c.socket.destroyed && !c.socket.readableEnded),
      'the busy streams are kept',
    );
  });
});
