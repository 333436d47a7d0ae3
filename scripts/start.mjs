// `npm start`: runs server.ts as compiled JavaScript. The sources (server.ts and everything it
// imports from lib/ and handlers/) are bundled by esbuild into one file under .build/, once (with a
// chunk beside it for each module imported dynamically, loaded with its packages only when it is
// imported: the ROS 2 context and rclnodejs, the Foxglove face, the simulator's context); every
// start checks that bundle against the sources (a SHA-256 of each file it was built from, the
// esbuild version and this script; a file whose size, times and inode are those it had well before
// the build is not read again: stampOf) and rebuilds before starting when any of them differs, so a
// changed source is never served stale. The packages' JavaScript is compiled in too (an input as a
// source is; PACKAGES_KEPT are imported from node_modules as they are), and files the server reads at
// run time (settings, docs/, lib/ui/static, share/, the docs pages' assets) are read live.
// Why: under tsx every start compiled ~150 files through module hooks on a second thread, which
// took about a second and ~150 MB more memory (see docs/benchmarks.md, startup section).
// One package is not imported as it is: mujoco-js carries its WebAssembly binary as an 11 MB base64
// string inside its JavaScript, and a process that loads it keeps that source, the string and the
// decoded binary for its lifetime (~30 MB, and ~100 ms of start to parse and decode). The build
// writes the binary out beside a copy of the package's JavaScript that reads it from that file (as
// an Emscripten build without SINGLE_FILE does), and the bundle imports that copy instead.
// Plain JavaScript: it runs before anything is compiled. Arguments pass through to server.ts.
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
// First the dependency check (installs the locked packages on a fresh clone), in this process: one node start fewer than a prestart step.
import './ensure-deps.mjs';
import { nodeBundle } from './bundle-options.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OUT_DIR = path.join(ROOT, '.build');
const MANIFEST = path.join(OUT_DIR, 'manifest.json');
const ENTRY = 'server.ts';
/** A build no manifest names any more is removed once it is this old (a process may be loading it). */
const PRUNE_AFTER_MS = 10 * 60_000;
/** Held (a folder holding its owner's pid) by the start that builds: see underBuildLock. */
const LOCK = path.join(OUT_DIR, 'build.lock');
/** How long a start waits for another's build before it builds too (a hung build must not hold every start). */
const LOCK_WAIT_MS = 120_000;

const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex');

/**
 * A file's stamp: what changes whenever its content does (size, modification and change times, inode). A start trusts
 * an input whose stamp is the one recorded at build without reading it, as git trusts its index, unless the file changed
 * within RACY_MS of the build (a write in the same tick of the file system's clock as the build's read keeps the
 * stamp): that file is read and hashed at every start. The change time cannot be set back (touch, cp -p, tar and rsync
 * set the modification time only). Hashing the inputs was ~25 ms of every start, 11 MB of it mujoco-js's JavaScript.
 */
const stampOf = (stat) => `${stat.size}:${stat.mtimeMs}:${stat.ctimeMs}:${stat.ino}`;
const RACY_MS = 2000;

/** A build's record of each input it read: its stamp (taken before reading) and the SHA-256 of what it read. */
function readInput(file, inputs) {
  const stat = statSync(path.join(ROOT, file));
  const bytes = readFileSync(path.join(ROOT, file));
  inputs.set(file, { hash: sha256(bytes), stamp: stampOf(stat) });
  return bytes;
}

/** The package whose WebAssembly binary is written out of its JavaScript (see the head of this file). */
const MUJOCO_JS = 'node_modules/mujoco-js/dist/mujoco_wasm.js';
/** The one function of mujoco_wasm.js that holds the binary: it decodes the base64 string at load. */
const MUJOCO_INLINE_BINARY = /function findWasmBinary\(\) \{\n {2}return base64Decode\('([A-Za-z0-9+/=]+)'\);\n\}/;

/**
 * What the bundle depends on besides the sources: the compiler, the way it is called (this file and its options) and where the checkout
 * is (the bundle names the sources' files by absolute path: a moved or copied checkout compiles its own).
 */
function toolKey(esbuildVersion) {
  const how = [import.meta.url, new URL('./bundle-options.mjs', import.meta.url)].map((u) =>
    readFileSync(fileURLToPath(u), 'utf8'),
  );
  return sha256(`${esbuildVersion}\n${ROOT}\n${how.join('\n')}`);
}

/** The bundle the manifest names, if every file it was built from still has the recorded content. */
function currentBundle() {
  let manifest;
  try {
    manifest = JSON.parse(readFileSync(MANIFEST, 'utf8'));
  } catch {
    return undefined;
  }
  if (typeof manifest?.bundle !== 'string' || typeof manifest.inputs !== 'object' || manifest.inputs === null) {
    return undefined;
  }
  let esbuildVersion;
  try {
    esbuildVersion = JSON.parse(
      readFileSync(path.join(ROOT, 'node_modules', 'esbuild', 'package.json'), 'utf8'),
    ).version;
  } catch {
    return undefined;
  }
  if (manifest.tool !== toolKey(esbuildVersion)) return undefined;
  const stamps = typeof manifest.stamps === 'object' && manifest.stamps !== null ? manifest.stamps : {};
  const trustedBefore = typeof manifest.builtAt === 'number' ? manifest.builtAt - RACY_MS : Number.NEGATIVE_INFINITY;
  for (const [file, hash] of Object.entries(manifest.inputs)) {
    try {
      const stat = statSync(path.join(ROOT, file));
      if (stamps[file] === stampOf(stat) && stat.ctimeMs < trustedBefore) continue;
      if (sha256(readFileSync(path.join(ROOT, file))) !== hash) return undefined;
    } catch {
      return undefined;
    }
  }
  const bundle = path.join(OUT_DIR, manifest.bundle);
  try {
    statSync(bundle);
    for (const file of manifest.derived ?? []) statSync(path.join(OUT_DIR, file));
  } catch {
    return undefined;
  }
  return bundle;
}

/**
 * Each source module keeps seeing its own location in import.meta.url: several find files next to
 * themselves (lib/ui/static, docs/, the worker entry, the sequence runner, the project root).
 */
function keepModuleUrls(hashes) {
  return {
    name: 'armgate-module-urls',
    setup(build) {
      build.onLoad({ filter: /\.ts$/ }, (args) => {
        // The hash of exactly what was compiled: a file changed during the build is rebuilt next start.
        const bytes = readInput(path.relative(ROOT, args.path).split(path.sep).join('/'), hashes);
        const url = JSON.stringify(pathToFileURL(args.path).href);
        return { contents: bytes.toString('utf8').replaceAll('import.meta.url', url), loader: 'ts' };
      });
      // The packages' files, compiled into the bundle as they are: hashed as the sources are (an update rebuilds).
      build.onLoad({ filter: /\.(js|mjs|cjs|json)$/ }, (args) => {
        const bytes = readInput(path.relative(ROOT, args.path).split(path.sep).join('/'), hashes);
        return { contents: bytes, loader: args.path.endsWith('.json') ? 'json' : 'js' };
      });
    },
  };
}

/**
 * Writes mujoco-js's binary out of its JavaScript: .build/mujoco-<hash>/mujoco_wasm.wasm and beside it
 * mujoco_wasm.mjs, the package's JavaScript with only the function that decoded the inline copy
 * changed to name that file (Emscripten then reads it with fs when it instantiates, and drops it).
 * Returns the directory, or undefined when the package does not have that shape (another version):
 * the bundle then imports the package as it is.
 */
function splitMujoco(hashes, unique) {
  let text;
  try {
    text = readInput(MUJOCO_JS, hashes);
  } catch {
    return undefined;
  }
  const match = MUJOCO_INLINE_BINARY.exec(text.toString('latin1'));
  if (!match) {
    hashes.delete(MUJOCO_JS);
    return undefined;
  }
  const hash = hashes.get(MUJOCO_JS).hash;
  const dir = `mujoco-${hash.slice(0, 16)}`;
  const js = text
    .toString('utf8')
    .replace(
      MUJOCO_INLINE_BINARY,
      () => "function findWasmBinary() {\n  return new URL('mujoco_wasm.wasm', import.meta.url).href;\n}",
    );
  mkdirSync(path.join(OUT_DIR, dir), { recursive: true });
  writeAtomically(path.join(OUT_DIR, dir, 'mujoco_wasm.wasm'), Buffer.from(match[1], 'base64'), unique);
  writeAtomically(path.join(OUT_DIR, dir, 'mujoco_wasm.mjs'), js, unique);
  return dir;
}

/** The bundle imports the split copy of mujoco-js (relative to the bundle, both under .build/), or the package as it is. */
function mujocoFromSplit(dir) {
  return {
    name: 'armgate-mujoco-split',
    setup(build) {
      build.onResolve({ filter: /^mujoco-js$/ }, (args) =>
        dir !== undefined && (args.kind === 'import-statement' || args.kind === 'dynamic-import')
          ? { path: `./${dir}/mujoco_wasm.mjs`, external: true }
          : { path: 'mujoco-js', external: true },
      );
    },
  };
}

/**
 * Entries bundled besides server.ts, each into its own .build/<name>-<hash>.mjs before the server's bundle: the
 * server's sources find a compiled entry's file URL in the global constant `constant` names (esbuild replaces the
 * identifier with the string; under tsx it is undeclared, and the source runs through tsx as before).
 */
const WORKER_ENTRIES = [
  // The trajectory checker's worker thread (lib/trajectory/worker-pool.ts): compiled, it runs no tsx.
  { entry: 'lib/trajectory/worker.ts', name: 'trajectory-worker', constant: 'ARMGATE_COMPILED_TRAJECTORY_WORKER' },
  // The sequence runner's process (lib/sequences/supervisor.ts): compiled, it starts without tsx's loader.
  { entry: 'lib/sequences/runner.ts', name: 'sequence-runner', constant: 'ARMGATE_COMPILED_SEQUENCE_RUNNER' },
];

/**
 * Bundles one entry into .build/<name>-<hash>.mjs, and each module it imports dynamically (the ROS 2 context, the Foxglove
 * face, the simulator) into a chunk of its own, .build/chunk-<hash>.mjs, with maps: a module and the packages it imports
 * are loaded when the import runs, not at start (esbuild's splitting; without it the packages a dynamically imported
 * module imports were imported by the one bundle at start). Names carry esbuild's hash of the content (and of the chunks
 * they import), so a file once written never changes. Returns the entry's file name, every file written and the sources
 * read.
 */
async function bundleEntry(esbuild, { entry, name, plugins, define = {}, hashes, unique }) {
  const result = await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: { [name]: entry },
    // Packages are compiled in with the sources (node's loader resolved, read and compiled ~400 of their files one
    // by one at every start: ~200 ms); not those loaded as native code or by name at run time.
    ...nodeBundle(),
    write: false,
    metafile: true,
    sourcemap: 'linked',
    // The maps name the sources by path (they are in the checkout the bundle was built from, as built: a changed one
    // rebuilds) rather than carry a copy of each: maps ~3x smaller, each build ~10 % less of esbuild's CPU.
    sourcesContent: false,
    outdir: OUT_DIR,
    entryNames: '[name]-[hash]',
    chunkNames: 'chunk-[hash]',
    outExtension: { '.js': '.mjs' },
    plugins,
    define,
    logLevel: 'silent',
  });
  const entryPath = Object.entries(result.metafile.outputs).find(([, output]) => output.entryPoint !== undefined)?.[0];
  const code = result.outputFiles.find((f) => entryPath !== undefined && f.path === path.resolve(ROOT, entryPath));
  if (!code) throw new Error(`esbuild produced no bundle of ${entry}`);
  // The entry is named by the SHA-256 of its text, which names the chunks it imports (by their content's hash).
  const esbuildName = path.basename(code.path);
  const file = `${name}-${sha256(code.contents).slice(0, 16)}.mjs`;
  const files = [file, `${file}.map`];
  for (const output of result.outputFiles) {
    const own = path.basename(output.path);
    if (output === code) {
      writeAtomically(
        path.join(OUT_DIR, file),
        code.text.replace(`//# sourceMappingURL=${esbuildName}.map`, `//# sourceMappingURL=${file}.map`),
        unique,
      );
    } else if (own === `${esbuildName}.map`) {
      writeAtomically(path.join(OUT_DIR, `${file}.map`), output.contents, unique);
    } else {
      if (output.text.includes(esbuildName)) throw new Error(`the chunk ${own} imports the entry ${entry}`);
      writeAtomically(output.path, output.contents, unique);
      files.push(own);
    }
  }
  for (const input of Object.keys(result.metafile.inputs)) {
    if (!hashes.has(input)) throw new Error(`${input} was bundled without passing the source hook`);
  }
  return { file, files, inputs: Object.keys(result.metafile.inputs) };
}

/** Bundles the sources into .build/server-<hash>.mjs (and the worker entries) and names them in the manifest (all written atomically). */
async function build() {
  const esbuild = await import('esbuild');
  // Before any input is read: a stamp is trusted only for a file that changed well before this.
  const builtAt = Date.now();
  const hashes = new Map();
  const unique = `${process.pid}-${Math.random().toString(36).slice(2)}`;
  mkdirSync(OUT_DIR, { recursive: true });
  const mujocoDir = splitMujoco(hashes, unique);
  const started = performance.now();
  const plugins = [keepModuleUrls(hashes), mujocoFromSplit(mujocoDir)];
  const read = new Set(mujocoDir ? [MUJOCO_JS] : []);
  const define = {};
  const derived = mujocoDir ? [`${mujocoDir}/mujoco_wasm.mjs`, `${mujocoDir}/mujoco_wasm.wasm`] : [];
  const keep = mujocoDir ? [mujocoDir] : [];
  for (const worker of WORKER_ENTRIES) {
    const built = await bundleEntry(esbuild, { entry: worker.entry, name: worker.name, plugins, hashes, unique });
    for (const input of built.inputs) read.add(input);
    define[worker.constant] = JSON.stringify(pathToFileURL(path.join(OUT_DIR, built.file)).href);
    derived.push(...built.files.filter((f) => f.endsWith('.mjs')));
    keep.push(...built.files);
  }
  const server = await bundleEntry(esbuild, { entry: ENTRY, name: 'server', plugins, define, hashes, unique });
  for (const input of server.inputs) read.add(input);
  const inputs = {};
  const stamps = {};
  for (const file of [...read].sort()) {
    inputs[file] = hashes.get(file).hash;
    stamps[file] = hashes.get(file).stamp;
  }
  const bundle = server.file;
  derived.push(...server.files.filter((f) => f.endsWith('.mjs') && f !== bundle));
  const manifest = { bundle, tool: toolKey(esbuild.version), inputs, stamps, builtAt, derived };
  writeAtomically(MANIFEST, `${JSON.stringify(manifest, null, 1)}\n`, unique);
  prune([...server.files, ...keep]);
  if (process.stderr.isTTY) {
    const ms = Math.round(performance.now() - started);
    process.stderr.write(`armgate: compiled ${Object.keys(inputs).length} source files into .build/ (${ms} ms)\n`);
  }
  return path.join(OUT_DIR, bundle);
}

function writeAtomically(file, text, unique) {
  const temp = `${file}.${unique}.tmp`;
  writeFileSync(temp, text);
  renameSync(temp, file);
}

/** Removes earlier bundles and splits (and stray temporaries) that are old enough not to be loading anywhere. */
function prune(keep) {
  const now = Date.now();
  for (const name of readdirSync(OUT_DIR)) {
    if (name === 'manifest.json' || keep.includes(name)) continue;
    const file = path.join(OUT_DIR, name);
    try {
      if (now - statSync(file).mtimeMs > PRUNE_AFTER_MS) rmSync(file, { force: true, recursive: true });
    } catch {
      // Another start removed it first.
    }
  }
}

/**
 * Whether the start that holds the build lock still runs: a lock whose owner was killed is taken over, and so is one
 * naming no process (its pid file empty or torn), one naming this very process (a container restarted with its .build/ kept gives out the same pids again) or older than
 * LOCK_WAIT_MS (its pid since given to another process).
 */
function lockOwnerAlive() {
  let pid;
  try {
    if (Date.now() - statSync(LOCK).mtimeMs > LOCK_WAIT_MS) return false;
    pid = Number(readFileSync(path.join(LOCK, 'pid'), 'utf8'));
  } catch {
    return false;
  }
  // No pid (an empty or torn file: 0 would name this process's group, a negative one a group), or this very process.
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e?.code === 'EPERM';
  }
}

/**
 * Starts that find the bundle stale at the same moment (two terminals, a test suite starting several servers) build it
 * once: the first takes the lock (a folder renamed into place, its owner's pid already in it: taking it is atomic), the
 * others wait for it and run what it built (each build ~2 s of CPU). A lock whose owner is gone is taken over; after
 * LOCK_WAIT_MS a start builds anyway. Nothing depends on the lock for correctness: every file a build writes is written
 * atomically under a name of its content, so two builds at once (a takeover racing another) only cost the CPU.
 */
async function underBuildLock(work) {
  mkdirSync(OUT_DIR, { recursive: true });
  const mine = `${LOCK}.${process.pid}.tmp`;
  mkdirSync(mine, { recursive: true });
  writeFileSync(path.join(mine, 'pid'), String(process.pid));
  const giveUpAt = Date.now() + LOCK_WAIT_MS;
  let held = false;
  try {
    for (;;) {
      try {
        renameSync(mine, LOCK);
        held = true;
        break;
      } catch (e) {
        // Held (a folder holding a pid), or something else in its place (ENOTDIR: a file), which no start owns.
        if (e?.code !== 'ENOTEMPTY' && e?.code !== 'EEXIST' && e?.code !== 'ENOTDIR') throw e;
      }
      if (!lockOwnerAlive()) {
        rmSync(LOCK, { recursive: true, force: true });
        continue;
      }
      if (Date.now() > giveUpAt) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
      const built = currentBundle();
      if (built !== undefined) return built;
    }
    // Built by the start that held the lock just before this one took it: nothing to do.
    return currentBundle() ?? (await work());
  } finally {
    rmSync(held ? LOCK : mine, { recursive: true, force: true });
  }
}

let bundle = currentBundle();
if (bundle === undefined) {
  try {
    bundle = await underBuildLock(async () => {
      const built = await build();
      // esbuild's API runs the compiler as a service process; it would otherwise live as long as the server.
      await (await import('esbuild')).stop();
      return built;
    });
  } catch (e) {
    const errors = e?.errors?.map((m) => `${m.location?.file ?? ''}:${m.location?.line ?? ''}: ${m.text}`) ?? [];
    process.stderr.write(
      `armgate: compiling the sources failed: ${errors.length > 0 ? errors.join('\n') : (e?.message ?? String(e))}\n`,
    );
    process.exit(1);
  }
}
await import(pathToFileURL(bundle).href);
