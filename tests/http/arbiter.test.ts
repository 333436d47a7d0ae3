/**
 * The one owner of the arm (issue 11), attacked through the live server: simultaneous starts and
 * moves, a start beside a move, stop during each, values at the bounds that used to exhaust the
 * process, and a SIGTERM while a move is in flight.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { listeningUrl, runServerCli } from '../support/cli.ts';
import {
  atRest,
  getJson,
  jointStates,
  maxDiff,
  post,
  processExists,
  sleep,
  waitFor,
  WORK,
  send,
  type Target,
} from '../support/live.ts';
import { openMcpSession } from '../support/mcp.ts';
import { sequenceForm } from '../support/multipart.ts';
import { createTestApp, type TestApp, writeSettings } from '../support/server.ts';

const FAR = [1.2, 0.5, 0.3, -1.0, 0.4, 1.0, 0.8];
const LONG_SEQUENCE = {
  home: { joints: [...WORK], speed: 0.3 },
  waypoints: [{ joints: [0.5, 0.3, 0, -1.2, 0, 1.2, 0.3], speed: 0.3 }],
};

interface Motion {
  success: boolean;
  message: string;
}
interface Detail {
  detail: string;
}
interface Status {
  status: string;
  pid?: number;
}

const startSequence = (url: Target) =>
  post<{ status: string; pid: number } & Detail>(
    url,
    '/sequences/start',
    sequenceForm(LONG_SEQUENCE, { n_iterations: '100', delay_between_iterations: '0' }),
  );
const moveJoints = (url: Target, joints: readonly number[], speed = 0.2) =>
  post<Motion & Detail>(url, '/robot/move/joints', { joints, speed });

/** The arm is at rest and stays where it is for `ms`. */
async function assertStaysAtRest(url: Target, ms = 300): Promise<void> {
  const first = await atRest(url);
  await sleep(ms);
  const later = await jointStates(url);
  assert.ok(
    later.velocity.every((v) => v === 0),
    `still at rest: ${later.velocity.join(', ')}`,
  );
  assert.ok(maxDiff(first.position, later.position) < 1e-9, 'the arm did not move after the stop');
}

/** A PUT of a JSON body. */
const putJson = (body: unknown): RequestInit => ({
  method: 'PUT',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

/** A request body sent in parts, as a slow client does: `write` a part, then `end`. */
function trickle() {
  let write: (text: string) => void = () => undefined;
  let end: () => void = () => undefined;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      write = (text) => controller.enqueue(new TextEncoder().encode(text));
      end = () => controller.close();
    },
  });
  return { body, write: (text: string) => write(text), end: () => end() };
}

describe('the motion arbiter on a live server', () => {
  let server: TestApp;
  let url: Target;
  let bagRoot: string;

  before(async () => {
    bagRoot = await mkdtemp(path.join(tmpdir(), 'armgate-test-arbiter-'));
    server = await createTestApp({ sim: { time_scale: 4 }, sequences: { bag_root: bagRoot } });
    url = server;
  });
  after(async () => {
    await server.close();
    await rm(bagRoot, { recursive: true, force: true });
  });

  it('six simultaneous sequence starts: exactly one 200, five 409 naming it; after /stop no runner is alive and the arm rests', async () => {
    const answers = await Promise.all(Array.from({ length: 6 }, () => startSequence(url)));
    const started = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status === 409);
    assert.equal(started.length, 1, JSON.stringify(answers.map((a) => a.status)));
    assert.equal(refused.length, 5);
    const pid = started[0]?.body.pid ?? 0;
    for (const r of refused) assert.match(r.body.detail, /sequence/);
    const status = await getJson<Status>(url, '/sequences/status');
    assert.equal(status.pid, pid, 'the status names the one runner');
    await waitFor(
      'the sequence to move the arm',
      () => jointStates(url),
      (s) => s.velocity.some((v) => v !== 0),
      15_000,
    );
    const stop = await post<{ sequence_stopped: boolean }>(url, '/stop');
    assert.equal(stop.status, 200);
    assert.equal(stop.body.sequence_stopped, true);
    assert.equal(processExists(pid), false, `runner ${pid} is gone when /stop answers`);
    await assertStaysAtRest(url);
  });

  it('five simultaneous moves: exactly one runs, four 409 at once naming what holds the arm', async () => {
    const started = performance.now();
    const pending = Array.from({ length: 5 }, () =>
      moveJoints(url, FAR).then((r) => ({ ...r, ms: performance.now() - started })),
    );
    const answers = await Promise.all(pending);
    const refused = answers.filter((a) => a.status === 409);
    const ran = answers.filter((a) => a.status === 200);
    assert.equal(ran.length, 1, JSON.stringify(answers.map((a) => a.status)));
    assert.equal(ran[0]?.body.success, true, ran[0]?.body.message);
    assert.equal(refused.length, 4);
    for (const r of refused) {
      assert.match(r.body.detail, /the arm is busy \(moving to joint angles\)/);
      assert.ok(r.ms < (ran[0]?.ms ?? 0), 'a refusal does not wait for the motion');
    }
    await moveJoints(url, WORK, 0.5);
  });

  it('a sequence start beside a move: exactly one proceeds, and the other is 409', async () => {
    const [move, start] = await Promise.all([moveJoints(url, FAR, 0.3), startSequence(url)]);
    const winners = [move.status === 200 && move.body.success, start.status === 200].filter(Boolean);
    assert.equal(
      winners.length,
      1,
      `move ${move.status} ${JSON.stringify(move.body)}, start ${start.status} ${JSON.stringify(start.body)}`,
    );
    assert.ok(move.status === 409 || start.status === 409);
    const stop = await post<{ sequence_stopped: boolean }>(url, '/stop');
    assert.equal(stop.status, 200);
    if (start.status === 200) assert.equal(processExists(start.body.pid), false);
    await assertStaysAtRest(url);
    await moveJoints(url, WORK, 0.5);
  });

  it('a trajectory sent during a move is 409 at once, naming the move, and the move goes on to its goal', async () => {
    const move = moveJoints(url, FAR, 0.3);
    await waitFor(
      'the arm to move',
      () => jointStates(url),
      (s) => s.velocity.some((v) => v !== 0),
      5000,
      5,
    );
    const res = await post<Detail>(url, '/trajectory/send', { points: [{ positions: [...WORK], time_from_start: 5 }] });
    assert.equal(res.status, 409, JSON.stringify(res.body));
    assert.match(res.body.detail, /the arm is busy \(moving to joint angles\)/);
    const answer = await move;
    assert.equal(answer.body.success, true, answer.body.message);
    await moveJoints(url, WORK, 0.5);
  });

  it('stop during a move answers the move with success false at once and leaves the arm at rest', async () => {
    const move = moveJoints(url, FAR, 0.1);
    await waitFor(
      'the arm to move',
      () => jointStates(url),
      (s) => s.velocity.some((v) => v !== 0),
      5000,
      5,
    );
    const stop = await post(url, '/stop');
    assert.equal(stop.status, 200);
    const answer = await move;
    assert.equal(answer.status, 200);
    assert.equal(answer.body.success, false);
    assert.match(answer.body.message, /stopped/);
    await assertStaysAtRest(url);
    // The arm is free again at once.
    const next = await moveJoints(url, WORK, 0.5);
    assert.equal(next.body.success, true, next.body.message);
  });

  it('a move whose body is still arriving when /stop comes is refused (409) and nothing moves', async () => {
    const before = await atRest(url);
    const { body, write, end } = trickle();
    const init = {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      duplex: 'half',
    } as RequestInit;
    const pending = send(url, `/robot/move/joints`, init);
    write('{"joints": [1.2, 0.5, 0.3, -1.0, ');
    await sleep(100);
    assert.equal((await post(url, '/stop')).status, 200);
    write('0.4, 1.0, 0.8], "speed": 0.5}');
    end();
    const res = await pending;
    const answer = (await res.json()) as Detail;
    assert.equal(res.status, 409, JSON.stringify(answer));
    assert.match(answer.detail, /a stop arrived while this request was being prepared; nothing was moved/);
    await sleep(200);
    const after = await jointStates(url);
    assert.ok(maxDiff(before.position, after.position) < 1e-9, 'nothing moved');
  });

  it('an MCP move whose body is still arriving when /stop comes is refused and nothing moves', async () => {
    const before = await atRest(url);
    const session = await openMcpSession(url, { name: 'arbiter-test' });
    const { body, write, end } = trickle();
    const pending = send(url, '/mcp/mcp', {
      method: 'POST',
      headers: session.headers,
      body,
      duplex: 'half',
    } as RequestInit);
    write('{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "move_to_joints", ');
    await sleep(100);
    assert.equal((await post(url, '/stop')).status, 200);
    write('"arguments": {"joints": [1.2, 0.5, 0.3, -1.0, 0.4, 1.0, 0.8], "speed": 0.5}}}');
    end();
    const answer = (await (await pending).json()) as { result?: { isError?: boolean; content: { text: string }[] } };
    assert.equal(answer.result?.isError, true, JSON.stringify(answer));
    assert.match(
      answer.result?.content[0]?.text ?? '',
      /a stop arrived while this request was being prepared; nothing was moved/,
    );
    await sleep(200);
    const after = await jointStates(url);
    assert.ok(maxDiff(before.position, after.position) < 1e-9, 'nothing moved');
  });

  it('an override raise whose body is still arriving when /stop comes is refused (409); a lowering so is made', async () => {
    const override = async () => (await getJson<{ percent: number }>(url, '/robot/override')).percent;
    const put = async (percent: number) => {
      const { body, write, end } = trickle();
      const pending = send(url, '/robot/override', {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body,
        duplex: 'half',
      } as RequestInit);
      write('{"percent": ');
      await sleep(100);
      assert.equal((await post(url, '/stop')).status, 200);
      write(`${percent}}`);
      end();
      const res = await pending;
      return { status: res.status, body: (await res.json()) as Detail & { percent?: number } };
    };
    try {
      assert.equal((await send(url, '/robot/override', putJson({ percent: 40 }))).status, 200);
      const raised = await put(90);
      assert.equal(raised.status, 409, JSON.stringify(raised.body));
      assert.match(
        raised.body.detail,
        /a stop arrived after this request; the override was not raised \(it stays 40 %\)/,
      );
      assert.equal(await override(), 40, 'not raised');
      const lowered = await put(20);
      assert.equal(lowered.status, 200, JSON.stringify(lowered.body));
      assert.equal(await override(), 20, 'lowered');
    } finally {
      assert.equal((await send(url, '/robot/override', putJson({ percent: 100 }))).status, 200);
    }
  });

  it('an MCP override raise whose body is still arriving when /stop comes is refused; the override is unchanged', async () => {
    const session = await openMcpSession(url, { name: 'arbiter-override' });
    assert.equal((await send(url, '/robot/override', putJson({ percent: 60 }))).status, 200);
    const { body, write, end } = trickle();
    const pending = send(url, '/mcp/mcp', {
      method: 'POST',
      headers: session.headers,
      body,
      duplex: 'half',
    } as RequestInit);
    write('{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "set_override", ');
    await sleep(100);
    assert.equal((await post(url, '/stop')).status, 200);
    write('"arguments": {"percent": 100}}}');
    try {
      end();
      const answer = (await (await pending).json()) as { result?: { isError?: boolean; content: { text: string }[] } };
      assert.equal(answer.result?.isError, true, JSON.stringify(answer));
      assert.match(
        answer.result?.content[0]?.text ?? '',
        /a stop arrived after this request; the override was not raised/,
      );
      assert.equal((await getJson<{ percent: number }>(url, '/robot/override')).percent, 60, 'not raised');
    } finally {
      assert.equal((await send(url, '/robot/override', putJson({ percent: 100 }))).status, 200);
    }
  });

  it('a sequence whose hold on the arm is revoked sends no further goal: the runner ends and the arm rests', async () => {
    const res = await startSequence(url);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    await waitFor(
      'the sequence to move the arm',
      () => jointStates(url),
      (s) => s.velocity.some((v) => v !== 0),
      15_000,
    );
    // What a shutdown or a stop does first, without the supervisor's own stop of the runner.
    assert.equal(server.services.arbiter.revoke('revoked by the test')?.kind, 'sequence');
    const done = await waitFor(
      'the runner to end',
      () => getJson<Status & { returncode?: number }>(url, '/sequences/status'),
      (s) => s.status === 'finished',
      10_000,
    );
    assert.equal(done.pid, res.body.pid);
    assert.ok(done.returncode === 1 || done.returncode === 143, `returncode ${done.returncode}`);
    const lines = await getJson<string[] | { lines: string[] }>(url, '/sequences/logs?n=50');
    const text = JSON.stringify(lines);
    assert.match(text, /revoked by the test/);
    assert.equal(processExists(res.body.pid), false);
    await assertStaysAtRest(url);
    await moveJoints(url, WORK, 0.5);
  });

  it('a revoked sequence waiting between iterations is refused its next goal by the arbiter (returncode 143)', async () => {
    await moveJoints(url, WORK, 0.5);
    const still = { home: { joints: [...WORK], speed: 0.3 }, waypoints: [] };
    const res = await post<{ pid: number }>(
      url,
      '/sequences/start',
      sequenceForm(still, { n_iterations: '100', delay_between_iterations: '1' }),
    );
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const logs = async () => JSON.stringify(await getJson<unknown>(url, '/sequences/logs?n=100'));
    await waitFor('the runner to wait between iterations', logs, (text) => text.includes('waiting 1 s'), 15_000);
    server.services.arbiter.revoke('revoked by the test');
    const done = await waitFor(
      'the runner to end',
      () => getJson<Status & { returncode?: number }>(url, '/sequences/status'),
      (s) => s.status === 'finished',
      10_000,
    );
    assert.equal(done.returncode, 143);
    assert.match(
      await logs(),
      /iteration 2: home: the sequence no longer holds the arm: revoked by the test; nothing more is sent/,
    );
    assert.equal(processExists(res.body.pid), false);
  });

  for (const accel_scale of [1e-100, 5e-324, 1e-8]) {
    it(`accel_scale ${accel_scale} is answered (success false, the figure against the motion timeout) and the server lives`, async () => {
      const before = await jointStates(url);
      const res = await post<Motion>(url, '/robot/move/named', { name: 'home', speed: 1, accel_scale });
      assert.equal(res.status, 200);
      assert.equal(res.body.success, false);
      assert.match(res.body.message, /would take .* s .*longer than the motion timeout \(\d+ s\)/);
      const after = await jointStates(url);
      assert.ok(maxDiff(before.position, after.position) < 1e-9, 'nothing moved');
    });
  }
});

describe('shutting down with a move in flight', () => {
  it('SIGTERM answers the move (success false, the service is shutting down) before the process exits', async () => {
    const settings = await writeSettings({ sim: { time_scale: 1 } });
    const cli = runServerCli(['--settings', settings.file, '--port', '0']);
    try {
      const url = await listeningUrl(cli, 30_000);
      const move = moveJoints(url, FAR, 0.1);
      await waitFor(
        'the arm to move',
        () => jointStates(url),
        (s) => s.velocity.some((v) => v !== 0),
        5000,
        5,
      );
      cli.child.kill('SIGTERM');
      const answer = await move;
      assert.equal(answer.status, 200);
      assert.deepEqual(answer.body, { success: false, message: 'the service is shutting down' });
      assert.equal(await cli.exited, 0, cli.err());
    } finally {
      if (cli.child.exitCode === null) cli.child.kill('SIGKILL');
      await cli.exited;
      await settings.cleanup();
    }
  });
});
