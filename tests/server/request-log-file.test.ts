import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from 'node:test';
import { PROJECT_ROOT, writeSettings } from '../support/settings-file.ts';

/**
 * The request log as `npm start` writes it with stdout on a file (as under a service manager):
 * one JSON line per request, complete and in order, nothing lost when SIGTERM comes while
 * requests are being answered.
 */
describe('request log on a file', { timeout: 120_000 }, () => {
  it('has one line per answered request, in order, when SIGTERM comes under load', async () => {
    const s = await writeSettings();
    const logFile = path.join(s.dir, 'stdout.log');
    const fd = openSync(logFile, 'w');
    const child = spawn(
      process.execPath,
      [path.join(PROJECT_ROOT, 'scripts', 'start.mjs'), '--settings', s.file, '--port', '0'],
      {
        cwd: PROJECT_ROOT,
        stdio: ['ignore', fd, 'pipe'],
        env: { ...process.env, ARMGATE_TOKEN: '' },
      },
    );
    closeSync(fd);
    const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    try {
      let url: string | undefined;
      const deadline = Date.now() + 60_000;
      while (url === undefined && Date.now() < deadline) {
        url = /^listening on (\S+)$/m.exec(await readFile(logFile, 'utf8'))?.[1];
        if (url === undefined) await new Promise((r) => setTimeout(r, 50));
      }
      assert.ok(url, 'listening');
      // Requests numbered by their query, sent in waves; the SIGTERM goes out while the last wave is in flight.
      const answered: number[] = [];
      let n = 0;
      const ask = async (i: number) => {
        try {
          const res = await fetch(`${url}/robot/joint_states`, { headers: { 'x-request-number': String(i) } });
          await res.arrayBuffer();
          if (res.status === 200) answered.push(i);
        } catch {
          // Refused or cut by the shutdown: such a request may or may not have a line; counted below only if answered.
        }
      };
      for (let wave = 0; wave < 20; wave++) await Promise.all(Array.from({ length: 16 }, () => ask(n++)));
      const last = Array.from({ length: 32 }, () => ask(n++));
      child.kill('SIGTERM');
      await Promise.all(last);
      assert.equal(await exited, 0);
      const lines = (await readFile(logFile, 'utf8')).split('\n').filter((l) => l.startsWith('{'));
      const requests = lines
        .map((l) => JSON.parse(l))
        .filter((r) => r.msg === 'request' && r.path === '/robot/joint_states');
      assert.ok(answered.length >= 320, `the waves before the signal were answered (${answered.length})`);
      // Every answered request has its line: the log can hold lines of requests answered while their
      // client was cut, never fewer than the answers.
      assert.ok(requests.length >= answered.length, `${requests.length} lines for ${answered.length} answers`);
      for (const r of requests) assert.equal(r.status, 200);
      const times = requests.map((r) => Date.parse(r.time));
      for (let i = 1; i < times.length; i++) assert.ok((times[i] as number) >= (times[i - 1] as number), 'in order');
      const stdout = await readFile(logFile, 'utf8');
      assert.ok(stdout.indexOf('armgate: SIGTERM, shutting down') > stdout.indexOf('listening on'));
    } finally {
      child.kill('SIGKILL');
      await s.cleanup();
    }
  });
});
