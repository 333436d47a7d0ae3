// `npm run test:unit`: runs tests/**/*.test.ts (but tests/ros2/, which needs the ROS 2 core: `npm run test:ros2`) with
// node's test runner (Node 20's --test does not expand globs itself), N files at a time (ARMGATE_TEST_CONCURRENCY,
// default below). Extra arguments pass through, e.g. --test-name-pattern; arguments naming test files
// (tests/http/motion.test.ts) or folders of them (tests/http) run only those. A test that hangs (a request never
// answered) fails after 5 minutes instead of holding CI until its limit. A second reporter lists the failed tests at the very end
// (scripts/failed-tests-reporter.mjs), named by their source files.
//
// The test files run compiled by esbuild at every run (scripts/compile-tests.mjs), not through tsx: under tsx every
// test process registered tsx's hooks (~0.25 s of CPU) and compiled ~250 modules through them (~0.9 s of CPU on a
// second thread), and node's loader read the packages' files one by one (~0.2 s): with ~130 test processes on 2 cores,
// about a third of the suite's CPU (docs/development.md). ARMGATE_TEST_TSX=1 runs the sources through tsx as before
// (mujoco-js past tsx: tests/support/mujoco-hook.mjs).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { compileTests, root, testFiles } from './compile-tests.mjs';
import { planRun } from './test-groups.mjs';

/** Files at a time: the suite waits on sockets, children and timers as much as it computes (3: 125 s quiet; 4: 118 s). */
const CONCURRENCY = Number(process.env.ARMGATE_TEST_CONCURRENCY ?? 4);

/**
 * The files that take longest (wall time in the suite, 2026-11-28: 55 s down to ~13 s under load) start first, each in
 * a process of its own (scripts/test-groups.mjs: then the groups, then the other files): tests/start-compiled.test.ts
 * sorted near the end and ran on alone for ~20-30 s after the rest had finished. Most of them wait on children,
 * sockets and timers more than they compute, so they overlap with the other files' CPU. One listed that is gone is
 * skipped.
 */
const SLOW_FIRST = [
  'tests/start-compiled.test.ts',
  'tests/attack/jog-socket-unread.test.ts',
  'tests/attack/audit-repeat-motions.test.ts',
  'tests/server/keep-alive.test.ts',
  'tests/mcp/transport.test.ts',
  'tests/foxglove/server.test.ts',
  'tests/http/sequences.test.ts',
  'tests/http/stop.test.ts',
  'tests/http/trajectory.test.ts',
  'tests/mcp/schemas.test.ts',
  'tests/server/uploads-memory.test.ts',
  'tests/compat/original.test.ts',
  'tests/ros/sequence-pause.test.ts',
  'tests/server/lingering-close.test.ts',
  'tests/sequences/faults.test.ts',
  'tests/ros/sequence-runner.test.ts',
  'tests/bag/flush.test.ts',
  'tests/cli.test.ts',
  'tests/docs/clients.test.ts',
].map((f) => path.normalize(f));

/** The test files an argument names: a .test.ts file, or a folder's .test.ts files (below it too); none otherwise. */
function namedTestFiles(arg) {
  const at = path.resolve(root, arg);
  if (!existsSync(at)) return [];
  if (!statSync(at).isDirectory()) return arg.endsWith('.test.ts') ? [arg] : [];
  return readdirSync(at, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.test.ts'))
    .map((f) => path.join(arg, f));
}

const passed = process.argv.slice(2);
const named = passed.map(namedTestFiles);
const chosen = named.flat();
const options = passed.filter((_, i) => named[i].length === 0);
const files = testFiles(chosen);

const reporters = [
  '--test-reporter=tap',
  '--test-reporter-destination=stdout',
  `--test-reporter=${path.join(root, 'scripts', 'failed-tests-reporter.mjs')}`,
  '--test-reporter-destination=stdout',
];
const common = ['--test', `--test-concurrency=${CONCURRENCY}`, '--test-timeout=300000', ...reporters, ...options];

let status;
if (process.env.ARMGATE_TEST_TSX === '1') {
  const hook = pathToFileURL(path.join(root, 'tests', 'support', 'mujoco-hook.mjs')).href;
  const args = ['--import', 'tsx', '--import', hook, ...common, ...files];
  status = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' }).status;
} else {
  try {
    const { dir, compiled } = await compileTests(files);
    const env = { ...process.env, ARMGATE_TEST_BUILD: dir };
    const run = planRun(root, dir, files, compiled, SLOW_FIRST);
    const args = ['--enable-source-maps', ...common, ...run];
    status = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit', env }).status;
  } catch (e) {
    process.stderr.write(`run-tests: compiling the test files failed: ${e?.message ?? e}\n`);
    status = 1;
  }
}
process.exit(status ?? 1);
