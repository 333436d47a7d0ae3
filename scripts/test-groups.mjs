// The test processes of a run (scripts/run-tests.mjs) and the order they start in.
//
// Groups: node's runner starts a process per file, and each process that loads the app paid ~0.5-0.8 s of CPU before
// its first test (node, the compiled modules, MuJoCo's WebAssembly and its model, the code's first runs before the JIT
// has warmed up): with ~140 files on 2 cores that was about a third of the suite's CPU. A group is a module of the
// build that imports a few compiled test files; node:test runs their top-level tests one after another in one process,
// each file's tests as they run alone, and names a failed test by the file it is written in (source maps). A file
// shares a process only when nothing in it reaches past its own tests: no hook at its top level (it would be the
// process's, around the other files' tests too: a file's hooks go inside its describe), no change to the process (its environment, its signal handlers,
// mocked timers, globals), and not one of the files that measure the process itself (memory, the event loop's delays,
// a diagnostics channel) or that take long alone (they start first). ARMGATE_TEST_GROUP=0 runs every file in a process of its own.
//
// Order: node 20's runner sorts the files it is handed by name, so each process is a module whose name sorts in the
// order wanted (run/NNN-...): the files that take longest (`first`, in its order) each followed by a group, then the
// other files alone, so that no long file starts last and runs on alone after the rest have finished, and the long
// files (which mostly wait) run beside groups (which compute).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * Files at most in one process (the unit suite's CPU under load: 8 a process 156 s, 12 a process 143 s, its wall time
 * no longer), few enough that the groups end before the files alone do. Measured again with 156 files shareable
 * (2026-11-28, 34 files, load 5-12): 6 a process 27.2 and 27.8 s of CPU, 12 26.3 and 25.4 s, all 34 in one 24.6 and
 * 25.1 s but 52 s of wall against 28-38 s: ~0.5 s of CPU a process saved, while 24 a process would sum up to ~55 s of
 * one group's files alone, long enough to end last. ARMGATE_TEST_GROUP_SIZE sets another (to measure).
 */
const GROUP_SIZE = Number(process.env.ARMGATE_TEST_GROUP_SIZE ?? 12);

/** What makes a file run in a process of its own (see the head of this file). */
const OWN_PROCESS = [
  /^(before|after|beforeEach|afterEach)(All)?\(/m,
  /mock\.timers|process\.env\.[A-Za-z_]+ =|process\.env\[[^\]]+\] =|delete process\.env/,
  /process\.chdir|process\.(on|once)\(|setMaxListeners|globalThis\.[A-Za-z_]+ =/,
  /getActiveResourcesInfo|memoryUsage|monitorEventLoopDelay|eventLoopUtilization|process\.cpuUsage|configureGlobal/,
  // A diagnostics channel sees the whole process (e.g. every worker thread started, the other files' too).
  /node:diagnostics_channel/,
];

/** Whether `file` (a test source under `root`) may share a process with others. */
function shareable(root, file) {
  const text = readFileSync(path.join(root, file), 'utf8');
  return !OWN_PROCESS.some((pattern) => pattern.test(text));
}

/**
 * The processes to run for `files` (sources) compiled as `compiled` (same order) into `dir`: `first`'s files alone and
 * in its order, each followed by one of the groups of GROUP_SIZE of the others that are `shareable`, then the rest
 * alone, in name order.
 * Each process is a module written into `dir`/run/ that imports its files; returns their paths, for node's runner.
 */
export function planRun(root, dir, files, compiled, first = []) {
  const grouping = process.env.ARMGATE_TEST_GROUP !== '0';
  const index = new Map(files.map((f, i) => [f, i]));
  const leading = first.filter((f) => index.has(f)).map((f) => [index.get(f)]);
  const rest = files.map((_, i) => i).filter((i) => !first.includes(files[i]));
  const shared = rest.filter((i) => grouping && shareable(root, files[i]));
  const groups = [];
  for (let k = 0; k < shared.length; k += GROUP_SIZE) groups.push(shared.slice(k, k + GROUP_SIZE));
  const alone = rest.filter((i) => !shared.includes(i)).map((i) => [i]);
  const runDir = path.join(dir, 'run');
  mkdirSync(runDir, { recursive: true });
  // The long files alternate with the groups: most of them wait more than they compute, the groups compute.
  const interleaved = [];
  for (let k = 0; k < Math.max(leading.length, groups.length); k++) {
    if (k < leading.length) interleaved.push(leading[k]);
    if (k < groups.length) interleaved.push(groups[k]);
  }
  return [...interleaved, ...alone].map((members, n) => {
    const name = members.length === 1 ? files[members[0]].replace(/\.test\.ts$/, '') : `group-of-${members.length}`;
    const file = path.join(runDir, `${String(n).padStart(3, '0')}-${name.replace(/[\\/]/g, '-')}.mjs`);
    const lines = members.map((i) => `import ${JSON.stringify(pathToFileURL(compiled[i]).href)}; // ${files[i]}`);
    writeFileSync(file, `${lines.join('\n')}\n`);
    return file;
  });
}
