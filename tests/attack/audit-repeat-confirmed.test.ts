/**
 * An attack on the audit trail's repeats (lib/audit/quiet.ts) through MCP elicitation: a move is stamped with the
 * changes counted when it arrives, and the person may take seconds to confirm it. A move to P confirmed after another
 * client moved the arm elsewhere moves it back to P: alike the session's last move to P, which left the arm there, it
 * must still be a line of the trail (it was counted as a repeat: nothing had changed between the two calls' stamps).
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { atRest, maxDiff, positions, WORK } from '../support/live.ts';
import { mcpTransport } from '../support/mcp.ts';
import { createTestApp, type TestApp } from '../support/server.ts';

const P = [0.3, 0.3, 0, -1.3, 0, 1.3, 0];

describe('the audit trail: a confirmed move that moved the arm back is not a repeat', () => {
  let app: TestApp;
  let dir: string;
  let file: string;
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'armgate-atk4-confirmed-'));
    file = path.join(dir, 'audit.jsonl');
    app = await createTestApp({
      sim: { time_scale: 20 },
      mcp: { confirm_motion: true },
      audit: { path: file, max_bytes: 1 << 20, reads: false },
    });
  });
  after(async () => {
    await app.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('a move to P confirmed after another client moved the arm away is a line of the trail', async () => {
    // The person answers yes, at once the first time and only when the test says the second.
    let gate: Promise<void> = Promise.resolve();
    let asked: () => void = () => {};
    let questions = 0;
    const client = new Client({ name: 'atk4', version: '1' }, { capabilities: { elicitation: {} } });
    client.setRequestHandler(ElicitRequestSchema, async () => {
      questions++;
      asked();
      await gate;
      return { action: 'accept', content: { confirm: true } };
    });
    await client.connect(mcpTransport(app));
    try {
      const first = (await client.callTool({ name: 'move_to_joints', arguments: { joints: P, speed: 1 } })) as {
        isError?: boolean;
      };
      assert.ok(!first.isError, 'the first move ran');
      await atRest(app);
      assert.ok(maxDiff(await positions(app), P) < 1e-3, 'at P');
      let open: () => void = () => {};
      gate = new Promise((resolve) => {
        open = resolve;
      });
      const question = new Promise<void>((resolve) => {
        asked = resolve;
      });
      const second = client.callTool({ name: 'move_to_joints', arguments: { joints: P, speed: 1 } });
      await question;
      // While the person is asked, another client (REST) moves the arm away from P.
      const away = await app.request('/robot/move/joints', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ joints: WORK, speed: 1 }),
      });
      assert.equal(away.status, 200);
      assert.equal(((await away.json()) as { success: boolean }).success, true, 'moved away');
      await atRest(app);
      assert.ok(maxDiff(await positions(app), P) > 0.1, 'away from P');
      open();
      assert.ok(!((await second) as { isError?: boolean }).isError, 'the confirmed move ran');
      await atRest(app);
      assert.ok(maxDiff(await positions(app), P) < 1e-3, 'back at P');
      assert.equal(questions, 2);
    } finally {
      await client.close();
    }
    await app.services.audit?.flush();
    const lines = (await readFile(file, 'utf8'))
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as { operation: string; interface: string; why?: string })
      .filter((l) => l.operation === 'move_to_joints' && l.interface === 'mcp' && l.why === undefined);
    assert.equal(lines.length, 2, 'both MCP moves (each moved the arm to P) are lines of the trail');
  });
});
