/** Plain-text tables for the bench output. */

/** A cell: text as is, numbers formatted to a few significant digits (see `formatNumber`). */
export type Cell = string | number;

/** One printed table: a title line, a header row, rows, and optional note lines under it. */
export interface Table {
  readonly title: string;
  readonly header: readonly string[];
  readonly rows: readonly (readonly Cell[])[];
  readonly notes?: readonly string[];
}

/** A number in at most about four significant digits: 40472, 12.35, 0.531. */
export function formatNumber(v: number): string {
  if (!Number.isFinite(v)) return String(v);
  if (Math.abs(v) >= 100) return v.toFixed(0);
  if (Math.abs(v) >= 1) return v.toFixed(2);
  return v.toPrecision(3);
}

/** The table as text: columns padded to their widest cell, numbers right-aligned, a rule under the header. */
export function formatTable(table: Table): string {
  const cells = table.rows.map((row) => table.header.map((_, i) => row[i] ?? ''));
  const text = [table.header as readonly Cell[], ...cells].map((row) =>
    row.map((c) => (typeof c === 'number' ? formatNumber(c) : c)),
  );
  const widths = table.header.map((_, i) => Math.max(...text.map((row) => (row[i] ?? '').length)));
  const numeric = table.header.map((_, i) => cells.length > 0 && cells.every((row) => typeof row[i] === 'number'));
  const line = (row: readonly string[]) =>
    row
      .map((c, i) => (numeric[i] ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  const out = [
    table.title,
    line(text[0] ?? []),
    widths.map((w) => '-'.repeat(w)).join('  '),
    ...text.slice(1).map(line),
  ];
  for (const note of table.notes ?? []) out.push(`  ${note}`);
  return `${out.join('\n')}\n`;
}

/** "met" / "MISSED" for a target check. */
export const verdict = (met: boolean): string => (met ? 'met' : 'MISSED');
