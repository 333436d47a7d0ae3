// npm test: type-checks armgate's stand-in of rclnodejs's API (lib/ros/rclnodejs-api.ts) and the
// test stack's (tests/ros/stack/rcl.ts) against rclnodejs's own published declarations (types/*.d.ts of the
// version locked in package-lock.json), so the stand-in cannot drift from the real API. Needs no
// ROS 2: the package is fetched from the npm registry with `npm pack` (no install scripts run),
// checked against the lock file's integrity, and kept under node_modules/.cache; an installed
// rclnodejs of the locked version is used as it is. Plain JavaScript: it runs before tsx.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const fail = (message) => {
  process.stderr.write(`check-rclnodejs-types: ${message}\n`);
  process.exit(1);
};

const lock = JSON.parse(readFileSync(path.join(root, 'package-lock.json'), 'utf8'));
const locked = lock.packages?.['node_modules/rclnodejs'];
if (!locked?.version || !locked.integrity) fail('rclnodejs is not in package-lock.json');
const { version, integrity } = locked;

const cache = path.join(root, 'node_modules', '.cache', 'armgate-rclnodejs', version);
const extracted = path.join(cache, 'package');

/** The package folder with the locked version's declarations: installed, cached, or fetched now. */
function packageDir() {
  const installed = path.join(root, 'node_modules', 'rclnodejs');
  const installedJson = path.join(installed, 'package.json');
  if (existsSync(installedJson) && JSON.parse(readFileSync(installedJson, 'utf8')).version === version) {
    if (existsSync(path.join(installed, 'types', 'index.d.ts'))) return installed;
  }
  if (existsSync(path.join(extracted, 'types', 'index.d.ts'))) return extracted;
  rmSync(cache, { recursive: true, force: true });
  mkdirSync(cache, { recursive: true });
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const packed = spawnSync(npm, ['pack', `rclnodejs@${version}`, '--ignore-scripts', '--pack-destination', cache], {
    cwd: cache,
    encoding: 'utf8',
    shell: process.platform === 'win32',
  });
  if (packed.status !== 0) fail(`npm pack rclnodejs@${version} failed:\n${packed.stderr}`);
  const tarball = readdirSync(cache).find((f) => f.endsWith('.tgz'));
  if (!tarball) fail('npm pack produced no tarball');
  const bytes = readFileSync(path.join(cache, tarball));
  const [algorithm, expected] = integrity.split('-', 2);
  const actual = createHash(algorithm).update(bytes).digest('base64');
  if (actual !== expected) fail(`rclnodejs-${version}.tgz does not match the lock file's integrity`);
  const untar = spawnSync('tar', ['-xzf', tarball, 'package/types', 'package/package.json'], { cwd: cache });
  if (untar.status !== 0) fail(`cannot extract ${tarball} (tar exited ${untar.status})`);
  return extracted;
}

const dir = packageDir();
// The generated message types rclnodejs's declarations reference: armgate's stand-in for them,
// beside a copy of the declarations (never written into an installed package).
const types = path.join(cache, 'types');
mkdirSync(types, { recursive: true });
for (const f of readdirSync(path.join(dir, 'types'))) {
  if (f.endsWith('.d.ts') && f !== 'interfaces.d.ts') copyFileSync(path.join(dir, 'types', f), path.join(types, f));
}
const checks = path.join(root, 'tests', 'ros', 'rclnodejs-types');
copyFileSync(path.join(checks, 'interfaces.d.ts.in'), path.join(types, 'interfaces.d.ts'));

const tsconfig = path.join(cache, 'tsconfig.check.json');
writeFileSync(
  tsconfig,
  JSON.stringify(
    {
      extends: path.join(root, 'tsconfig.json'),
      compilerOptions: {
        skipLibCheck: false,
        noEmit: true,
        types: ['node'],
        typeRoots: [path.join(root, 'node_modules', '@types')],
        paths: { rclnodejs: [path.join(types, 'index.d.ts')] },
      },
      include: [],
      files: [path.join(checks, 'check.d.ts')],
    },
    null,
    2,
  ),
);
const tsc = path.join(root, 'node_modules', '.bin', process.platform === 'win32' ? 'tsc.cmd' : 'tsc');
const result = spawnSync(tsc, ['-p', tsconfig], { cwd: root, stdio: 'inherit', shell: process.platform === 'win32' });
if (result.status !== 0)
  fail(
    `lib/ros/rclnodejs-api.ts or the test stack's (tests/ros/stack/rcl.ts) no longer matches rclnodejs ${version}'s declarations`,
  );
process.stdout.write(`check-rclnodejs-types: armgate's rclnodejs API matches rclnodejs ${version}'s declarations\n`);
