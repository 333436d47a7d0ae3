/**
 * The audit trail under a flood of authenticated calls that change nothing (refused for their role or input, dry runs,
 * reads with audit.reads, stops repeated with nothing moving): every real motion and stop keeps its line, whatever was
 * sent, and every flooded call is still accounted for (a line of its own or a count on a summary line).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { refusalsPath } from '../../lib/audit/trail.ts';
import { mcpClient, mcpTransport } from '../support/mcp.ts';
import { trailLines } from '../support/audit.ts';
import { createTestApp, type TestApp } from '../support/server.ts';

const ADMIN = 'audit-admin-token-5d1e8b7a';
const TOKENS = { viewer: 'audit-viewer-token-0b9c2d4e', operator: 'audit-operator-token-6f7a8e1c' };
const MAX_BYTES = 16 * 1024;
const HOME = [0, 0, 0, 0, 0, 0, 0];
const WORK = [0, 0.4, 0, -1.4, 0, 1.3, 0];

type Line = Record<string, unknown> & {
  principal: string;
  operation: string;
  more_like_it?: number;
  why?: string;
  input?: Record<string, unknown>;
  outcome: { status: number; success: boolean; message?: string };
};

/** The trail's lines (tests/support/audit.ts). */
const linesOf = (file: string) => trailLines<Line>(file);

describe('the audit trail under an authenticated flood', () => {
  let app: TestApp;
  let dir: string;
  let file: string;
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'armgate-audit-authflood-'));
    file = path.join(dir, 'audit.jsonl');
    // 16 KiB a file, six kept: about 300 lines of calls in all, which the flood below outnumbers several times.
    app = await createTestApp({
      web: {
        token: ADMIN,
        tokens: [
          { name: 'viewer', token: TOKENS.viewer, role: 'read' },
          { name: 'operator', token: TOKENS.operator, role: 'operate' },
        ],
      },
      sim: { time_scale: 20 },
      audit: { path: file, max_bytes: MAX_BYTES, reads: true },
    });
  });
  after(async () => {
    await app.close();
    await rm(dir, { recursive: true, force: true });
  });

  const call = (method: string, route: string, token: string, body?: unknown) =>
    app.request(route, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const answered = async (res: Response) => {
    await res.body?.cancel();
    return res.status;
  };

  /** An operator's dry run of a motion to `joints`: it changes nothing. */
  const dryRunTo = (joints: readonly number[]) => ({
    who: 'operator',
    op: 'move_to_joints',
    status: 200,
    send: () => call('POST', '/robot/move/joints', TOKENS.operator, { joints, dry_run: true }),
  });
  const DRY_RUN = dryRunTo(WORK);
  /** Each kind of call that changes nothing, by the token that sends it, and the status it gets. */
  const floods = [
    {
      who: 'operator',
      op: 'move_to_joints',
      status: 422,
      send: () => call('POST', '/robot/move/joints', TOKENS.operator, { joints: 'x' }),
    },
    {
      who: 'viewer',
      op: 'move_to_joints',
      status: 403,
      send: () => call('POST', '/robot/move/joints', TOKENS.viewer, { joints: WORK }),
    },
    DRY_RUN,
    {
      who: 'viewer',
      op: 'get_joint_states',
      status: 200,
      send: () => call('GET', '/robot/joint_states', TOKENS.viewer),
    },
    { who: 'web.token', op: 'stop', status: 200, send: () => call('POST', '/stop', ADMIN) },
  ] as const;

  /**
   * Sends `n` of every kind (`kinds`), `batch` at a time, the kinds interleaved (several tokens at once), and checks
   * each status.
   */
  async function flood(n: number, batch = 20, kinds: readonly (typeof floods)[number][] = floods): Promise<void> {
    for (let sent = 0; sent < n; sent += batch) {
      const statuses = await Promise.all(
        kinds.flatMap((kind) => Array.from({ length: batch }, () => kind.send().then(answered))),
      );
      kinds.forEach((kind, k) => {
        const mine = statuses.slice(k * batch, (k + 1) * batch);
        assert.ok(
          mine.every((s) => s === kind.status),
          `${kind.who} ${kind.op}: ${mine.join()}`,
        );
      });
    }
  }

  it('a motion and a stop keep their lines through a flood of calls that change nothing; each flooded call is counted', async () => {
    const moved = await call('POST', '/robot/move/joints', TOKENS.operator, { joints: WORK, speed: 1 });
    assert.equal(moved.status, 200);
    assert.equal(((await moved.json()) as { success: boolean }).success, true, 'the motion ran');
    assert.equal(await answered(await call('POST', '/stop', TOKENS.operator)), 200, 'a real stop');
    await app.services.audit?.flush();
    const n = 200;
    await flood(n);
    await app.services.audit?.flush();

    const calls = await linesOf(file);
    const motion = calls.filter((l) => l.operation === 'move_to_joints' && l.principal === 'operator');
    assert.ok(
      motion.some((l) => l.outcome.status === 200 && l.input?.dry_run !== true),
      `the motion's line is kept (${calls.length} lines in the calls files, the first: ${JSON.stringify(calls[0])})`,
    );
    assert.ok(
      calls.some((l) => l.operation === 'stop' && l.principal === 'operator'),
      "the operator's stop's line is kept",
    );
    const everything = [...calls, ...(await linesOf(refusalsPath(file)))];
    for (const kind of floods) {
      const counted = everything
        .filter(
          (l) =>
            l.principal === kind.who &&
            l.operation === kind.op &&
            l.outcome.status === kind.status &&
            (kind.op !== 'move_to_joints' || kind.status !== 200 || l.input?.dry_run === true || l.why === 'dry_run'),
        )
        .reduce((sum, l) => sum + (l.more_like_it ?? 1), 0);
      assert.equal(counted, n, `${kind.who}'s ${n} ${kind.op} (${kind.status}) are each on the trail or counted`);
    }
  });

  it('a motion that runs through the flood, and ends in it, keeps its line; a later flood does not rotate it out', async () => {
    // The stops of the flood before may still be bringing the arm to rest (409 with a retry time): wait for it.
    for (let tries = 0; tries < 100; tries++) {
      const status = await answered(await call('GET', '/robot/joint_states', ADMIN));
      assert.equal(status, 200);
      const probe = await call('POST', '/robot/move/joints', TOKENS.operator, { joints: WORK, dry_run: true });
      if ((await answered(probe)) === 200) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const moving = call('POST', '/robot/move/joints', TOKENS.operator, { joints: HOME, speed: 0.2 });
    // No stop in this flood: a stop would end the motion (stop always wins).
    await flood(100, 10, floods.slice(0, 4));
    const moved = await moving;
    assert.equal(moved.status, 200);
    assert.equal(((await moved.json()) as { success: boolean }).success, true, 'the motion ran to its goal');
    // The later flood's dry runs plan to where the arm now stands (HOME): as many calls that change nothing, without
    // a collision check along a path each (~8 ms of CPU a dry run, 200 of them); the flood above planned along paths.
    const later = floods.map((kind) => (kind === DRY_RUN ? dryRunTo(HOME) : kind));
    await flood(200, 20, later);
    await app.services.audit?.flush();
    const calls = await linesOf(file);
    const motion = calls.filter(
      (l) =>
        l.operation === 'move_to_joints' &&
        l.principal === 'operator' &&
        l.outcome.status === 200 &&
        l.input?.speed === 0.2 &&
        l.input?.dry_run !== true,
    );
    assert.equal(motion.length, 1, 'the slow motion has its line');
    assert.equal(motion[0]?.outcome.success, true);
  });

  it('stops sent with arguments that differ each time, an override spelled six ways: repeats all the same', async () => {
    await app.services.audit?.flush();
    const before = (await linesOf(file)).length;
    const client = mcpClient('audit-flood');
    await client.connect(mcpTransport(app, { requestInit: { headers: { authorization: `Bearer ${TOKENS.viewer}` } } }));
    const n = 300;
    const spellings = [50, '50', '50.0', '5e1', '050', ' 50'];
    try {
      for (let i = 0; i < n; i += 30)
        await Promise.all(
          Array.from({ length: 30 }, (_, k) => client.callTool({ name: 'stop', arguments: { nonce: i + k } })),
        );
      // The same override spelled six ways (numbers are taken as strings too): one change, then repeats.
      for (let i = 0; i < 60; i++) {
        const set = await client.callTool({ name: 'set_override', arguments: { percent: spellings[i % 6] } });
        assert.ok(!set.isError, JSON.stringify(set.content));
      }
    } finally {
      await client.close();
    }
    await app.services.audit?.flush();
    const calls = await linesOf(file);
    const stops = calls.slice(before).filter((l) => l.operation === 'stop' && l.principal === 'viewer');
    assert.ok(stops.length <= 1, `${stops.length} of the ${n} stops are lines of the trail: the first, if any`);
    const counted = (await linesOf(refusalsPath(file)))
      .filter((l) => l.operation === 'stop' && l.principal === 'viewer' && l.interface === 'mcp')
      .reduce((sum, l) => sum + (l.more_like_it ?? 1), 0);
    assert.equal(stops.length + counted, n, 'each is on the trail or counted');
    const overrides = calls.slice(before).filter((l) => l.operation === 'set_override');
    assert.deepEqual(
      overrides.map((l) => l.outcome.message),
      ['override 100 % -> 50 %', 'override 50 % -> 50 %'],
      'the change, and the first call that changed nothing (the next ones are its repeats)',
    );
  });

  it('a motion to where the arm is, again and again, and dry runs asked for as "true": one line, the rest counted', async () => {
    await app.services.audit?.flush();
    const before = (await linesOf(file)).length;
    const client = mcpClient('audit-flood');
    await client.connect(
      mcpTransport(app, { requestInit: { headers: { authorization: `Bearer ${TOKENS.operator}` } } }),
    );
    const n = 60;
    try {
      for (let i = 0; i < n; i++) {
        const moved = await call('POST', '/robot/move/joints', TOKENS.operator, { joints: HOME, speed: 1 });
        assert.equal(moved.status, 200);
        assert.equal(((await moved.json()) as { success: boolean }).success, true);
        const planned = await client.callTool({ name: 'move_to_joints', arguments: { joints: WORK, dry_run: 'true' } });
        assert.ok(!planned.isError, JSON.stringify(planned.content));
      }
    } finally {
      await client.close();
    }
    await app.services.audit?.flush();
    const calls = (await linesOf(file)).slice(before).filter((l) => l.operation === 'move_to_joints');
    assert.deepEqual(
      calls.map((l) => [l.interface, l.outcome.message]),
      [['rest', 'already at the goal']],
      'the first motion to where the arm is; no dry run',
    );
    const quiet = (await linesOf(refusalsPath(file))).filter(
      (l) =>
        l.operation === 'move_to_joints' && l.principal === 'operator' && (l.why === 'repeat' || l.why === 'dry_run'),
    );
    const count = (why: string, face: string) =>
      quiet.filter((l) => l.why === why && l.interface === face).reduce((sum, l) => sum + (l.more_like_it ?? 1), 0);
    assert.deepEqual([count('repeat', 'rest'), count('dry_run', 'mcp')], [n - 1, n], 'the others are counted');
  });

  it('an override set back and forth, by one token or two, is a change each time: each on the trail', async () => {
    await app.services.audit?.flush();
    const before = (await linesOf(file)).length;
    const set = async (token: string, percent: number) =>
      assert.equal(await answered(await call('PUT', '/robot/override', token, { percent })), 200);
    for (const percent of [40, 60, 40, 60]) await set(TOKENS.operator, percent);
    await set(ADMIN, 40);
    await set(TOKENS.operator, 60);
    await app.services.audit?.flush();
    const overrides = (await linesOf(file)).slice(before).filter((l) => l.operation === 'set_override');
    assert.deepEqual(
      overrides.map((l) => [l.principal, l.outcome.message]),
      [
        ['operator', 'override 50 % -> 40 %'],
        ['operator', 'override 40 % -> 60 %'],
        ['operator', 'override 60 % -> 40 %'],
        ['operator', 'override 40 % -> 60 %'],
        ['web.token', 'override 60 % -> 40 %'],
        ['operator', 'override 40 % -> 60 %'],
      ],
    );
  });

  it('a jog command sent again and again keeps the jog going: the jog, its command and its end are lines, the rest counted', async () => {
    await app.services.audit?.flush();
    const before = (await linesOf(file)).length;
    const beforeQuiet = (await linesOf(refusalsPath(file))).length;
    const n = 300;
    const command = { joints: [0, 0, 0, 0, 0, 0.01, 0], ttl_ms: 500 };
    for (let i = 0; i < n; i++) {
      const jogged = await call('POST', '/robot/jog', TOKENS.operator, command);
      assert.equal(jogged.status, 200);
      assert.equal(((await jogged.json()) as { jogging: boolean }).jogging, true);
    }
    assert.equal(await answered(await call('POST', '/stop', TOKENS.operator)), 200);
    await app.services.audit?.flush();
    const calls = (await linesOf(file)).slice(before);
    assert.deepEqual(
      calls.map((l) => [l.operation, l.outcome.message?.replace(/:.*/, '')]),
      [
        ['jog', 'jog started over rest'],
        ['jog_command', 'jogging joint6 +0.01'],
        ['jog', 'jog ended'],
        ['stop', 'no sequence was running; hold point published; planner stopped'],
      ],
    );
    const again = (await linesOf(refusalsPath(file)))
      .slice(beforeQuiet)
      .filter((l) => l.operation === 'jog_command' && l.why === 'repeat');
    assert.equal(
      again.reduce((sum, l) => sum + (l.more_like_it ?? 1), 0),
      n - 1,
      'the others are counted',
    );
  });

  it('a jog command changed a little each time, hundreds a second: 50 lines a second of the token at most, the rest counted; the jog and the stop in full', async () => {
    await app.services.audit?.flush();
    const before = (await linesOf(file)).length;
    const n = 300;
    const started = performance.now();
    for (let i = 0; i < n; i++) {
      const command = { joints: [0, 0, 0, 0, 0, 0.01 + i * 1e-6, 0], ttl_ms: 500 };
      const jogged = await call('POST', '/robot/jog', TOKENS.operator, command);
      assert.equal(jogged.status, 200);
      await jogged.body?.cancel();
    }
    const seconds = (performance.now() - started) / 1000;
    assert.equal(await answered(await call('POST', '/stop', TOKENS.operator)), 200);
    await app.services.audit?.flush();
    const lines = (await linesOf(file)).slice(before);
    // Counting is for the adjustments: the jog's start and end, and the stop, are lines in full whatever came before.
    assert.deepEqual(
      lines
        .filter((l) => l.operation !== 'jog_command')
        .map((l) => [l.operation, l.more_like_it, l.outcome.message?.replace(/:.*/, '')]),
      [
        ['jog', undefined, 'jog started over rest'],
        ['jog', undefined, 'jog ended'],
        ['stop', undefined, 'no sequence was running; hold point published; planner stopped'],
      ],
    );
    const commands = lines.filter((l) => l.operation === 'jog_command');
    const full = commands.filter((l) => l.more_like_it === undefined).length;
    assert.ok(full <= 51 * (Math.ceil(seconds) + 1), `${full} lines in ${seconds.toFixed(2)} s`);
    assert.equal(
      commands.reduce((sum, l) => sum + (l.more_like_it ?? 1), 0),
      n,
      'each on the trail or counted there',
    );
  });

  it("past a caller's 50 adjustment lines of a window, its stop and its motion are still lines in full", async () => {
    await app.services.audit?.flush(); // a window of its own from the first override on
    const before = (await linesOf(file)).length;
    const n = 60;
    for (let i = 0; i < n; i++) {
      const res = await call('PUT', '/robot/override', TOKENS.operator, { percent: i % 2 === 0 ? 40 : 60 });
      assert.equal(await answered(res), 200);
    }
    assert.equal(await answered(await call('POST', '/stop', TOKENS.operator)), 200);
    const moved = await call('POST', '/robot/move/joints', TOKENS.operator, { joints: WORK, speed: 1 });
    assert.equal(await answered(moved), 200);
    await app.services.audit?.flush();
    const lines = (await linesOf(file)).slice(before);
    assert.deepEqual(
      lines.filter((l) => l.operation !== 'set_override').map((l) => [l.operation, l.principal, l.why, l.more_like_it]),
      [
        ['stop', 'operator', undefined, undefined],
        ['move_to_joints', 'operator', undefined, undefined],
      ],
    );
    const overrides = lines.filter((l) => l.operation === 'set_override');
    assert.equal(
      overrides.reduce((sum, l) => sum + (l.more_like_it ?? 1), 0),
      n,
      'each override on the trail or counted there',
    );
  });

  it('stops from three tokens at once, again and again, while a motion runs: the motion and the stop after it began are lines', async () => {
    // A stop at rest from each token first: the stops during the motion are alike those.
    for (const token of [ADMIN, TOKENS.viewer, TOKENS.operator])
      assert.equal(await answered(await call('POST', '/stop', token)), 200);
    await app.services.audit?.flush();
    const before = (await linesOf(file)).length;
    const positions = async () => {
      const res = await call('GET', '/robot/joint_states', ADMIN);
      return ((await res.json()) as { position: number[] }).position;
    };
    // The stops above may still be bringing the arm to rest (409 with a retry time): wait for it.
    for (let tries = 0; tries < 100; tries++) {
      const probe = await call('POST', '/robot/move/joints', TOKENS.operator, { joints: WORK, dry_run: true });
      if ((await answered(probe)) === 200) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const from = await positions();
    const far = (q: number[]) => q.reduce((sum, x, i) => sum + Math.abs(x - (from[i] ?? 0)), 0);
    const target = far(WORK) > far(HOME) ? WORK : HOME;
    const moving = call('POST', '/robot/move/joints', TOKENS.operator, { joints: target, speed: 0.05 });
    // Until the arm moves.
    for (let tries = 0; tries < 200 && far(await positions()) < 1e-3; tries++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    assert.ok(far(await positions()) >= 1e-3, 'the motion runs');
    const stops = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        call('POST', '/stop', [ADMIN, TOKENS.viewer, TOKENS.operator][i % 3] as string),
      ),
    );
    assert.ok(stops.every((res) => res.status === 200));
    await Promise.all(stops.map((res) => res.body?.cancel()));
    const answer = await moving;
    assert.equal(answer.status, 200);
    const moved = (await answer.json()) as { success: boolean; message: string };
    assert.equal(moved.success, false, `the motion was stopped: ${moved.message}`);
    await app.services.audit?.flush();
    const calls = (await linesOf(file)).slice(before);
    assert.ok(
      calls.some((l) => l.operation === 'move_to_joints' && l.outcome.success === false && l.input?.speed === 0.05),
      "the stopped motion's line",
    );
    const stopLines = calls.filter((l) => l.operation === 'stop');
    assert.ok(stopLines.length >= 1, 'the stop that stopped it is a line');
    assert.ok(
      stopLines.length <= 3,
      `${stopLines.length} stop lines: at most the first of each token after the motion began`,
    );
  });
});
