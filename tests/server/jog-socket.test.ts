/**
 * The jog WebSocket at GET /robot/jog on a live server (simulator at time_scale 1): the token by header or
 * subprotocol (never echoed or logged), roles and Origin, status at 10 Hz and more while jogging, a socket that drops
 * brings the arm to rest, one jogging client, and bad input: NaN, huge messages, binary frames and floods.
 * The sockets are the machine's (real time); the simulator and the status ticker
 * run on a clock the test steps (tests/support/stepped.ts), so the jog's ttl, its motion and its braking after a
 * drop are figures of that clock, not of the machine's load.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { refusalsPath } from '../../lib/audit/trail.ts';
import type { SteppedClock } from '../../lib/clock.ts';
import type { TestServer } from '../support/server.ts';
import { startSteppedServer, waitOnClock } from '../support/stepped.ts';
import { STATUS_PERIOD_MS } from '../../handlers/robot/jog-socket.ts';

const TOKEN = 'operator-token-3c5e7a9b1d';
const VIEWER = 'viewer-token-9f8e7d6c5b';
const ADMIN = 'admin-token-1a2b3c4d5e6f';
/** The machine's time passing (a socket's messages, the status ticker). */
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
/** Both times passing: `ms` of the machine's, then `ms` of the simulator's clock. */
const pace = async (ms: number) => {
  await sleep(ms);
  await clock.advance(ms);
};
const asProtocol = (token: string) => `armgate.token.${Buffer.from(token).toString('base64url')}`;

let server: TestServer;
let dir: string;
let clock: SteppedClock;

const wsUrl = () => `${server.url.replace('http', 'ws')}/robot/jog`;

interface Opened {
  readonly ws: WebSocket;
  readonly messages: Record<string, unknown>[];
  readonly closed: Promise<{ code: number; reason: string }>;
}

/** Opens the jog socket; rejects with the HTTP status when the upgrade is refused. */
function open(options: { headers?: Record<string, string>; protocols?: string[] } = {}): Promise<Opened> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(wsUrl(), options.protocols ?? [], { headers: options.headers ?? {} });
    const messages: Record<string, unknown>[] = [];
    const closed = new Promise<{ code: number; reason: string }>((done) =>
      ws.on('close', (code, reason) => done({ code, reason: reason.toString() })),
    );
    ws.on('message', (data) => messages.push(JSON.parse(data.toString()) as Record<string, unknown>));
    ws.on('open', () => resolve({ ws, messages, closed }));
    ws.on('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    ws.on('error', (e) => reject(e));
  });
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const positions = async () =>
  (
    (await (await fetch(`${server.url}/robot/joint_states`, { headers: bearer(ADMIN) })).json()) as {
      position: number[];
      velocity: number[];
    }
  ).position;

/**
 * Waits for a socket's first jogging status: until its jog is in force (its message is read in the machine's time),
 * then one status period of the clock (the ticker runs on it), then until the status has come over the socket. The
 * clock stands still meanwhile, so the jog's ttl does not run out however long the machine takes.
 */
async function firstJoggingStatus(messages: Record<string, unknown>[]): Promise<void> {
  for (let i = 0; i < 1000 && server.services.jog?.owner() === undefined; i++) await sleep(10);
  await clock.advance(STATUS_PERIOD_MS);
  for (let i = 0; i < 1000 && !messages.some((m) => m.jogging === true); i++) await sleep(10);
}

/** Waits (at most `timeoutMs` of the clock) until the arm rests and nothing jogs; its position. */
async function atRest(timeoutMs = 3000): Promise<number[]> {
  const s = await waitOnClock(
    clock,
    'the arm at rest',
    async () =>
      (await (await fetch(`${server.url}/robot/joint_states`, { headers: bearer(ADMIN) })).json()) as {
        position: number[];
        velocity: number[];
      },
    (s) => s.velocity.every((v) => v === 0) && server.services.jog?.owner() === undefined,
    timeoutMs,
    10,
  );
  return s.position;
}

describe('the jog WebSocket', () => {
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'armgate-jog-socket-'));
    ({ server, clock } = await startSteppedServer({
      audit: { path: path.join(dir, 'audit.jsonl') },
      web: {
        token: ADMIN,
        tokens: [
          { name: 'operator', token: TOKEN, role: 'operate' },
          { name: 'viewer', token: VIEWER, role: 'read' },
        ],
      },
      sim: { time_scale: 1 },
    }));
  });
  after(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('takes the token as a subprotocol, answers with armgate.jog.v1 and never echoes or logs the token', async () => {
    const { ws } = await open({ protocols: ['armgate.jog.v1', asProtocol(TOKEN)] });
    assert.equal(ws.protocol, 'armgate.jog.v1');
    ws.close();
    const header = await open({ headers: bearer(TOKEN) });
    assert.equal(header.ws.protocol, '');
    header.ws.close();
    await header.closed;
    assert.ok(!JSON.stringify(server.logs).includes(TOKEN), 'the token is in no log line');
    assert.ok(!JSON.stringify(server.logs).includes(asProtocol(TOKEN).slice(14)), 'nor its encoded form');
  });

  it('refuses a missing or wrong token (401), a read token (403), a foreign Origin (403) and another path (404)', async () => {
    await assert.rejects(open(), /HTTP 401/);
    await assert.rejects(open({ protocols: [asProtocol('not-the-token-at-all')] }), /HTTP 401/);
    await assert.rejects(open({ headers: bearer(VIEWER) }), /HTTP 403/);
    await assert.rejects(open({ headers: { ...bearer(TOKEN), origin: 'http://evil.example' } }), /HTTP 403/);
    const same = await open({ headers: { ...bearer(TOKEN), origin: server.url } });
    same.ws.close();
    await same.closed;
    const other = new WebSocket(`${server.url.replace('http', 'ws')}/robot/joint_states`, { headers: bearer(TOKEN) });
    const status = await new Promise<number>((resolve) =>
      other.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0)),
    );
    assert.equal(status, 404);
  });

  it('jogs while messages come, with a status at 10 Hz or more; a socket that drops brings the arm to rest', async () => {
    await atRest();
    const { ws, messages, closed } = await open({ headers: bearer(TOKEN) });
    // A jog of one command first: its last status says it ended, and that nothing jogs.
    ws.send(JSON.stringify({ joints: [0, 0, 0, 0, 0, 0, 1], ttl_ms: 40 }));
    // Up to 10 s of both times for the last status to come over the socket (the machine may be loaded).
    for (let i = 0; i < 1000 && !messages.some((m) => m.ended); i++) await pace(10);
    const ended = messages.find((m) => m.ended);
    assert.deepEqual([ended?.ended, ended?.jogging], ['ttl', false]);
    messages.length = 0;
    const start = await atRest();
    const since = performance.now();
    const until = since + 500;
    // The status rate is of the app's clock (the ticker runs on it): its time is what the rate is counted in.
    const sinceOnClock = clock.nowMs();
    while (performance.now() < until) {
      ws.send(JSON.stringify({ joints: [0, 0, 0, 0, 0, 0, 1], ttl_ms: 300 }));
      await pace(40);
    }
    const statuses = messages.filter((m) => m.type === 'status' && m.jogging === true);
    const elapsedS = (clock.nowMs() - sinceOnClock) / 1000;
    assert.ok(statuses.length >= 10 * elapsedS * 0.6, `${statuses.length} statuses in ${elapsedS.toFixed(2)} s`);
    const last = statuses.at(-1) as { positions: number[] };
    assert.ok((last.positions[6] ?? 0) > (start[6] ?? 0) + 0.05, 'joint7 moved');
    // The socket drops without a close frame: the arm brakes to rest as for a lapsed command.
    const droppedAt = await positions();
    const reasons: string[] = [];
    const unsubscribe = server.services.jog?.onEvents((e) => {
      if (e.state === 'ended') reasons.push(e.reason ?? '');
    });
    // What /events carries of it (the bus's frames).
    const published: Record<string, unknown>[] = [];
    const unlisten = server.services.events?.subscribe(
      {
        send: (frame) => {
          const text = Buffer.from(frame).toString();
          const data = /data: (.*)/.exec(text)?.[1];
          if (/event: jog\b/.test(text) && data) published.push(JSON.parse(data) as Record<string, unknown>);
        },
        end: () => undefined,
      },
      { jointStateHz: 0 },
    );
    ws.terminate();
    await closed;
    const rest = await atRest(1000);
    unsubscribe?.();
    unlisten?.();
    assert.deepEqual(reasons, ['socket closed']);
    assert.deepEqual(
      published.map((e) => [e.state, e.reason, e.by, e.via]),
      [['ended', 'socket closed', 'operator', 'websocket']],
    );
    assert.ok((rest[6] ?? 0) - (droppedAt[6] ?? 0) < 0.25 * 3.14 * 0.3 + 0.05, 'braked right away');
  });

  it("the status ticks on the app's clock: none while it stands still, one each 50 ms of it", async () => {
    await atRest();
    const { ws, messages, closed } = await open({ headers: bearer(TOKEN) });
    ws.send(JSON.stringify({ joints: [0, 0, 0, 0, 0, 0, 0.3], ttl_ms: 500 }));
    const jogging = () => messages.filter((m) => m.type === 'status' && m.jogging === true).length;
    await firstJoggingStatus(messages);
    assert.ok(jogging() > 0, 'the socket jogs');
    // The clock stands still (the jog's ttl of 500 ms holds it): what was sent arrives, then nothing more comes.
    await sleep(100);
    const still = jogging();
    await sleep(300);
    assert.equal(jogging(), still, 'no status in 300 ms of the machine while the clock stands still');
    // 250 ms of the clock at once: 5 statuses, however long the machine takes to send them (up to 10 s).
    for (let t = 0; t < 250; t += 5) await clock.advance(5);
    for (let i = 0; i < 1000 && jogging() < still + 5; i++) await sleep(10);
    assert.ok(jogging() >= still + 5, `${jogging() - still} statuses in 250 ms of the clock`);
    ws.close();
    await closed;
    await atRest();
  });

  it("POST /stop ends the socket's jog at once: its last status says stop, the socket stays open, a later message jogs anew", async () => {
    await atRest();
    const { ws, messages, closed } = await open({ headers: bearer(TOKEN) });
    ws.send(JSON.stringify({ joints: [0, 0, 0, 0, 0, 0, 0.5], ttl_ms: 500 }));
    for (let i = 0; i < 500 && !messages.some((m) => m.jogging === true && m.moving === true); i++) await pace(5);
    assert.ok(
      messages.some((m) => m.jogging === true),
      'the socket jogs',
    );
    const stop = await fetch(`${server.url}/stop`, { method: 'POST', headers: bearer(ADMIN) });
    assert.equal(stop.status, 200);
    for (let i = 0; i < 200 && !messages.some((m) => m.ended); i++) await sleep(10);
    const ended = messages.find((m) => m.ended);
    assert.deepEqual([ended?.ended, ended?.jogging], ['stop', false], JSON.stringify(ended));
    assert.equal(ws.readyState, WebSocket.OPEN, 'the socket stays open');
    // Its ttl (500 ms) would have held it: nothing moves after the stop.
    const rest = await atRest(2000);
    await pace(600);
    assert.deepEqual(await positions(), rest, 'nothing moved after the stop');
    messages.length = 0;
    ws.send(JSON.stringify({ joints: [0, 0, 0, 0, 0, 0, -0.5], ttl_ms: 40 }));
    for (let i = 0; i < 500 && !messages.some((m) => m.ended); i++) await pace(5);
    assert.ok(
      messages.some((m) => m.jogging === true),
      'a message sent after the stop answered jogs again',
    );
    ws.close();
    await closed;
    await atRest();
  });

  it('one jogging client at a time: a socket opened while another jogs is closed with 4409 and a reason', async () => {
    await atRest();
    const first = await open({ headers: bearer(TOKEN) });
    first.ws.send(JSON.stringify({ joints: [0, 0, 0, 0, 0, 0, 0.2], ttl_ms: 500 }));
    await firstJoggingStatus(first.messages);
    assert.ok(
      first.messages.some((m) => m.jogging === true),
      'the first socket jogs',
    );
    const second = await open({ headers: bearer(ADMIN) });
    const { code, reason } = await second.closed;
    assert.equal(code, 4409);
    assert.match(reason, /another client jogs over the WebSocket \(operator\)/);
    first.ws.close();
    await first.closed;
  });

  it('an open socket that does not jog holds nothing: another socket jogs; the idle one is refused (409) meanwhile', async () => {
    await atRest();
    const idle = await open({ headers: bearer(ADMIN) });
    const jogger = await open({ headers: bearer(TOKEN) });
    jogger.ws.send(JSON.stringify({ joints: [0, 0, 0, 0, 0, 0, 0.2], ttl_ms: 500 }));
    await firstJoggingStatus(jogger.messages);
    assert.ok(
      jogger.messages.some((m) => m.jogging === true),
      'the second socket jogs',
    );
    idle.ws.send(JSON.stringify({ joints: [0, 0, 0, 0, 0, 0, -0.2], ttl_ms: 500 }));
    for (let i = 0; i < 200 && !idle.messages.some((m) => m.type === 'error'); i++) await sleep(10);
    const refused = idle.messages.find((m) => m.type === 'error') as { status?: number; detail?: string } | undefined;
    assert.equal(refused?.status, 409, JSON.stringify(refused));
    assert.match(refused?.detail ?? '', /another client jogs the arm/);
    assert.equal(idle.ws.readyState, WebSocket.OPEN, 'the idle socket stays open');
    for (const s of [jogger, idle]) {
      s.ws.close();
      await s.closed;
    }
    await atRest();
  });

  it('bad messages: 422 with the field path and no motion; huge is 1009, binary 1003, a flood 1008', async () => {
    const before = await atRest();
    const a = await open({ headers: bearer(TOKEN) });
    a.ws.send('{"joints": [NaN, 0, 0, 0, 0, 0, 0]}');
    a.ws.send(JSON.stringify({ joints: [0, 0, 2, 0, 0, 0, 0] }));
    a.ws.send(JSON.stringify({ joints: [0, 0, 0.5, 0, 0, 0, 0], linear: [1, 0, 0] }));
    await sleep(200);
    const errors = a.messages.filter((m) => m.type === 'error') as { status: number; detail: { loc: unknown[] }[] }[];
    assert.deepEqual(
      errors.map((e) => [e.status, e.detail[0]?.loc]),
      [
        [422, ['message']],
        [422, ['message', 'joints', 2]],
        [422, ['message', 'joints']],
      ],
    );
    assert.deepEqual(await positions(), before, 'nothing moved');
    a.ws.send('x'.repeat(5000));
    assert.equal((await a.closed).code, 1009);
    const b = await open({ headers: bearer(TOKEN) });
    b.ws.send(Buffer.from([1, 2, 3]));
    assert.equal((await b.closed).code, 1003);
    const c = await open({ headers: bearer(TOKEN) });
    for (let i = 0; i < 150; i++) c.ws.send(JSON.stringify({ joints: [0, 0, 0, 0, 0, 0, 0] }));
    const flood = await c.closed;
    assert.equal(flood.code, 1008);
    assert.match(flood.reason, /more than 100 messages a second/);
    assert.deepEqual(await positions(), before, 'nothing moved');
  });

  it("is on the audit trail as its jog's start and end, not one line per message (as before the pipeline)", async () => {
    await atRest();
    const { ws, messages, closed } = await open({ headers: bearer(TOKEN) });
    for (let i = 0; i < 5; i++) ws.send(JSON.stringify({ joints: [0, 0, 0, 0, 0, 0, 0.5], ttl_ms: 60 }));
    // The ttl lapses on the simulator's clock: both times pass until the jog's last status says it ended.
    for (let i = 0; i < 200 && !messages.some((m) => m.ended); i++) await pace(10);
    assert.ok(
      messages.some((m) => m.ended),
      'the jog ended by its ttl',
    );
    ws.close();
    await closed;
    await server.services.audit?.flush();
    const lines = (await readFile(path.join(dir, 'audit.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as { principal: string; interface: string; operation: string; outcome: { message?: string } },
      );
    assert.deepEqual(
      lines
        .filter((l) => l.operation === 'jog')
        .slice(-2)
        .map((l) => [l.principal, l.interface, l.outcome.message?.replace(/:.*/, '')]),
      [
        ['operator', 'websocket', 'jog started over websocket'],
        ['operator', 'websocket', 'jog ended'],
      ],
      'the jog socket has its own interface on the trail',
    );
    assert.ok(!lines.some((l) => l.operation === 'jog_command'), 'no line per message');
    // The upgrades refused for their token (an earlier test) are counted under the same interface.
    const refusals = (await readFile(refusalsPath(path.join(dir, 'audit.jsonl')), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { interface: string; operation: string; outcome: { status: number } });
    const jogRefusals = refusals.filter((l) => l.operation === 'GET /robot/jog' && l.outcome.status === 401);
    assert.ok(jogRefusals.length > 0, 'the 401s of the jog socket are counted');
    assert.ok(jogRefusals.every((l) => l.interface === 'websocket'));
  });
});
