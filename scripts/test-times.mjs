// `npm run test:times [-- files]`: each unit-suite file (compiled as `npm run test:unit` runs them) in a test process of
// its own, two at a time (ARMGATE_TEST_CONCURRENCY), and a table of what each took: wall time, CPU (user + system, its
// children's included, by /usr/bin/time) and the wall time not spent computing (waits on timers, sockets, children or
// the other file's CPU), slowest first. What docs/development.md's figures per file come from.
import { spawn } from 'node:child_process';
import { cpus } from 'node:os';
import path from 'node:path';
import { compileTests, root, testFiles } from './compile-tests.mjs';

const pool = Number(process.env.ARMGATE_TEST_CONCURRENCY ?? 2);
const files = testFiles(process.argv.slice(2));
const { dir, compiled } = await compileTests(files);

/** Runs one compiled file; resolves with its wall seconds, CPU seconds and exit code. */
function timeFile(file) {
  const started = performance.now();
  return new Promise((resolve) => {
    const args = ['-f', '%U %S', process.execPath, '--enable-source-maps', '--test', '--test-reporter=dot', file];
    const child = spawn('/usr/bin/time', args, {
      cwd: root,
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, ARMGATE_TEST_BUILD: dir },
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d) => {
      stderr += d;
    });
    child.on('close', (code) => {
      const [user, sys] = stderr.trim().split('\n').at(-1).split(' ').map(Number);
      resolve({ wall: (performance.now() - started) / 1000, cpu: user + sys, code });
    });
  });
}

const rows = [];
let next = 0;
const started = performance.now();
await Promise.all(
  Array.from({ length: pool }, async () => {
    while (next < compiled.length) {
      const i = next++;
      rows.push({ file: files[i], ...(await timeFile(compiled[i])) });
    }
  }),
);
const total = (performance.now() - started) / 1000;
rows.sort((a, b) => b.wall - a.wall);
const sum = (key) => rows.reduce((s, r) => s + r[key], 0);
process.stdout.write('| wall s | CPU s | waiting s | file |\n|---:|---:|---:|---|\n');
for (const r of rows) {
  const mark = r.code === 0 ? '' : ' (failed)';
  const waiting = Math.max(0, r.wall - r.cpu);
  process.stdout.write(
    `| ${r.wall.toFixed(1)} | ${r.cpu.toFixed(1)} | ${waiting.toFixed(1)} | ${path.normalize(r.file)}${mark} |\n`,
  );
}
process.stdout.write(
  `\n${rows.length} files, ${pool} at a time on ${cpus().length} cores: ${total.toFixed(0)} s; the files' wall times add up to ` +
    `${sum('wall').toFixed(0)} s, their CPU to ${sum('cpu').toFixed(0)} s\n`,
);
process.exit(rows.some((r) => r.code !== 0) ? 1 : 0);
