/**
 * A Foxglove connection the server closes (dropped for reading too slowly, or for a flood) from outside, with the
 * real FoxgloveClient: `ws` keeps such a socket readable until the client's side of the close comes or the socket is
 * destroyed (DROP_GRACE_MS later), and nothing the server answers can reach it any more. So what it sends then is not
 * carried out, but a stop (stop wins), and its motion in flight stops at the server's close, not at the socket's end.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { startTestServer, type TestServer } from '../support/server.ts';
import { type Connected, connect, fillSendBuffer } from '../foxglove/support.ts';

const ADMIN = 'admin-token-5e1d9a7c3b77';
const OPERATE = 'operator-token-abcdef0123';
const READ = 'viewer-token-0123456789ab';

interface JointState {
  position: Float64Array;
  velocity: Float64Array;
}
interface Motion {
  state: string;
  message: string;
}

const speed = (s: JointState) => Math.max(...Array.from(s.velocity, Math.abs));

describe('a Foxglove connection the server closed is served no more calls but a stop', () => {
  let server: TestServer;
  let url: string;
  let dir: string;
  let auditFile: string;
  const open: Connected[] = [];
  const as = async (token: string) => {
    const c = await connect(`${url}/?token=${token}`);
    open.push(c);
    return c;
  };
  /** Stops reading `c` until the server drops it for its send buffer. */
  const dropped = async (c: Connected) => {
    const before = server.foxglove?.counts.dropped ?? 0;
    await fillSendBuffer(c, () => (server.foxglove?.counts.dropped ?? 0) > before);
  };
  const auditLines = async () =>
    (await readFile(auditFile, 'utf8').catch(() => ''))
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  /** Starts a slow move of J1 by 1 rad on `c` and resolves once the arm moves (seen by `reader`). */
  const moving = async (c: Connected, reader: Connected) => {
    const [start] = (await reader.take('/joint_states')) as JointState[];
    const target = Array.from(start?.position ?? []).map((q, j) => (j === 0 ? q + 1 : q));
    void c.call('/armgate/move_to_joints', { joints: target, speed: 0.05 });
    for (let i = 0; ; i++) {
      const [s] = (await reader.take('/joint_states')) as JointState[];
      if (s && speed(s) > 0.01) return;
      assert.ok(i < 1000, 'the move started');
    }
  };
  /** The motion's last state on /armgate/motion, once it is no longer started. */
  const ended = async (reader: Connected): Promise<Motion> => {
    for (let i = 0; i < 400; i++) {
      const [m] = (await reader.take('/armgate/motion')) as Motion[];
      if (m && m.state !== 'started') return m;
      await delay(25);
    }
    assert.fail('the motion did not end');
  };

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'armgate-foxglove-closing-'));
    auditFile = path.join(dir, 'audit.jsonl');
    server = await startTestServer({
      web: {
        token: ADMIN,
        tokens: [
          { name: 'operator', token: OPERATE, role: 'operate' },
          { name: 'viewer', token: READ, role: 'read' },
        ],
      },
      audit: { path: auditFile },
      foxglove: { enabled: true, port: 0, address: '127.0.0.1', send_buffer_limit: 262_144 },
    });
    url = server.foxglove?.url ?? '';
  });

  after(async () => {
    for (const c of open) c.ws.terminate();
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('does not carry out a move called on a dropped connection, and carries out its stop', async () => {
    const operator = await as(OPERATE);
    const reader = await as(READ);
    const [start] = (await reader.take('/joint_states')) as JointState[];
    await dropped(operator);
    const target = Array.from(start?.position ?? []).map((q, j) => (j === 0 ? q + 0.5 : q));
    void operator.call('/armgate/move_to_joints', { joints: target, speed: 0.5 });
    void operator.call('/armgate/stop', {});
    // The frames are read in order: the stop's line on the trail comes after the move was (or was not) called.
    let lines: Record<string, unknown>[] = [];
    const calls = (operation: string) =>
      lines.filter((l) => l.operation === operation && l.interface === 'foxglove' && l.principal === 'operator');
    for (let i = 0; i < 200 && calls('stop').length === 0; i++) {
      await delay(25);
      lines = await auditLines();
    }
    assert.equal(calls('stop').length, 1, 'the stop sent on the dropped connection is carried out');
    // A move called before it would be on the trail by now, refused or stopped.
    for (let i = 0; i < 20; i++) {
      await delay(25);
      lines = await auditLines();
    }
    assert.deepEqual(calls('move_to_joints'), [], 'the move sent on the dropped connection is not called');
    const [now] = (await reader.take('/joint_states')) as JointState[];
    assert.ok(Math.abs((now?.position[0] ?? 0) - (start?.position[0] ?? 0)) < 1e-3, 'J1 did not move');
  });

  it('stops a move of another client when stop is called on a dropped connection (stop wins)', async () => {
    const operator = await as(OPERATE);
    const reader = await as(READ);
    await dropped(operator);
    const mover = await as(OPERATE);
    const [start] = (await reader.take('/joint_states')) as JointState[];
    const target = Array.from(start?.position ?? []).map((q, j) => (j === 0 ? q + 1 : q));
    const move = mover.call('/armgate/move_to_joints', { joints: target, speed: 0.05 });
    for (let i = 0; ; i++) {
      const [s] = (await reader.take('/joint_states')) as JointState[];
      if (s && speed(s) > 0.01) break;
      assert.ok(i < 1000, 'the move started');
    }
    void operator.call('/armgate/stop', {});
    const moved = await move;
    assert.ok(moved.ok, JSON.stringify(moved));
    assert.equal(moved.value.success, false, `stopped short: ${String(moved.value.message)}`);
    assert.match(String(moved.value.message), /stop/i);
  });

  it("stops the connection's motion in flight when it is dropped, not when its socket ends", async () => {
    const operator = await as(OPERATE);
    const reader = await as(READ);
    await moving(operator, reader);
    await dropped(operator);
    const motion = await ended(reader);
    assert.equal(motion.state, 'stopped');
    assert.match(motion.message, /server closed the Foxglove connection/, 'stopped for the drop, not at the close');
  });

  it("stops the connection's motion in flight when it is closed for a flood, not when its socket ends", async () => {
    const operator = await as(OPERATE);
    const reader = await as(READ);
    await moving(operator, reader);
    for (let i = 0; i < 1500; i++) operator.ws.send('{"op":"getParameters","parameterNames":["x"]}');
    const closed = await operator.closed;
    assert.equal(closed.code, 1008, `closed ${closed.code} ${closed.reason}`);
    const motion = await ended(reader);
    assert.equal(motion.state, 'stopped');
    assert.match(motion.message, /server closed the Foxglove connection/, 'stopped for the flood, not at the close');
  });
});
