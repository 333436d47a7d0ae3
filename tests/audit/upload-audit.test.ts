import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { csvForm } from '../support/multipart.ts';
import { startTestServer } from '../support/server.ts';
import { refusalsPath } from '../../lib/audit/trail.ts';

// An upload's trail line names and sizes the file as the client sent it, also when the file's bytes were handed to the
// trajectory checker's thread while the call ran (which left them empty by the time the line was written).
describe('the audit trail of an upload', () => {
  it('sizes a CSV checked on the checker thread by the bytes the client sent', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'armgate-upload-audit-'));
    const file = path.join(dir, 'audit.jsonl');
    const server = await startTestServer({ audit: { path: file } });
    // Refused by the check itself (a jump at t = 0 in row 2), so the file went through the whole check.
    const csv =
      'time_from_start,joint1,joint2,joint3,joint4,joint5,joint6,joint7\n0,0,0.5,0,-1.2,0,1.2,0\n1,0,0.5,0,-1.2,0,1.2,0.01\n';
    try {
      const answer = await fetch(`${server.url}/trajectory/send_csv`, { method: 'POST', body: csvForm(csv) });
      assert.equal(answer.status, 422, await answer.text());
    } finally {
      await server.close();
    }
    try {
      // Refused (422), it changed nothing: its line is in the refusals' file beside the trail.
      const lines = (await readFile(refusalsPath(file), 'utf8'))
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      const upload = lines.find((line) => line.operation === 'send_trajectory_csv');
      assert.ok(upload, 'the upload is on the trail');
      assert.deepEqual(upload.input.file, { file: 'points.csv', bytes: Buffer.byteLength(csv) });
      assert.equal(upload.outcome.status, 422);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
