// Runs before `npm start` (imported first by scripts/start.mjs), `npm test` and `npm run bench`: on a fresh clone (or after the lock
// file changed) it installs the locked dependencies, so the two quick-start commands need no
// other setup step. Plain JavaScript: it runs before tsx is installed.
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const lock = path.join(root, 'package-lock.json');
const installed = path.join(root, 'node_modules', '.package-lock.json');
const current = existsSync(installed) && statSync(installed).mtimeMs >= statSync(lock).mtimeMs;
if (!current) {
  process.stderr.write('armgate: installing the locked dependencies (npm install) ...\n');
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const result = spawnSync(npm, ['install', '--no-audit', '--no-fund'], {
    cwd: root,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (result.status !== 0) {
    process.stderr.write('armgate: npm install failed; see the output above\n');
    process.exit(result.status ?? 1);
  }
}
