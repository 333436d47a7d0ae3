import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { operations } from '../handlers/index.ts';
import { endpointsTable, toolsTable } from '../lib/docs/tables.ts';
import { PROJECT_ROOT } from '../lib/settings/resolve.ts';

/**
 * Writes the docs' tables that list the operations from the handler files (lib/docs/tables.ts): the README's
 * endpoint table and docs/mcp.md's tool table. With --check it writes nothing and exits 1 when a committed table
 * differs (tests/docs-tables.test.ts checks the same).
 */
const targets = [
  { file: path.join(PROJECT_ROOT, 'README.md'), derive: endpointsTable },
  { file: path.join(PROJECT_ROOT, 'docs', 'mcp.md'), derive: toolsTable },
];
let stale = 0;
for (const { file, derive } of targets) {
  const committed = await readFile(file, 'utf8');
  const text = derive(committed, operations);
  const name = path.relative(PROJECT_ROOT, file);
  if (process.argv.includes('--check')) {
    if (text !== committed) {
      process.stderr.write(`${name}: its table differs from what the handlers produce: run \`npm run docs:tables\`\n`);
      stale++;
    }
  } else if (text !== committed) {
    await writeFile(file, text);
    process.stdout.write(`wrote ${name}\n`);
  }
}
if (stale) process.exit(1);
