import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import {
  access,
  appendFile,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rm,
  stat,
  symlink,
  utimes,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { after as afterAll, describe, it } from 'node:test';
import { PROJECT_ROOT, writeSettings } from './support/settings-file.ts';

/**
 * `npm start` (scripts/start.mjs) runs the compiled bundle under .build/ and never a stale one.
 * Each test works on its own copy of the project (node_modules linked), so editing a source
 * there cannot disturb the other suites.
 */

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly status: number | undefined;
}

/**
 * Copies `sources` (files and folders, symbolic links as links) into the folder `into`, as `cp -R` does: one process
 * (fs.cp walked, stat-ed and copied each of a checkout's ~300 sources and its .build/ in this process: ~0.5 s of CPU in all).
 */
async function copyInto(sources: readonly string[], into: string): Promise<void> {
  await promisify(execFile)('cp', ['-R', ...sources, into]);
}

async function copyProject(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'armgate-start-'));
  await copyInto(
    ['server.ts', 'lib', 'handlers', 'scripts', 'package.json'].map((entry) => path.join(PROJECT_ROOT, entry)),
    dir,
  );
  for (const entry of ['node_modules', 'package-lock.json', 'share', 'docs']) {
    await symlink(path.join(PROJECT_ROOT, entry), path.join(dir, entry));
  }
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** Whether `file` exists. */
const exists = (file: string) =>
  access(file).then(
    () => true,
    () => false,
  );

/** GET /robot/joint_states: its status. */
async function askJointStates(url: string): Promise<number> {
  const res = await fetch(`${url}/robot/joint_states`);
  await res.body?.cancel();
  return res.status;
}

/**
 * Runs `node scripts/start.mjs` in `dir` until it listens, asks (by default GET /robot/joint_states; the status is
 * the run's), then SIGTERM.
 */
function start(
  dir: string,
  settingsFile: string,
  ask: (url: string, stdout: () => string, pid: number) => Promise<number> = askJointStates,
  spawned: (pid: number) => void = () => undefined,
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['scripts/start.mjs', '--settings', settingsFile, '--port', '0'], {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ARMGATE_TOKEN: '' },
    });
    if (child.pid !== undefined) spawned(child.pid);
    let stdout = '';
    let stderr = '';
    let status: number | undefined;
    let asked = false;
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      const m = /^listening on (\S+)$/m.exec(stdout);
      if (m?.[1] && !asked) {
        asked = true;
        ask(m[1], () => stdout, child.pid as number)
          .then((answered) => {
            status = answered;
          })
          .catch(() => {})
          .finally(() => child.kill('SIGTERM'));
      }
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, status });
    });
  });
}

/** The command lines of a process's children (Linux /proc). */
async function childrenOf(pid: number): Promise<string[]> {
  const tasks = await readdir(`/proc/${pid}/task`);
  const pids: string[] = [];
  for (const task of tasks) {
    const text = await readFile(`/proc/${pid}/task/${task}/children`, 'utf8').catch(() => '');
    pids.push(...text.split(' ').filter(Boolean));
  }
  const lines: string[] = [];
  for (const child of pids) {
    const cmd = await readFile(`/proc/${child}/cmdline`, 'utf8').catch(() => '');
    if (cmd) lines.push(cmd.split('\0').join(' ').trim());
  }
  return lines;
}

async function bundles(dir: string): Promise<string[]> {
  return (await readdir(path.join(dir, '.build'))).filter((f) => /^server-[0-9a-f]+\.mjs$/.test(f));
}

/**
 * The checkouts the tests below share, removed at the end: a test continues in the checkout the test before it left (its
 * sources compile, its bundle current), so that it does not copy and compile one of its own only to have a bundle
 * there (each compile ~1.4 s of CPU; the file compiles 5 times instead of 7), nor start a server only to see that the
 * bundle runs (the last start of the test before ran it; ~0.6 s of CPU each). A test run alone makes a new copy.
 */
const checkouts: string[] = [];
let handedOn: Promise<{ dir: string; built: boolean }> | undefined;

/**
 * The checkout the test before left, its bundle current (`built`: its last start compiled, or ran without compiling, the
 * sources as they are, and answered), or a new copy of the project (`built` false: nothing compiled there yet).
 */
function currentCheckout(): Promise<{ dir: string; built: boolean }> {
  handedOn ??= copyProject().then(({ dir }) => {
    checkouts.push(dir);
    return { dir, built: false };
  });
  return handedOn;
}

/** The checkout the next test continues in, its bundle current; undefined when its sources no longer compile. */
function handOn(dir: string | undefined): void {
  handedOn = dir === undefined ? undefined : Promise.resolve({ dir, built: true });
}

describe('npm start runs compiled JavaScript, never stale', { timeout: 240_000 }, () => {
  // The same-size edit's copy is made at once, so that the racy window (2 s) it must be older than the build by has
  // passed by the time its test runs: lib/server/start.ts given a modification time of whole seconds (a time set back
  // is set exactly).
  const sameSizeCopy = (async () => {
    const project = await copyProject();
    const file = path.join(project.dir, 'lib', 'server', 'start.ts');
    const mtime = Math.floor(Date.now() / 1000) - 3600;
    await utimes(file, mtime, mtime);
    return { project, file, mtime, preparedAt: Date.now() };
  })();
  afterAll(async () => {
    await (await sameSizeCopy).project.cleanup();
    for (const dir of checkouts) await rm(dir, { recursive: true, force: true });
  });

  it('builds once, runs the bundle it built while the sources are unchanged, and rebuilds on any change', async () => {
    // A new copy (the first test): its first start compiles.
    const { dir } = await currentCheckout();
    const project = { dir };
    const settings = await writeSettings();
    try {
      // The first start compiles; the compiler's service process is gone before the server serves.
      let children: string[] = [];
      const first = await start(project.dir, settings.file, async (url, _stdout, pid) => {
        children = await childrenOf(pid);
        return askJointStates(url);
      });
      assert.equal(first.code, 0, first.stderr);
      assert.equal(first.status, 200);
      assert.deepEqual(
        children.filter((c) => /esbuild/.test(c)),
        [],
        'no esbuild service process lives beside the server',
      );
      const [built] = await bundles(project.dir);
      assert.ok(built, 'a bundle under .build/');
      const manifest = JSON.parse(await readFile(path.join(project.dir, '.build', 'manifest.json'), 'utf8'));
      assert.equal(manifest.bundle, built);
      assert.ok('lib/server/start.ts' in manifest.inputs && 'server.ts' in manifest.inputs);
      // MuJoCo's binary is read from a file written out of mujoco-js at build (an update of the package rebuilds).
      assert.ok('node_modules/mujoco-js/dist/mujoco_wasm.js' in manifest.inputs);
      const wasm = manifest.derived.find((f: string) => f.endsWith('.wasm'));
      assert.match(wasm, /^mujoco-[0-9a-f]+\/mujoco_wasm\.wasm$/);
      const wasmBytes = await readFile(path.join(project.dir, '.build', wasm));
      assert.ok(WebAssembly.validate(wasmBytes), 'the written binary is valid WebAssembly');

      // The written binary gone (a cleaned .build/, a half-copied one): the next start writes it again and the arm answers.
      await rm(path.join(project.dir, '.build', wasm));
      // One start builds at a time: while another start holds the build lock (a folder holding its owner's pid, here a
      // live `sleep`'s) this start waits at it (its own lock folder, build.lock.<pid>.tmp, ready to be renamed into
      // place) and builds nothing; once the owner is gone it takes the lock over and builds. (Starts at once on a
      // stale bundle each compiled: ~2 s of CPU each.)
      const lock = path.join(project.dir, '.build', 'build.lock');
      const owner = spawn('sleep', ['600'], { stdio: 'ignore' });
      const ownerGone = new Promise((resolve) => owner.once('exit', resolve));
      let waited: Promise<void> = Promise.resolve();
      try {
        await mkdir(lock);
        await writeFile(path.join(lock, 'pid'), String(owner.pid));
        const rewritten = await start(project.dir, settings.file, askJointStates, (pid) => {
          waited = (async () => {
            try {
              const waiting = `${lock}.${pid}.tmp`;
              for (let i = 0; i < 600 && !(await exists(waiting)); i++) await new Promise((r) => setTimeout(r, 50));
              assert.ok(await exists(waiting), 'the start waits at the lock another start holds');
              await new Promise((r) => setTimeout(r, 300));
              assert.ok(await exists(waiting), 'still waiting while the owner lives');
              assert.equal(await exists(path.join(project.dir, '.build', wasm)), false, 'nothing built while it waits');
            } finally {
              owner.kill('SIGKILL');
            }
          })();
        });
        await waited;
        assert.equal(rewritten.code, 0, rewritten.stderr);
        assert.equal(rewritten.status, 200);
        assert.deepEqual(await readFile(path.join(project.dir, '.build', wasm)), wasmBytes);
        assert.equal(await exists(lock), false, 'the lock is given back after the build');
      } finally {
        owner.kill('SIGKILL');
        await ownerGone;
      }
      // Four lines added, each to one file the build wrote, and one start shows each of them (one start rather than
      // four: the lines added before it are in place at each start anyway).
      // The simulator loads the split copy of mujoco-js, not the package: the line added to it shows.
      const js = manifest.derived.find((f: string) => f.endsWith('.mjs'));
      await appendFile(path.join(project.dir, '.build', js), "\nprocess.stdout.write('the split mujoco ran\\n');\n");
      // The trajectory checker's worker thread runs its compiled bundle too (no tsx): a line added to that bundle shows
      // when a trajectory is checked (this one is refused, too fast from rest: nothing moves).
      const worker = manifest.derived.find((f: string) => /^trajectory-worker-[0-9a-f]+\.mjs$/.test(f));
      assert.ok(worker, 'a bundle of the trajectory worker');
      await appendFile(
        path.join(project.dir, '.build', worker),
        "\nprocess.stdout.write('the compiled worker ran\\n');\n",
      );
      // The sequence runner's process runs its compiled bundle too (no tsx): a line added to that bundle shows in the
      // run's log.
      const runner = manifest.derived.find((f: string) => /^sequence-runner-[0-9a-f]+\.mjs$/.test(f));
      assert.ok(runner, 'a bundle of the sequence runner');
      await appendFile(path.join(project.dir, '.build', runner), "\nconsole.log('the compiled runner ran');\n");
      // What runs is the bundle: a line added to it (and to no source) shows on the next start.
      await appendFile(path.join(project.dir, '.build', built), "\nprocess.stdout.write('the bundle ran\\n');\n");

      let checkedStatus: number | undefined;
      let sequencedStatus: number | undefined;
      let runLog = '';
      const cached = await start(project.dir, settings.file, async (url, stdout) => {
        const res = await fetch(`${url}/trajectory/send`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ points: [{ positions: [1.7, 0, 0, 0, 0, 0, 0], time_from_start: 1 }] }),
        });
        await res.body?.cancel();
        checkedStatus = res.status;
        // The worker's stdout reaches the process's through the main thread: wait for it before the SIGTERM.
        for (let i = 0; i < 100 && !/the compiled worker ran/.test(stdout()); i++)
          await new Promise((r) => setTimeout(r, 50));

        const form = new FormData();
        const config = { home: { joints: [0, 0.5, 0, -1.2, 0, 1.2, 0], speed: 1 }, waypoints: [] };
        form.append('config', new Blob([JSON.stringify(config)]), 'sequence.json');
        form.append('n_iterations', '1');
        const started = await fetch(`${url}/sequences/start`, { method: 'POST', body: form });
        await started.body?.cancel();
        sequencedStatus = started.status;
        for (let i = 0; i < 200 && !/returncode/.test(runLog); i++) {
          await new Promise((r) => setTimeout(r, 50));
          runLog = `${JSON.stringify(await (await fetch(`${url}/sequences/logs?n=100`)).json())}${JSON.stringify(await (await fetch(`${url}/sequences/status`)).json())}`;
        }
        return askJointStates(url);
      });
      assert.equal(cached.code, 0, cached.stderr);
      assert.equal(cached.status, 200);
      assert.match(cached.stdout, /^the split mujoco ran$/m);
      assert.equal(checkedStatus, 422, cached.stdout);
      assert.match(cached.stdout, /^the compiled worker ran$/m);
      assert.equal(sequencedStatus, 200, cached.stdout);
      assert.match(runLog, /the compiled runner ran/);
      assert.match(runLog, /"returncode":0/);
      assert.match(cached.stdout, /^the bundle ran$/m);

      // A source two imports below the entry changes: the next start compiles it and runs it.
      await appendFile(
        path.join(project.dir, 'lib', 'server', 'start.ts'),
        "\nprocess.stdout.write('the changed source ran\\n');\n",
      );
      const changed = await start(project.dir, settings.file);
      assert.equal(changed.code, 0, changed.stderr);
      assert.equal(changed.status, 200);
      assert.match(changed.stdout, /^the changed source ran$/m);
      assert.doesNotMatch(changed.stdout, /the bundle ran/, 'the old bundle did not run');
      const manifestAfter = JSON.parse(await readFile(path.join(project.dir, '.build', 'manifest.json'), 'utf8'));
      assert.notEqual(manifestAfter.bundle, built);
      // The next test continues here: the sources compile and the bundle is the one the last start built and ran.
      handOn(project.dir);
    } finally {
      await settings.cleanup();
    }
  });

  it('rebuilds when a source changes keeping its size and modification time (a start reads only files whose stamp changed)', async () => {
    const { project, file, mtime, preparedAt } = await sameSizeCopy;
    const settings = await writeSettings();
    try {
      // The copy is older than the build by more than the racy window: the build's stamps of it are trusted after.
      // (Made while the test before ran: what is left of the window is waited for, usually nothing.)
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, preparedAt + 2500 - Date.now())));
      const first = await start(project.dir, settings.file);
      assert.equal(first.code, 0, first.stderr);
      const { bundle } = JSON.parse(await readFile(path.join(project.dir, '.build', 'manifest.json'), 'utf8'));
      // One line of lib/server/start.ts replaced by one of the same length, and the file's times set back.
      const before = await stat(file);
      const text = await readFile(file, 'utf8');
      const edit = "process.stdout.write('the same-size edit ran\\n');";
      // A one-line comment at the top level, as long as the edit at least.
      const line = text.split('\n').find((l) => /^\/\*\*.*\*\/$/.test(l) && l.length >= edit.length);
      assert.ok(line, 'a one-line comment to replace');
      await writeFile(file, text.replace(line, edit.padEnd(line.length, ' ')));
      await utimes(file, mtime, mtime);
      const after = await stat(file);
      assert.equal(after.size, before.size);
      assert.equal(after.mtimeMs, before.mtimeMs);
      const changed = await start(project.dir, settings.file);
      assert.equal(changed.code, 0, changed.stderr);
      assert.match(changed.stdout, /^the same-size edit ran$/m);
      assert.notEqual(
        JSON.parse(await readFile(path.join(project.dir, '.build', 'manifest.json'), 'utf8')).bundle,
        bundle,
      );
    } finally {
      await settings.cleanup();
      await project.cleanup();
    }
  });

  it('rebuilds in a moved or copied checkout: a bundle names its files by absolute path, never the old place', async () => {
    const checkout = await currentCheckout();
    const project = { dir: checkout.dir };
    const settings = await writeSettings();
    const moved = await mkdtemp(path.join(tmpdir(), 'armgate-start-moved-'));
    checkouts.push(moved);
    try {
      // A bundle to copy: the one the test before left (its last start built and ran it), or a first start's.
      if (!checkout.built) {
        const first = await start(project.dir, settings.file);
        assert.equal(first.status, 200, first.stderr);
      }
      // The checkout is copied with its .build/ (sources unchanged) and the original marked: a bundle that still
      // pointed at the old place would run the old place's sources (here: the marked start.ts).
      await copyInto([`${project.dir}/.`], moved);
      await appendFile(
        path.join(project.dir, 'lib', 'server', 'start.ts'),
        "\nprocess.stdout.write('the old place ran\\n');\n",
      );
      const copied = await start(moved, settings.file);
      assert.equal(copied.code, 0, copied.stderr);
      assert.equal(copied.status, 200);
      assert.doesNotMatch(copied.stdout, /the old place ran/);
      const manifestOf = async (dir: string) =>
        JSON.parse(await readFile(path.join(dir, '.build', 'manifest.json'), 'utf8')) as { bundle: string };
      const own = (await manifestOf(moved)).bundle;
      assert.notEqual(own, (await manifestOf(project.dir)).bundle, 'the copy compiled its own bundle');
      // Its own bundle stays its own: the next start there runs it without compiling again.
      const again = await start(moved, settings.file);
      assert.equal(again.status, 200);
      assert.equal((await manifestOf(moved)).bundle, own);
      // The next test continues in the copy (its bundle current); the original's start.ts is marked.
      handOn(moved);
    } finally {
      await settings.cleanup();
    }
  });

  it('builds past a build lock no start owns (a file, not a folder; a folder naming no process), rather than wait or refuse', async () => {
    const checkout = await currentCheckout();
    const dir = checkout.dir;
    const settings = await writeSettings();
    try {
      handOn(undefined);
      const lock = path.join(dir, '.build', 'build.lock');
      await mkdir(path.join(dir, '.build'), { recursive: true });
      const strays = {
        // A file where the lock folder goes (left by a tool, a half-restored backup, a user's `touch`).
        file: () => writeFile(lock, 'not a lock folder\n'),
        // A folder whose pid file is empty (a crash lost its contents): pid 0 would name this process's group.
        'empty pid': async () => {
          await mkdir(lock);
          await writeFile(path.join(lock, 'pid'), '');
        },
      };
      for (const [kind, make] of Object.entries(strays)) {
        await make();
        // A changed source: the bundle is stale, so the start must build (under the lock).
        await appendFile(
          path.join(dir, 'lib', 'server', 'start.ts'),
          `\nprocess.stdout.write('built past the stray lock (${kind})\\n');\n`,
        );
        const run = await start(dir, settings.file);
        assert.equal(run.code, 0, `${kind}: ${run.stderr}`);
        assert.equal(run.status, 200, kind);
        assert.ok(run.stdout.includes(`built past the stray lock (${kind})\n`), `${kind}: ${run.stdout.slice(-300)}`);
        assert.equal(await exists(lock), false, `${kind}: the lock is given back after the build`);
      }
      // The next test continues here: the sources compile and the bundle is the one this start built and ran.
      handOn(dir);
    } finally {
      await settings.cleanup();
    }
  });

  it('refuses to start when a changed source does not compile, rather than run the previous bundle', async () => {
    const checkout = await currentCheckout();
    const project = { dir: checkout.dir };
    const settings = await writeSettings();
    try {
      // A previous bundle that could be run: the one the test before left (its last start ran it), or a first start's.
      if (!checkout.built) {
        const first = await start(project.dir, settings.file);
        assert.equal(first.code, 0, first.stderr);
      }
      handOn(undefined);
      await appendFile(path.join(project.dir, 'lib', 'server', 'start.ts'), '\nexport const broken = ;\n');
      const refused = await start(project.dir, settings.file);
      assert.equal(refused.code, 1);
      assert.doesNotMatch(refused.stdout, /listening/);
      assert.match(refused.stderr, /armgate: compiling the sources failed: lib\/server\/start\.ts:\d+: /);
    } finally {
      await settings.cleanup();
    }
  });
});
