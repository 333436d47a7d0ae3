// Test files that share one test process (scripts/run-tests.mjs): node's runner starts a process per file, and each
// process that loads the app paid ~0.5-0.8 s of CPU before its first test (node, the compiled modules, MuJoCo's
// WebAssembly and its model, the code's first runs before the JIT has warmed up): with ~140 files on 2 cores that was
// about a third of the suite's CPU. A group is a module of the build that imports a few compiled test files in order;
// node:test runs their top-level tests one after another in one process, each file's tests as they run alone, and
// names a failed test by the file it is written in (source maps). A file shares a process only when nothing in it
// reaches past its own tests: no hook at its top level (it would be the process's, around the other files' tests too),
// no change to the process (its environment, its signal handlers, mocked timers, globals), and not one of the files
// that measure the process itself (memory, the event loop's delays) or that take long alone (they start first:
// SLOW_FIRST). ARMGATE_TEST_GROUP=0 runs every file in a process of its own.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/** Files at most in one process: small groups keep the runner's four lanes busy to the end. */
const GROUP_SIZE = 8;

/** What makes a file run in a process of its own (see the head of this file). */
const OWN_PROCESS = [
  /^(before|after|beforeEach|afterEach)(All)?\(/m,
  /mock\.timers|process\.env\.[A-Za-z_]+ =|process\.env\[[^\]]+\] =|delete process\.env/,
  /process\.chdir|process\.(on|once)\(|setMaxListeners|globalThis\.[A-Za-z_]+ =/,
  /getActiveResourcesInfo|memoryUsage|monitorEventLoopDelay|eventLoopUtilization|process\.cpuUsage|configureGlobal/,
];

/** Whether `file` (a test source under `root`) may share a process with others. */
function shareable(root, file) {
  const text = readFileSync(path.join(root, file), 'utf8');
  return !OWN_PROCESS.some((pattern) => pattern.test(text));
}

/**
 * The processes to run for `files` (sources, in run order) compiled as `compiled` (same order) into `dir`: each file
 * alone but those `shareable` and not in `alone`, which go into groups of GROUP_SIZE in their order, each group a
 * module written into `dir`/groups/ in the place of its first file. Returns the paths to hand node's runner.
 */
export function groupTests(root, dir, files, compiled, alone = []) {
  if (process.env.ARMGATE_TEST_GROUP === '0') return compiled;
  const shared = files.map((f, i) => (alone.includes(f) || !shareable(root, f) ? -1 : i)).filter((i) => i >= 0);
  if (shared.length < 2) return compiled;
  const groups = [];
  for (let k = 0; k < shared.length; k += GROUP_SIZE) groups.push(shared.slice(k, k + GROUP_SIZE));
  const out = compiled.map((c) => [c]);
  mkdirSync(path.join(dir, 'groups'), { recursive: true });
  groups.forEach((members, n) => {
    if (members.length === 1) return;
    const file = path.join(dir, 'groups', `group-${n + 1}.mjs`);
    const lines = members.map((i) => `import ${JSON.stringify(pathToFileURL(compiled[i]).href)}; // ${files[i]}`);
    writeFileSync(file, `${lines.join('\n')}\n`);
    for (const i of members) out[i] = [];
    out[members[0]] = [file];
  });
  return out.flat();
}
