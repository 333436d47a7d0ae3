/**
 * The audit trail after a crash: a process killed in the middle of a write leaves a file ending in part of a line; the
 * next start cuts it back to its last whole line and says so, so every line of the trail parses, and the motion's line
 * written before the crash is still there.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { refusalsPath } from '../../lib/audit/trail.ts';
import { nodeEntry } from '../support/node-entry.ts';
import { trailLines } from '../support/audit.ts';
import { createTestApp } from '../support/server.ts';

const TOKEN = 'audit-crash-token-3c9e1f7b';

type Line = Record<string, unknown> & { operation: string; principal: string; bytes?: number };

/** The trail's lines (tests/support/audit.ts), each file ending with a whole line. */
const linesOf = (file: string) => trailLines<Line>(file, true);

/** Starts armgate with its trail at `file`, makes a stop and a refused call, and closes it. */
async function restart(file: string): Promise<void> {
  const app = await createTestApp({ web: { token: TOKEN }, audit: { path: file, max_bytes: 1024 * 1024 } });
  try {
    const auth = { authorization: `Bearer ${TOKEN}` };
    assert.equal((await app.request('/stop', { method: 'POST', headers: auth })).status, 200);
    const refused = await app.request('/robot/move/joints', {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: '{"joints":"x"}',
    });
    assert.equal(refused.status, 422);
    await app.services.audit?.flush();
  } finally {
    await app.close();
  }
}

describe('the audit trail after a crash', () => {
  it('a file ending in part of a line is cut back to its last whole line at the next start, with a line saying so', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'armgate-audit-torn-'));
    try {
      const file = path.join(dir, 'audit.jsonl');
      const whole = `${JSON.stringify({ time: '2026-11-28T10:00:00.000Z', principal: 'operator', operation: 'move_to_joints' })}\n`;
      const part = '{"time":"2026-11-28T10:00:01.000Z","principal":"oper';
      await writeFile(file, whole + part);
      await writeFile(refusalsPath(file), part);
      await restart(file);
      const calls = await linesOf(file);
      assert.deepEqual(
        calls.map((l) => [l.operation, l.bytes]),
        [
          ['move_to_joints', undefined],
          ['audit_line_cut', part.length],
          ['stop', undefined],
        ],
      );
      const refusals = await linesOf(refusalsPath(file));
      assert.deepEqual(
        refusals.map((l) => [l.operation, l.bytes]),
        [
          ['audit_line_cut', part.length],
          ['move_to_joints', undefined],
        ],
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a file ending in a whole line but its newline keeps that line (the record is whole): only its newline is added', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'armgate-audit-unended-'));
    try {
      const file = path.join(dir, 'audit.jsonl');
      const line = (time: string) =>
        JSON.stringify({ time, principal: 'operator', operation: 'move_to_joints', outcome: { status: 200 } });
      await writeFile(file, `${line('2026-11-28T10:00:00.000Z')}\n${line('2026-11-28T10:00:01.000Z')}`);
      await restart(file);
      const calls = await linesOf(file);
      assert.deepEqual(
        calls.map((l) => [l.operation, l.time]),
        [
          ['move_to_joints', '2026-11-28T10:00:00.000Z'],
          ['move_to_joints', '2026-11-28T10:00:01.000Z'],
          ['stop', calls[2]?.time],
        ],
        'the motion written whole before the crash is kept, the next line after it',
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a writer SIGKILLed in the middle of a flood across rotations: every line parses after the next start, the motion is kept', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'armgate-audit-kill-'));
    try {
      const file = path.join(dir, 'audit.jsonl');
      const entry = nodeEntry(path.join(import.meta.dirname, '../support/audit-writer-child.ts'));
      const child = spawn(process.execPath, [...entry.execArgv, entry.file, file], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      const exited = new Promise<unknown>((resolve) => child.once('exit', resolve));
      let out = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
      });
      try {
        while (!out.includes('recorded') && child.exitCode === null) await new Promise((r) => setTimeout(r, 10));
        assert.match(out, /recorded/);
        // Until the calls file has rotated at least once: the kill falls in the middle of the flood.
        for (let i = 0; i < 1000; i++) {
          if ((await readFile(`${file}.1`).catch(() => undefined)) !== undefined) break;
          await new Promise((r) => setTimeout(r, 5));
        }
        child.kill('SIGKILL');
        await exited;
      } finally {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
        await exited;
      }
      assert.equal(child.signalCode, 'SIGKILL', 'the writer was killed, not finished');
      await restart(file);
      const calls = await linesOf(file);
      assert.equal(calls[0]?.operation, 'move_to_joints', "the motion's line is the oldest, kept");
      assert.ok(
        calls.filter((l) => l.operation === 'save_position').length > 100,
        'the flood reached the calls file (it rotated)',
      );
      assert.equal(calls.at(-1)?.operation, 'stop', 'the next start writes after it');
      await linesOf(refusalsPath(file));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
