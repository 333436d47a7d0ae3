import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { operation as sendCsv } from '../../handlers/trajectory/send-csv.ts';
import { operation as sendTrajectory } from '../../handlers/trajectory/send.ts';
import { operation as startSequence } from '../../handlers/sequences/start.ts';
import { operation as moveJoints } from '../../handlers/robot/move-joints.ts';
import { operation as jointStates } from '../../handlers/robot/joint-states.ts';
import { AuditTrail, ROTATED_KEPT, refusalsPath, summarizeInput } from '../../lib/audit/trail.ts';
import { outcomeOf } from '../../lib/core/audit.ts';
import type { Caller } from '../../lib/core/roles.ts';
import { err, ok } from '../../lib/result.ts';

const CALLER: Caller = { name: 'operator', role: 'operate', face: 'rest' };

describe('audit trail', () => {
  it('summarizes inputs without file contents: an upload by name and size, a sequence file by its keys', () => {
    const csv = new TextEncoder().encode('t,joint1\n1,0.5\n');
    assert.deepEqual(
      summarizeInput(sendCsv, { file: { filename: 'points.csv', bytes: csv }, separator: ',' }),
      { file: { file: 'points.csv', bytes: csv.byteLength }, separator: ',' },
      'the upload is named and sized',
    );
    const config = { home: { joints: [0, 0, 0, 0, 0, 0, 0] }, waypoints: [{ joints: [1, 2, 3, 4, 5, 6, 7] }] };
    const seq = summarizeInput(startSequence, { config, n_iterations: 2 }) as Record<string, unknown>;
    assert.deepEqual(seq.config, {
      json_file: true,
      keys: ['home', 'waypoints'],
      chars: JSON.stringify(config).length,
    });
    assert.equal(seq.n_iterations, 2, 'numbers are kept');
    const body = '{"points":[{"positions":[0],"time_from_start":1}]}';
    assert.deepEqual(
      summarizeInput(sendTrajectory, { text: body }),
      { body_chars: body.length, points: 1 },
      'a raw trajectory body by size and point count',
    );
    const big = summarizeInput(moveJoints, { joints: new Array(1000).fill(0.5), note: 'x'.repeat(500) }) as {
      joints: unknown[];
      note: string;
    };
    assert.equal(big.joints.length, 9, 'arrays are cut to 8 items and a count');
    assert.ok(big.note.length < 80, 'long strings are cut');
  });

  it('says the outcome: an error by status and text, a result by success and message', () => {
    assert.deepEqual(outcomeOf(err({ kind: 'forbidden', detail: 'needs operate' }), 'mcp'), {
      status: 403,
      tool_error: true,
      success: false,
      message: 'needs operate',
    });
    assert.deepEqual(outcomeOf(ok({ success: false, message: 'stopped' }), 'rest'), {
      status: 200,
      success: false,
      message: 'stopped',
    });
  });

  it('appends flushed JSON lines and rotates at max_bytes, keeping five older files', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'armgate-audit-'));
    try {
      const file = path.join(dir, 'audit.jsonl');
      const trail = new AuditTrail({ path: file, maxBytes: 4096, reads: false });
      for (let i = 0; i < 200; i++) {
        // A second's window ends every 40 lines: one caller's effects are written in full up to 50 a window.
        if (i % 40 === 0) await trail.flush();
        trail.record(
          moveJoints,
          CALLER,
          performance.now(),
          { joints: [i, 0, 0, 0, 0, 0, 0] },
          {
            status: 200,
            success: true,
            message: 'motion finished at the goal',
          },
        );
      }
      trail.record(jointStates, CALLER, performance.now(), {}, { status: 200, success: true });
      await trail.close();
      const files = (await readdir(dir)).sort();
      assert.deepEqual(
        files,
        ['audit.jsonl', ...Array.from({ length: ROTATED_KEPT }, (_, k) => `audit.jsonl.${k + 1}`)],
        'the current file and five rotated ones',
      );
      for (const name of files) {
        const text = await readFile(path.join(dir, name), 'utf8');
        assert.ok(Buffer.byteLength(text) <= 4096, `${name} stays within max_bytes`);
        for (const line of text.trim().split('\n')) {
          const record = JSON.parse(line) as { principal: string; operation: string };
          assert.equal(record.principal, 'operator', 'each line is whole JSON with the principal');
          assert.notEqual(record.operation, 'get_joint_states', 'reads are not audited without audit.reads');
        }
      }
      const last = (await readFile(file, 'utf8')).trim().split('\n').at(-1) ?? '';
      assert.deepEqual((JSON.parse(last) as { input: { joints: number[] } }).input.joints[0], 199, 'in order');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('counts the lines of a group it could not write: the next group begins with how many were lost', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'armgate-audit-failed-'));
    try {
      // Its folder missing: every write fails until it is made (a disk full, a volume gone, as far as the writer knows).
      const file = path.join(dir, 'gone', 'audit.jsonl');
      const trail = new AuditTrail({ path: file, maxBytes: 1 << 20, reads: false });
      const motion = (i: number) =>
        trail.record(
          moveJoints,
          CALLER,
          performance.now(),
          { joints: [i, 0, 0, 0, 0, 0, 0] },
          { status: 200, success: true, message: 'motion finished at the goal' },
        );
      for (let i = 0; i < 3; i++) motion(i);
      await trail.flush();
      await mkdir(path.dirname(file));
      motion(3);
      await trail.close();
      const lines = (await readFile(file, 'utf8'))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { operation: string; dropped?: number; input?: { joints: number[] } });
      assert.deepEqual(
        lines.map((l) => [l.operation, l.dropped ?? l.input?.joints[0]]),
        [
          ['audit_lines_dropped', 3],
          ['move_to_joints', 3],
        ],
        'the three lines lost are counted on the first line written',
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("one caller's calls of many kinds that changed nothing leave another caller's own group: its name is kept", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'armgate-audit-groups-'));
    try {
      const file = path.join(dir, 'audit.jsonl');
      const trail = new AuditTrail({ path: file, maxBytes: 1 << 20, reads: false });
      const refused = { status: 422, success: false, message: 'invalid' };
      // 300 kinds of refused calls from one token in one window: more groups than counted apart.
      for (let i = 0; i < 300; i++)
        trail.record({ name: `op_${i}`, effect: 'write' }, CALLER, performance.now(), {}, refused);
      const other: Caller = { name: 'viewer', role: 'read', face: 'rest' };
      trail.record(
        moveJoints,
        other,
        performance.now(),
        { joints: [0, 0, 0, 0, 0, 0, 0] },
        {
          status: 403,
          success: false,
          message: 'needs operate',
        },
      );
      await trail.close();
      const lines = (await readFile(refusalsPath(file), 'utf8'))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { principal: string; operation: string; more_like_it?: number });
      assert.ok(
        lines.some((l) => l.principal === 'viewer' && l.operation === 'move_to_joints'),
        "the viewer's refused move is a line of its own, under its name",
      );
      const counted = (who: string) =>
        lines.filter((l) => l.principal === who).reduce((sum, l) => sum + (l.more_like_it ?? 1), 0);
      assert.equal(counted('operator'), 300, "each of the operator's calls is a line or counted under its name");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a taught position saved again while another caller deleted it is a line: it made the position again', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'armgate-audit-resaved-'));
    try {
      const file = path.join(dir, 'audit.jsonl');
      const trail = new AuditTrail({ path: file, maxBytes: 1 << 20, reads: false });
      const save = { name: 'save_position', effect: 'write', idempotent: true, input: {} } as const;
      const remove = { name: 'delete_position', effect: 'write', idempotent: true, input: {} } as const;
      const saved = { status: 200, success: true, message: "saved 'spot'" };
      const input = { name: 'spot', joints: { joint1: 0.3 } };
      trail.record(save, CALLER, performance.now(), trail.before(save, input, input), saved);
      // The same save again: stamped as it begins; the position is deleted by another caller before it is written.
      const again = trail.before(save, input, input);
      const other: Caller = { name: 'admin', role: 'admin', face: 'mcp' };
      trail.record(remove, other, performance.now(), { name: 'spot' }, { status: 200, success: true });
      trail.record(save, CALLER, performance.now(), again, saved);
      await trail.close();
      const lines = (await readFile(file, 'utf8'))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { operation: string; why?: string });
      assert.deepEqual(
        lines.map((l) => [l.operation, l.why]),
        [
          ['save_position', undefined],
          ['delete_position', undefined],
          ['save_position', undefined],
        ],
        'both saves are lines of the trail',
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a call during which the arm was taken is a line, but a move to a target taking it itself, once', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'armgate-audit-took-'));
    try {
      const file = path.join(dir, 'audit.jsonl');
      // The arbiter's count of leases given (lib/control/arbiter.ts), stepped by hand.
      let leases = 0;
      const trail = new AuditTrail({ path: file, maxBytes: 1 << 20, reads: false }, () => leases);
      const save = { name: 'save_position', effect: 'write', idempotent: true, input: {} } as const;
      const saved = { status: 200, success: true, message: "saved 'spot'" };
      const input = { name: 'spot' };
      const reached = { status: 200, success: true, message: 'motion finished at the goal' };
      const target = { joints: [0.3, 0, 0, -1.2, 0, 1, 0] };
      // Saved where the arm stands, then again while another client took the arm (where did the arm stand?).
      trail.record(save, CALLER, performance.now(), trail.before(save, input, input), saved);
      const again = trail.before(save, input, input);
      leases++;
      trail.record(save, CALLER, performance.now(), again, saved);
      // A move to a target, then the same again taking the arm itself (a repeat: at the goal), then the same again
      // while another client took the arm first (its person asked, say) and this one after it: two leases, a line.
      const move = (took: number) => {
        const stamp = trail.before(moveJoints, target, target);
        leases += took;
        trail.record(moveJoints, CALLER, performance.now(), stamp, reached);
      };
      move(1);
      move(1);
      move(2);
      await trail.close();
      const why = async (at: string) =>
        (await readFile(at, 'utf8'))
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as { operation: string; why?: string })
          .map((l) => [l.operation, l.why]);
      assert.deepEqual(await why(file), [
        ['save_position', undefined],
        ['save_position', undefined],
        ['move_to_joints', undefined],
        ['move_to_joints', undefined],
      ]);
      assert.deepEqual(await why(refusalsPath(file)), [['move_to_joints', 'repeat']], 'the move at its goal again');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("two alike calls of a caller at once: the one that ends after the other's line, nothing between, is a repeat", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'armgate-audit-at-once-'));
    try {
      const file = path.join(dir, 'audit.jsonl');
      const trail = new AuditTrail({ path: file, maxBytes: 1 << 20, reads: false });
      const save = { name: 'save_position', effect: 'write', idempotent: true, input: {} } as const;
      const saved = { status: 200, success: true, message: "saved 'spot'" };
      const input = { name: 'spot', joints: { joint1: 0.3 } };
      // Both begin, then both end: the second wrote what the first had written.
      const first = trail.before(save, input, input);
      const second = trail.before(save, input, input);
      trail.record(save, CALLER, performance.now(), first, saved);
      trail.record(save, CALLER, performance.now(), second, saved);
      // Again at once, another caller's delete ending between them: the second made the position again.
      const third = trail.before(save, input, input);
      const fourth = trail.before(save, input, input);
      trail.record(save, CALLER, performance.now(), third, saved);
      const other: Caller = { name: 'admin', role: 'admin', face: 'mcp' };
      trail.record(
        { name: 'delete_position', effect: 'write', input: {} },
        other,
        performance.now(),
        { name: 'spot' },
        {
          status: 200,
          success: true,
        },
      );
      trail.record(save, CALLER, performance.now(), fourth, saved);
      await trail.close();
      const why = async (at: string) =>
        (await readFile(at, 'utf8'))
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as { operation: string; why?: string; more_like_it?: number })
          .map((l) => [l.operation, l.why, l.more_like_it]);
      assert.deepEqual(await why(file), [
        ['save_position', undefined, undefined],
        ['delete_position', undefined, undefined],
        ['save_position', undefined, undefined],
      ]);
      // The second in full, the third counted on the window's line.
      assert.deepEqual(await why(refusalsPath(file)), [
        ['save_position', 'repeat', undefined],
        ['save_position', 'repeat', 1],
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
