// `npm test`: the checks (typecheck, rclnodejs's types, Biome, the OpenAPI drift, redocly's lint, the real-time tier's
// table in docs/development.md) and the unit suite
// (`npm run test:unit`, scripts/run-tests.mjs), all started at once: each check is one process that mostly waits on
// one core, and the suite's files wait on sockets, children and timers as much as they compute, so together they take
// about the suite's time (the checks one after another took ~10-16 s more). The suite's TAP stream goes to stdout as
// it comes; a check's output is kept and printed after the suite when it failed; the last lines say each one's result
// and time, and the run fails when any of them failed. Arguments pass through to the unit suite (--test-name-pattern).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const CHECKS = ['typecheck', 'typecheck:rclnodejs', 'lint', 'test:openapi-drift', 'lint:openapi', 'check:tier'];
const scripts = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).scripts;
/** The packages' commands first on the PATH, as `npm run` puts them. */
const env = { ...process.env, PATH: [path.join(root, 'node_modules', '.bin'), process.env.PATH].join(path.delimiter) };

/**
 * Runs package.json's `script` as `npm run -s` would, arguments appended; its output kept, or streamed when `inherit`.
 * Through a shell directly, not npm (each npm start ~0.15 s of CPU, six of them), but on Windows.
 */
function run(script, args = [], inherit = false) {
  const started = performance.now();
  const [command, argv] =
    process.platform === 'win32'
      ? [npm, ['run', '-s', script, ...(args.length > 0 ? ['--', ...args] : [])]]
      : ['/bin/sh', ['-c', `${scripts[script]} "$@"`, script, ...args]];
  return new Promise((resolve) => {
    const child = spawn(command, argv, {
      cwd: root,
      env,
      stdio: inherit ? 'inherit' : ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout?.setEncoding('utf8').on('data', (d) => {
      output += d;
    });
    child.stderr?.setEncoding('utf8').on('data', (d) => {
      output += d;
    });
    child.on('close', (code, signal) =>
      resolve({ script, code: code ?? (signal ? 1 : 0), output, seconds: (performance.now() - started) / 1000 }),
    );
  });
}

const checks = Promise.all(CHECKS.map((script) => run(script)));
const unit = await run('test:unit', process.argv.slice(2), true);
const results = [...(await checks), unit];
process.stdout.write('\n');
for (const r of results) {
  if (r.script !== 'test:unit' && r.code !== 0) process.stdout.write(r.output);
  process.stdout.write(`# ${r.code === 0 ? 'ok' : 'FAILED'} npm run ${r.script} (${r.seconds.toFixed(1)} s)\n`);
}
process.exit(results.some((r) => r.code !== 0) ? 1 : 0);
