// `npm run test:unit`: finds tests/**/*.test.ts and runs them with node's test runner (Node 20's --test does not
// expand globs itself), N files at a time (ARMGATE_TEST_CONCURRENCY, default below). Extra arguments pass through,
// e.g. --test-name-pattern; arguments naming test files (tests/http/motion.test.ts) run only those. A test that hangs
// (a request never answered) fails after 5 minutes instead of holding CI until its limit. A second reporter lists
// the failed tests at the very end (scripts/failed-tests-reporter.mjs), named by their source files.
// tests/ros2/ is left out: those suites need the ROS 2 core and run with `npm run test:ros2`.
//
// The test files run compiled, not through tsx: at every run esbuild bundles them (each file an entry, the modules
// they share in chunks; packages imported from node_modules as they are) into a directory of its own under .build/,
// removed at the end; ~1 s for the whole suite, and nothing is reused from a run before, so a changed source is never
// run stale. Each source module keeps its own import.meta.url, dirname and filename (fixtures found beside a file,
// the project root). Under tsx every test process registered tsx's hooks (~0.25 s of CPU) and compiled ~250 modules
// through them (~0.9 s of CPU, a second thread): with ~130 test processes on 2 cores, about a third of the suite's
// CPU (see docs/development.md). The trajectory checker's worker and the sequence runner's process run compiled too
// (the constants lib/trajectory/worker-pool.ts and lib/sequences/supervisor.ts read, as `npm start`'s build defines),
// and so do the processes tests start from the project's files (CHILD_ENTRIES, found by tests/support/node-entry.ts).
// ARMGATE_TEST_TSX=1 runs the sources through tsx as before (mujoco-js past tsx: tests/support/mujoco-hook.mjs).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** Files at a time: the suite waits on sockets, children and timers as much as it computes. */
const CONCURRENCY = Number(process.env.ARMGATE_TEST_CONCURRENCY ?? 3);
/** A build directory left by a run that was killed is removed by a later run once it is this old. */
const STALE_MS = 60 * 60_000;

const passed = process.argv.slice(2);
const chosen = passed.filter((a) => a.endsWith('.test.ts') && existsSync(path.resolve(root, a)));
const options = passed.filter((a) => !chosen.includes(a));
const files = (
  chosen.length > 0
    ? chosen.map((f) => path.relative(root, path.resolve(root, f)))
    : readdirSync(path.join(root, 'tests'), { recursive: true, encoding: 'utf8' })
        .filter((f) => f.endsWith('.test.ts') && !f.startsWith(`ros2${path.sep}`))
        .map((f) => path.join('tests', f))
).sort();

const reporters = [
  '--test-reporter=tap',
  '--test-reporter-destination=stdout',
  `--test-reporter=${path.join(root, 'scripts', 'failed-tests-reporter.mjs')}`,
  '--test-reporter-destination=stdout',
];
const common = ['--test', `--test-concurrency=${CONCURRENCY}`, '--test-timeout=300000', ...reporters, ...options];

/** Entries compiled beside the test files, and the constant the sources find each one's file URL in. */
const COMPILED_ENTRIES = [
  { entry: 'lib/trajectory/worker.ts', constant: 'ARMGATE_COMPILED_TRAJECTORY_WORKER' },
  { entry: 'lib/sequences/runner.ts', constant: 'ARMGATE_COMPILED_SEQUENCE_RUNNER' },
];
/** Files the tests start as processes of their own: they find the compiled copies (tests/support/node-entry.ts). */
const CHILD_ENTRIES = [
  'server.ts',
  'tests/support/upload-server-child.ts',
  'tests/support/connection-crowd-child.ts',
  'tests/support/bag-writer-child.ts',
];

/** Each source module sees its own location, as under tsx: several read files beside themselves. */
const keepModuleUrls = {
  name: 'armgate-module-urls',
  setup(build) {
    build.onLoad({ filter: /\.ts$/ }, (args) => {
      const text = readFileSync(args.path, 'utf8')
        .replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href))
        .replaceAll('import.meta.dirname', JSON.stringify(path.dirname(args.path)))
        .replaceAll('import.meta.filename', JSON.stringify(args.path));
      return { contents: text, loader: 'ts' };
    });
  },
};

/** Removes build directories of runs that ended without removing theirs (killed), once old enough. */
function pruneStale(buildRoot) {
  for (const name of existsSync(buildRoot) ? readdirSync(buildRoot) : []) {
    if (!name.startsWith('tests-')) continue;
    const dir = path.join(buildRoot, name);
    try {
      if (Date.now() - statSync(dir).mtimeMs > STALE_MS) rmSync(dir, { recursive: true, force: true });
    } catch {
      // Another run removed it first.
    }
  }
}

/** Compiles the test files (and COMPILED_ENTRIES) into `outDir`; returns the compiled test files' paths. */
async function compile(outDir) {
  const esbuild = await import('esbuild');
  const started = performance.now();
  const entryPoints = [...files, ...COMPILED_ENTRIES.map((e) => e.entry), ...CHILD_ENTRIES].map((f) => ({
    in: f,
    out: f.replace(/\.ts$/, ''),
  }));
  const define = Object.fromEntries(
    COMPILED_ENTRIES.map((e) => [
      e.constant,
      JSON.stringify(pathToFileURL(path.join(outDir, e.entry.replace(/\.ts$/, '.mjs'))).href),
    ]),
  );
  await esbuild.build({
    absWorkingDir: root,
    entryPoints,
    bundle: true,
    splitting: true,
    packages: 'external',
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outdir: outDir,
    outExtension: { '.js': '.mjs' },
    chunkNames: 'chunks/[name]-[hash]',
    sourcemap: 'linked',
    define,
    plugins: [keepModuleUrls],
    logLevel: 'warning',
  });
  await esbuild.stop();
  const ms = Math.round(performance.now() - started);
  process.stdout.write(`# compiled ${files.length} test files into ${path.relative(root, outDir)}/ (${ms} ms)\n`);
  return files.map((f) => path.join(outDir, f.replace(/\.ts$/, '.mjs')));
}

let status;
if (process.env.ARMGATE_TEST_TSX === '1') {
  const hook = pathToFileURL(path.join(root, 'tests', 'support', 'mujoco-hook.mjs')).href;
  const args = ['--import', 'tsx', '--import', hook, ...common, ...files];
  status = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' }).status;
} else {
  const buildRoot = path.join(root, '.build');
  pruneStale(buildRoot);
  const outDir = path.join(buildRoot, `tests-${process.pid}-${Date.now().toString(36)}`);
  mkdirSync(outDir, { recursive: true });
  // ARMGATE_TEST_KEEP=1 keeps the compiled files (to run one alone, with a profiler); a later run prunes them.
  const remove = () => process.env.ARMGATE_TEST_KEEP !== '1' && rmSync(outDir, { recursive: true, force: true });
  process.on('exit', remove);
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(130));
  try {
    const compiled = await compile(outDir);
    const env = { ...process.env, ARMGATE_TEST_BUILD: outDir };
    const args = ['--enable-source-maps', ...common, ...compiled];
    status = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit', env }).status;
  } catch (e) {
    process.stderr.write(`run-tests: compiling the test files failed: ${e?.message ?? e}\n`);
    status = 1;
  }
}
process.exit(status ?? 1);
