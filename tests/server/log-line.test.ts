import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { PROJECT_ROOT } from '../support/settings-file.ts';

const LINE_MODULE = path.join(PROJECT_ROOT, 'lib', 'logs', 'line.ts');

/**
 * Runs `body` (a module's code; `logLine` and `flushLogLines` imported) in a child whose stdout is a pipe read here, and
 * returns what it wrote. The body ends the child itself; SIGKILL skips the 'exit' flush, so what was written before it
 * is what the writer had written by then.
 */
async function childOutput(body: string): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'armgate-log-line-'));
  const file = path.join(dir, 'child.mts');
  await writeFile(
    file,
    `import { logLine, logRequestLine, flushLogLines } from ${JSON.stringify(LINE_MODULE)};\nvoid flushLogLines;\nvoid logRequestLine;\n${body}\n`,
  );
  try {
    const child = spawn(process.execPath, ['--import', 'tsx', file], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
    });
    await new Promise((resolve) => child.once('close', resolve));
    return out;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const jsonLines = (text: string) =>
  text
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('the log writer (lib/logs/line.ts)', { timeout: 60_000 }, () => {
  it('writes info lines within its flush delay, in order, each a JSON object led by its time', async () => {
    const out = await childOutput(`
      for (let i = 0; i < 5; i++) logLine({ level: 'info', msg: 'request', n: i, path: '/a"b' });
      setTimeout(() => process.kill(process.pid, 'SIGKILL'), 200);
    `);
    const lines = jsonLines(out);
    assert.deepEqual(
      lines.map((l) => l.n),
      [0, 1, 2, 3, 4],
    );
    for (const line of lines) {
      assert.equal(Object.keys(line)[0], 'time');
      assert.ok(!Number.isNaN(Date.parse(line.time as string)));
      assert.equal(line.path, '/a"b');
    }
  });

  it("writes a request's line exactly as logLine writes the same fields, whatever its path and figures", async () => {
    const cases = [
      ['GET', '/robot/joint_states', 200, 0.05],
      ['POST', '/a"b\\\\c', 422, 0],
      ['GET', '/\u00e9\u2028\u0001\ud800', 404, 1234.56],
      ['DELETE', '', 405, 1e-7],
      ['GET', '/x', 500, Number.NaN],
    ];
    const out = await childOutput(`
      for (const [method, path, status, ms] of ${JSON.stringify(cases).replace('null', 'Number.NaN')}) {
        logLine({ level: 'info', msg: 'request', method, path, status, ms });
        logRequestLine(method, path, status, ms);
      }
      flushLogLines();
      process.exit(0);
    `);
    const lines = out.split('\n').filter((l) => l.startsWith('{'));
    assert.equal(lines.length, 2 * cases.length);
    const afterTime = (line: string) => line.replace(/^\{"time":"[^"]+",/, '');
    for (let i = 0; i < cases.length; i++) {
      assert.equal(afterTime(lines[2 * i + 1] ?? ''), afterTime(lines[2 * i] ?? ''), JSON.stringify(cases[i]));
      assert.equal((JSON.parse(lines[2 * i + 1] ?? '') as { path: string }).path, cases[i]?.[1]);
    }
  });

  it('holds info lines for a moment but writes a warning or an error at once, after the lines before it', async () => {
    const out = await childOutput(`
      logLine({ level: 'info', msg: 'first' });
      logLine({ level: 'error', msg: 'second' });
      logLine({ level: 'info', msg: 'third' });
      process.kill(process.pid, 'SIGKILL');
    `);
    // SIGKILL came synchronously after the third line: the error (and the line before it) were out already, the
    // third was still waiting for its flush (the bound SIGKILL can cost, docs/configuration.md).
    assert.deepEqual(
      jsonLines(out).map((l) => l.msg),
      ['first', 'second'],
    );
  });

  it('writes at once when 64 KiB are waiting, and the rest on exit', async () => {
    const out = await childOutput(`
      const path = '/' + 'x'.repeat(1000);
      for (let i = 0; i < 100; i++) logLine({ level: 'info', msg: 'request', n: i, path });
      process.stdout.write('MARK\\n');
      process.exit(0);
    `);
    const mark = out.indexOf('MARK');
    assert.ok(mark > 0, 'the marker was written');
    const before = jsonLines(out.slice(0, mark)).length;
    // 100 lines of ~1,070 bytes: one write at 64 KiB (about 61 lines) before the marker, the rest on exit.
    assert.ok(before >= 55 && before < 100, `${before} lines before the marker`);
    assert.deepEqual(
      jsonLines(out).map((l) => l.n),
      Array.from({ length: 100 }, (_, i) => i),
    );
  });
});
