// Finds tests/**/*.test.ts and runs them with node's test runner through tsx (Node 20's --test
// does not expand globs itself). Extra arguments pass through, e.g. --test-name-pattern. A test that
// hangs (a request never answered) fails after 5 minutes instead of holding CI until its limit.
// A second reporter lists the failed tests at the very end (scripts/failed-tests-reporter.mjs). mujoco-js is loaded
// as it is, not through tsx (tests/support/mujoco-hook.mjs).
// tests/ros2/ is left out: those suites need the ROS 2 core and run with `npm run test:ros2`.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const files = readdirSync(path.join(root, 'tests'), { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.test.ts') && !f.startsWith(`ros2${path.sep}`))
  .map((f) => path.join('tests', f))
  .sort();
const args = [
  '--import',
  'tsx',
  // mujoco-js loaded as it is, not through tsx (~0.7 s less in each test process that starts a simulator).
  '--import',
  pathToFileURL(path.join(root, 'tests', 'support', 'mujoco-hook.mjs')).href,
  '--test',
  '--test-concurrency=2',
  '--test-timeout=300000',
  '--test-reporter=tap',
  '--test-reporter-destination=stdout',
  `--test-reporter=${path.join(root, 'scripts', 'failed-tests-reporter.mjs')}`,
  '--test-reporter-destination=stdout',
  ...process.argv.slice(2),
  ...files,
];
const result = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
process.exit(result.status ?? 1);
