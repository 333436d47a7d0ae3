import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, it } from 'node:test';
import { operations } from '../handlers/index.ts';
import { endpointsTable, toolsTable } from '../lib/docs/tables.ts';

describe('the docs tables that list the operations are the catalog (npm run docs:tables writes them)', () => {
  it("README.md's endpoint table has a row per operation path, with its methods", async () => {
    const readme = await readFile(new URL('../README.md', import.meta.url), 'utf8');
    assert.equal(readme, endpointsTable(readme, operations), 'run `npm run docs:tables` and commit README.md');
    for (const op of operations)
      assert.match(
        readme,
        new RegExp(`^\\| [A-Z, ]*${op.rest.method}[A-Z, ]* \\| ${op.rest.path.replace(/[{}]/g, '\\$&')} \\|`, 'm'),
      );
  });

  it("docs/mcp.md's tool table has a row per tool, with its REST twin and annotations", async () => {
    const doc = await readFile(new URL('../docs/mcp.md', import.meta.url), 'utf8');
    assert.equal(doc, toolsTable(doc, operations), 'run `npm run docs:tables` and commit docs/mcp.md');
    for (const op of operations.filter((o) => o.mcp))
      assert.ok(doc.includes(`| \`${op.name}\` | ${op.rest.method} ${op.rest.path}`), op.name);
  });

  it('keeps a row’s own words and says a new operation’s summary', () => {
    const table =
      '| Method | Path | What it does |\n|---|---|---|\n| GET | /robot/joint_states | my words |\n| GET | /docs | pages |\n';
    const [first] = operations;
    assert.ok(first);
    const out = endpointsTable(table, [
      first,
      { ...operations[1], rest: { ...operations[1]?.rest, path: '/robot/new' } } as typeof first,
    ]);
    assert.match(out, /\| GET \| \/robot\/joint_states \| my words \|/);
    assert.match(out, /\| GET \| \/robot\/new \| [a-z]/, 'a new path gets a row from its summary');
    assert.match(out, /\| GET \| \/docs \| pages \|\n$/, 'a route that is no operation stays, after them');
  });
});
