/** Prints a plain-text table: a title, a header row and rows, columns padded to width. */
export function printTable(title: string, header: readonly string[], rows: readonly (readonly (string | number)[])[]): void {
  const cells = [header, ...rows].map((row) => row.map((c) => (typeof c === 'number' ? formatNumber(c) : c)));
  const widths = header.map((_, i) => Math.max(...cells.map((row) => (row[i] ?? '').length)));
  const line = (row: readonly string[]) => row.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ');
  process.stdout.write(`\n${title}\n${line(cells[0] ?? [])}\n${widths.map((w) => '-'.repeat(w)).join('  ')}\n`);
  for (const row of cells.slice(1)) process.stdout.write(`${line(row)}\n`);
}

function formatNumber(v: number): string {
  if (!Number.isFinite(v)) return String(v);
  if (Math.abs(v) >= 100) return v.toFixed(0);
  if (Math.abs(v) >= 1) return v.toFixed(2);
  return v.toPrecision(3);
}
