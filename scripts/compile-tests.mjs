// The test files compiled for a run (scripts/run-tests.mjs, scripts/test-times.mjs): esbuild bundles them at every run
// (each file an entry, the modules they share in chunks, the packages compiled in but for PACKAGES_KEPT) into a
// directory of its own under .build-tests/, removed at the end (~1-2 s for the whole suite). Nothing is reused from a run
// before, so a changed source is never run stale. Each source module keeps its own import.meta.url, dirname and
// filename (fixtures found beside a file, the project root). The trajectory checker's worker and the sequence runner
// run compiled too (the constants lib/trajectory/worker-pool.ts and lib/sequences/supervisor.ts read, as `npm start`'s
// build defines), and so do the processes tests start from the project's files (CHILD_ENTRIES, found by
// tests/support/node-entry.ts through ARMGATE_TEST_BUILD).
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { nodeBundle, PACKAGES_KEPT } from './bundle-options.mjs';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** A build directory left by a run that was killed is removed by a later run once it is this old. */
const STALE_MS = 60 * 60_000;

/** The unit suite's files (each tests/.../*.test.ts but under tests/ros2/, which needs the ROS 2 core), or `chosen`. */
export function testFiles(chosen = []) {
  return (
    chosen.length > 0
      ? chosen.map((f) => path.relative(root, path.resolve(root, f)))
      : readdirSync(path.join(root, 'tests'), { recursive: true, encoding: 'utf8' })
          .filter((f) => f.endsWith('.test.ts') && !f.startsWith(`ros2${path.sep}`))
          .map((f) => path.join('tests', f))
  ).sort();
}

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
  'tests/support/json-verdict-child.ts',
  // Not a process: the `rclnodejs` a ros2-backend sequence runner imports (tests/support/rclnodejs-hook.mjs).
  'tests/support/rclnodejs-standin-remote.ts',
];

/**
 * The packages imported from node_modules as they are (as scripts/start.mjs keeps them): native code or loaded by name at
 * run time (rclnodejs, ws's optional helpers), read as files (the docs pages' and the live page's assets), processes
 * (tsx, esbuild) and mujoco-js (11 MB; esbuild gains nothing compiling it). The others are compiled into the chunks:
 * node's loader resolved, read and compiled their files one by one in every test process.
 */
const KEPT = [...PACKAGES_KEPT, 'mujoco-js'];

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

/** The package whose WebAssembly binary is written out of its JavaScript (as scripts/start.mjs does for `npm start`). */
const MUJOCO_JS = 'node_modules/mujoco-js/dist/mujoco_wasm.js';
/** The one function of mujoco_wasm.js that holds the binary: it decodes the base64 string at load. */
const MUJOCO_INLINE_BINARY = /function findWasmBinary\(\) \{\n {2}return base64Decode\('([A-Za-z0-9+/=]+)'\);\n\}/;

/**
 * mujoco-js carries its WebAssembly as an 11 MB base64 string in its JavaScript: each test process that starts a
 * simulator (~70) parsed that source and decoded the string (~0.15 s of CPU). Written out once per run into `outDir`,
 * beside a copy of the package's JavaScript that reads the binary from that file; the tests import that copy. Returns
 * its file URL, or undefined when the package has another shape (then it is imported as it is).
 */
function splitMujoco(outDir) {
  const text = readFileSync(path.join(root, MUJOCO_JS), 'latin1');
  const match = MUJOCO_INLINE_BINARY.exec(text);
  if (!match) return undefined;
  const dir = path.join(outDir, 'mujoco');
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'mujoco_wasm.wasm'), Buffer.from(match[1], 'base64'));
  const js = readFileSync(path.join(root, MUJOCO_JS), 'utf8').replace(
    MUJOCO_INLINE_BINARY,
    () => "function findWasmBinary() {\n  return new URL('mujoco_wasm.wasm', import.meta.url).href;\n}",
  );
  writeFileSync(path.join(dir, 'mujoco_wasm.mjs'), js);
  return pathToFileURL(path.join(dir, 'mujoco_wasm.mjs')).href;
}

/** The compiled files import the split copy of mujoco-js when there is one. */
function mujocoFrom(url) {
  return {
    name: 'armgate-mujoco-split',
    setup(build) {
      build.onResolve({ filter: /^mujoco-js$/ }, () => ({ path: url ?? 'mujoco-js', external: true }));
    },
  };
}

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
async function compile(files, outDir) {
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
    ...nodeBundle(KEPT),
    outdir: outDir,
    outExtension: { '.js': '.mjs' },
    chunkNames: 'chunks/[name]-[hash]',
    sourcemap: 'linked',
    sourcesContent: false,
    define,
    plugins: [keepModuleUrls, mujocoFrom(splitMujoco(outDir))],
    logLevel: 'warning',
  });
  await esbuild.stop();
  const ms = Math.round(performance.now() - started);
  process.stdout.write(`# compiled ${files.length} test files into ${path.relative(root, outDir)}/ (${ms} ms)\n`);
}

/**
 * Compiles `files` into a new directory under .build-tests/ (removed when this process exits, unless ARMGATE_TEST_KEEP=1:
 * to run one file alone or with a profiler; a later run prunes it). Returns the directory and each file's compiled copy.
 */
export async function compileTests(files) {
  // Not under .build/: `npm start` prunes what its manifest does not name there once it is 10 minutes old.
  const buildRoot = path.join(root, '.build-tests');
  pruneStale(buildRoot);
  const dir = path.join(buildRoot, `tests-${process.pid}-${Date.now().toString(36)}`);
  mkdirSync(dir, { recursive: true });
  process.on('exit', () => process.env.ARMGATE_TEST_KEEP !== '1' && rmSync(dir, { recursive: true, force: true }));
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(130));
  await compile(files, dir);
  return { dir, compiled: files.map((f) => path.join(dir, f.replace(/\.ts$/, '.mjs'))) };
}
