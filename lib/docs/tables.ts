/**
 * The tables of the docs that list the operations, derived from the catalog (`npm run docs:tables` writes them,
 * tests/docs-tables.test.ts checks them): the README's endpoint table (one row per path of the operations, in the
 * catalog's order, then the rows of the routes that are no operation) and docs/mcp.md's tool table (one row per tool,
 * with its REST twin and the annotations of its effect). A row's own words (what an endpoint does, a note beside a REST
 * twin) are kept; a new operation's row says its summary until someone writes better.
 */
import type { RestOperation } from '../core/operation.ts';
import { annotationsOf } from '../mcp/tools.ts';

/** The header of the README's endpoint table. */
export const ENDPOINTS_HEADER = '| Method | Path | What it does |';
/** The header of docs/mcp.md's tool table. */
export const TOOLS_HEADER = '| tool | REST twin | read-only | destructive | idempotent | open world |';

/** The lines of the table under `header` in `text`: its start and end (exclusive) line index. */
function tableAt(lines: readonly string[], header: string): { start: number; end: number } {
  const start = lines.indexOf(header);
  if (start < 0) throw new Error(`no table with the header ${header}`);
  let end = start + 2;
  while (end < lines.length && lines[end]?.startsWith('|')) end++;
  return { start, end };
}

/** The cells of a table row. */
const cells = (row: string): string[] =>
  row
    .slice(1, row.endsWith('|') ? -1 : undefined)
    .split(' | ')
    .map((cell) => cell.trim());

/** `text` with the table under `header` made of `rows` (each a full row line). */
function withRows(text: string, header: string, rows: (old: readonly string[]) => string[]): string {
  const lines = text.split('\n');
  const { start, end } = tableAt(lines, header);
  const old = lines.slice(start + 2, end);
  return [...lines.slice(0, start + 2), ...rows(old), ...lines.slice(end)].join('\n');
}

/** The README with its endpoint table's operation rows derived from `operations`. */
export function endpointsTable(readme: string, operations: readonly RestOperation[]): string {
  return withRows(readme, ENDPOINTS_HEADER, (old) => {
    const byPath = new Map(old.map((row) => [cells(row)[1] ?? '', row]));
    const paths: string[] = [];
    const methods = new Map<string, string[]>();
    const summaries = new Map<string, string>();
    for (const op of operations) {
      const { path, method } = op.rest;
      if (!methods.has(path)) paths.push(path);
      methods.set(path, [...(methods.get(path) ?? []), method]);
      if (!summaries.has(path)) summaries.set(path, op.summary.charAt(0).toLowerCase() + op.summary.slice(1));
    }
    const rows = paths.map((path) => {
      const said = byPath.get(path);
      const what = said ? cells(said).slice(2).join(' | ') : summaries.get(path);
      return `| ${(methods.get(path) ?? []).join(', ')} | ${path} | ${what} |`;
    });
    // The routes that are no operation (docs, events, the live page, MCP): as written.
    return [...rows, ...old.filter((row) => !methods.has(cells(row)[1] ?? ''))];
  });
}

const yes = (flag: boolean | undefined) => (flag ? 'yes' : 'no');

/** docs/mcp.md with its tool table derived from `operations` (those with a tool, under armgate's names). */
export function toolsTable(doc: string, operations: readonly RestOperation[]): string {
  return withRows(doc, TOOLS_HEADER, (old) => {
    const byTool = new Map(old.map((row) => [cells(row)[0] ?? '', row]));
    return operations
      .filter((op) => op.mcp)
      .map((op) => {
        const twin = `${op.rest.method} ${op.rest.path}`;
        const said = cells(byTool.get(`\`${op.name}\``) ?? '')[1];
        const a = annotationsOf(op);
        return `| \`${op.name}\` | ${said?.startsWith(twin) ? said : twin} | ${yes(a.readOnlyHint)} | ${yes(a.destructiveHint)} | ${yes(a.idempotentHint)} | ${yes(a.openWorldHint)} |`;
      });
  });
}
