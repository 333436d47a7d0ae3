import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Request as PonyfillRequest } from '@whatwg-node/fetch';
import { operation as moveJoints } from '../../handlers/robot/move-joints.ts';
import { AuditTrail, REFUSAL_WINDOW_MS, refusalsPath } from '../../lib/audit/trail.ts';
import { QUEUE_MAX_BYTES } from '../../lib/audit/line-file.ts';
import { trailLines } from '../support/audit.ts';
import { createTestApp, type TestApp } from '../support/server.ts';

const TOKEN = 'audit-flood-token-7f3a9c';
const ORIGIN = 'http://127.0.0.1:8007';
const MAX_BYTES = 256 * 1024;

type Line = Record<string, unknown> & { outcome: { status: number; message?: string } };

/** The trail's lines (tests/support/audit.ts). */
const linesOf = (file: string) => trailLines<Line>(file);

describe('the audit trail under a flood of unauthenticated requests', () => {
  let app: TestApp;
  let dir: string;
  let file: string;
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'armgate-audit-flood-'));
    file = path.join(dir, 'audit.jsonl');
    // 256 KiB a file, six kept: the 20,000 refusals as lines (~5 MB, as before the summary) would rotate the first real
    // record out; their summary lines (a few a second) fit however long the flood takes on a loaded machine.
    app = await createTestApp({ web: { token: TOKEN }, audit: { path: file, max_bytes: MAX_BYTES } });
  });
  after(async () => {
    await app.close();
    await rm(dir, { recursive: true, force: true });
  });

  /**
   * An unauthenticated POST from `address` (no token, or a wrong one), through the app as the listener hands it: the
   * Request of @whatwg-node/fetch its adapter makes of a request with a body (the platform's made a stream of each body,
   * a third of this test's CPU over 20,000 of them).
   */
  const refused = (address: string, wrong: boolean) =>
    app.fetch(
      new PonyfillRequest(`${ORIGIN}/robot/move/named`, {
        method: 'POST',
        headers: {
          host: '127.0.0.1:8007',
          'content-type': 'application/json',
          ...(wrong ? { authorization: 'Bearer not-the-token' } : {}),
        },
        body: '{"name":"home"}',
      }) as Request,
      address,
    );
  const stop = () =>
    app.fetch(
      new Request(`${ORIGIN}/stop`, {
        method: 'POST',
        headers: { host: '127.0.0.1:8007', authorization: `Bearer ${TOKEN}` },
      }),
      '192.0.2.1',
    );
  // A second real call that changes something (a second stop with nothing moved since would be a repeat, counted in
  // the refusals' file: tests/audit/authenticated-flood.test.ts).
  const override = () =>
    app.fetch(
      new Request(`${ORIGIN}/robot/override`, {
        method: 'PUT',
        headers: { host: '127.0.0.1:8007', authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: '{"percent":90}',
      }),
      '192.0.2.1',
    );

  it('a real call reaches the file within 1 s during the flood; refusals are counted per address and reason; noise rotates out no real record', async () => {
    assert.equal((await stop()).status, 200, 'a first real call');
    await app.services.audit?.flush();
    const started = performance.now();
    let sent = 0;
    let flooding = true;
    let queuedMax = 0;
    const statuses = new Map<number, number>();
    const flood = (async () => {
      while (flooding) {
        const batch = [];
        for (let i = 0; i < 200; i++) batch.push(refused(`198.51.100.${i % 3}`, i % 2 === 0));
        sent += batch.length;
        for (const res of await Promise.all(batch)) statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        queuedMax = Math.max(queuedMax, app.services.audit?.queuedBytes ?? 0);
      }
    })();
    while (sent < 5000) await new Promise((resolve) => setTimeout(resolve, 10));
    const answered = await override();
    assert.equal(answered.status, 200);
    const answeredAt = performance.now();
    let reachedMs: number | undefined;
    while (reachedMs === undefined && performance.now() - answeredAt < 10_000) {
      const calls = (await linesOf(file)).filter((l) => l.operation === 'stop' || l.operation === 'set_override');
      if (calls.length === 2) reachedMs = performance.now() - answeredAt;
      else await new Promise((resolve) => setTimeout(resolve, 10));
    }
    while (sent < 20_000) await new Promise((resolve) => setTimeout(resolve, 10));
    flooding = false;
    await flood;
    const seconds = (performance.now() - started) / 1000;
    await app.services.audit?.flush();
    assert.ok(reachedMs !== undefined && reachedMs < 1000, `the real call's line reached the file in ${reachedMs} ms`);

    const calls = await linesOf(file);
    assert.deepEqual(
      calls.map((l) => l.operation),
      ['stop', 'set_override'],
      'the calls file holds the real calls, the first one too: no refusal rotated it out',
    );
    const refusals = await linesOf(refusalsPath(file));
    assert.ok(
      refusals.length * 400 < MAX_BYTES,
      `${refusals.length} summary lines, none rotated out (the count below sees them all)`,
    );
    const counted = refusals.reduce((sum, l) => sum + (l.count as number), 0);
    assert.equal(counted, sent, 'every refused request is counted');
    assert.equal((statuses.get(401) ?? 0) + (statuses.get(429) ?? 0), sent, 'each was refused');
    // Three addresses; reasons: no token, a wrong token, too many wrong ones: at most 9 lines per window.
    const windows = Math.ceil((seconds * 1000) / REFUSAL_WINDOW_MS) + 2;
    assert.ok(
      refusals.length <= 9 * windows,
      `${refusals.length} lines for ${sent} refusals in ${seconds.toFixed(1)} s`,
    );
    const line = refusals.find((l) => l.address === '198.51.100.1');
    assert.equal(line?.principal, 'anonymous');
    assert.equal(line?.operation, 'POST /robot/move/named');
    assert.equal(line?.outcome.status, 401);
    assert.ok(queuedMax <= 2 * QUEUE_MAX_BYTES, `queued at most ${queuedMax} bytes`);
  });
});

describe('the audit queue is bounded', () => {
  it('lines beyond the queue are dropped and counted by a line in the file, not kept in memory', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'armgate-audit-bound-'));
    try {
      const file = path.join(dir, 'audit.jsonl');
      const trail = new AuditTrail({ path: file, maxBytes: 1024 * 1024 * 1024, reads: false });
      const n = 60_000;
      // 1,500 callers: 40 lines each, within a caller's 50 effect lines a second written in full (EFFECT_LINES_MAX).
      const caller = (i: number) => ({ name: `operator-${i % 1500}`, role: 'operate', face: 'rest' }) as const;
      let queuedMax = 0;
      // All recorded in one turn of the event loop: the writer cannot write any of them meanwhile.
      for (let i = 0; i < n; i++) {
        trail.record(
          moveJoints,
          caller(i),
          performance.now(),
          { joints: [i, 0, 0, 0, 0, 0, 0] },
          { status: 200, success: true },
        );
        queuedMax = Math.max(queuedMax, trail.queuedBytes);
      }
      assert.ok(queuedMax <= QUEUE_MAX_BYTES, `queued ${queuedMax} bytes at most`);
      await trail.close();
      const lines = (await readFile(file, 'utf8'))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Line);
      const dropped = lines.filter((l) => l.operation === 'audit_lines_dropped');
      const kept = lines.filter((l) => l.operation === 'move_to_joints');
      assert.equal(dropped.length, 1, 'one line says how many were dropped');
      assert.ok(kept.length > 1000 && kept.length < n, `${kept.length} kept`);
      assert.equal(kept.length + (dropped[0]?.dropped as number), n, 'kept and dropped add up to every call');
      assert.deepEqual(
        kept.slice(0, 3).map((l) => (l.input as { joints: number[] }).joints[0]),
        [0, 1, 2],
        'the first ones are kept, in order',
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
