// `npm start`: runs server.ts as compiled JavaScript. The sources (server.ts and everything it
// imports from lib/ and handlers/) are bundled by esbuild into one file under .build/, once; every
// start checks that bundle against the sources (a SHA-256 of each file it was built from, the
// esbuild version and this script) and rebuilds before starting when any of them differs, so a
// changed source is never served stale. Packages stay in node_modules (imported as they are), and
// files the server reads at run time (settings, docs/, lib/ui/static, share/) are read live.
// Why: under tsx every start compiled ~150 files through module hooks on a second thread, which
// took about a second and ~150 MB more memory (see docs/benchmarks.md, startup section).
// Plain JavaScript: it runs before anything is compiled. Arguments pass through to server.ts.
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
// First the dependency check (installs the locked packages on a fresh clone), in this process: one node start fewer than a prestart step.
import './ensure-deps.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OUT_DIR = path.join(ROOT, '.build');
const MANIFEST = path.join(OUT_DIR, 'manifest.json');
const ENTRY = 'server.ts';
/** A build no manifest names any more is removed once it is this old (a process may be loading it). */
const PRUNE_AFTER_MS = 10 * 60_000;

const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex');

/** What the bundle depends on besides the sources: the compiler and the way it is called (this file). */
function toolKey(esbuildVersion) {
  return sha256(`${esbuildVersion}\n${readFileSync(fileURLToPath(import.meta.url), 'utf8')}`);
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
  for (const [file, hash] of Object.entries(manifest.inputs)) {
    try {
      if (sha256(readFileSync(path.join(ROOT, file))) !== hash) return undefined;
    } catch {
      return undefined;
    }
  }
  const bundle = path.join(OUT_DIR, manifest.bundle);
  try {
    statSync(bundle);
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
        const bytes = readFileSync(args.path);
        // The hash of exactly what was compiled: a file changed during the build is rebuilt next start.
        hashes.set(path.relative(ROOT, args.path).split(path.sep).join('/'), sha256(bytes));
        const url = JSON.stringify(pathToFileURL(args.path).href);
        return { contents: bytes.toString('utf8').replaceAll('import.meta.url', url), loader: 'ts' };
      });
    },
  };
}

/** Bundles the sources into .build/server-<hash>.mjs and names it in the manifest (both written atomically). */
async function build() {
  const esbuild = await import('esbuild');
  const hashes = new Map();
  const started = performance.now();
  const result = await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: [ENTRY],
    bundle: true,
    packages: 'external',
    platform: 'node',
    format: 'esm',
    target: 'node20',
    write: false,
    metafile: true,
    sourcemap: 'linked',
    outfile: path.join(OUT_DIR, 'server.mjs'),
    plugins: [keepModuleUrls(hashes)],
    logLevel: 'silent',
  });
  const inputs = {};
  for (const file of Object.keys(result.metafile.inputs).sort()) {
    const hash = hashes.get(file);
    if (hash === undefined) throw new Error(`${file} was bundled without passing the source hook`);
    inputs[file] = hash;
  }
  const code = result.outputFiles.find((f) => f.path.endsWith('.mjs'));
  const map = result.outputFiles.find((f) => f.path.endsWith('.map'));
  if (!code) throw new Error('esbuild produced no bundle');
  const id = sha256(code.contents).slice(0, 16);
  const bundle = `server-${id}.mjs`;
  mkdirSync(OUT_DIR, { recursive: true });
  const unique = `${process.pid}-${Math.random().toString(36).slice(2)}`;
  const text = code.text.replace(/\/\/# sourceMappingURL=server\.mjs\.map/, `//# sourceMappingURL=${bundle}.map`);
  writeAtomically(path.join(OUT_DIR, `${bundle}.map`), map?.text ?? '', unique);
  writeAtomically(path.join(OUT_DIR, bundle), text, unique);
  const manifest = { bundle, tool: toolKey(esbuild.version), inputs };
  writeAtomically(MANIFEST, `${JSON.stringify(manifest, null, 1)}\n`, unique);
  prune(bundle);
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

/** Removes earlier bundles (and stray temporaries) that are old enough not to be loading anywhere. */
function prune(keep) {
  const now = Date.now();
  for (const name of readdirSync(OUT_DIR)) {
    if (name === 'manifest.json' || name === keep || name === `${keep}.map`) continue;
    const file = path.join(OUT_DIR, name);
    try {
      if (now - statSync(file).mtimeMs > PRUNE_AFTER_MS) rmSync(file, { force: true });
    } catch {
      // Another start removed it first.
    }
  }
}

let bundle = currentBundle();
if (bundle === undefined) {
  try {
    bundle = await build();
  } catch (e) {
    const errors = e?.errors?.map((m) => `${m.location?.file ?? ''}:${m.location?.line ?? ''}: ${m.text}`) ?? [];
    process.stderr.write(
      `armgate: compiling the sources failed: ${errors.length > 0 ? errors.join('\n') : (e?.message ?? String(e))}\n`,
    );
    process.exit(1);
  }
}
await import(pathToFileURL(bundle).href);
