import { parse } from 'csv-parse/sync';
import { err, ok, type Result } from '../result.ts';
import { angleProblem, MAX_POINTS, timeProblem } from './bounds.ts';
import type { ApiTrajectoryPoint } from './points.ts';

/** Where a CSV file is wrong: 1-based row (the header is row 1), the column name, and why. */
export interface CsvProblem {
  readonly row: number;
  readonly column: string;
  readonly msg: string;
}

const TIME_COLUMNS = ['t', 'time', 'time_from_start'];

/** A header name as the robot stack compared them: lower case, without underscores and spaces. */
function normalized(header: string): string {
  return header.toLowerCase().replace(/[_\s]/g, '');
}

const TIME_NAMES = new Set(TIME_COLUMNS.map(normalized));

/** Canonical joint index (0-based) of a header cell: joint1..joint7 (any case, `_` and spaces ignored: Joint 1, joint_1). */
function jointIndex(header: string, count: number): number {
  const m = /^joint(\d+)$/.exec(normalized(header));
  if (!m) return -1;
  const k = Number(m[1]);
  return k >= 1 && k <= count ? k - 1 : -1;
}

/** A parsed trajectory CSV: its points, the file row of each (the header is row 1), and the columns it ignored. */
export interface ParsedCsv {
  readonly points: ApiTrajectoryPoint[];
  readonly rows: number[];
  readonly ignored: string[];
}

const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** The number in cell `index` of a data row (decimal notation only), or why not. */
function cellNumber(
  cells: readonly string[],
  header: readonly string[],
  index: number,
  row: number,
): Result<number, CsvProblem> {
  const cell = cells[index] ?? '';
  const value = DECIMAL.test(cell) ? Number(cell) : Number.NaN;
  if (!Number.isFinite(value))
    return err({ row, column: header[index] ?? '', msg: `'${cell.slice(0, 40)}' is not a finite number` });
  return ok(value);
}

/**
 * Text that csv-parse reads as plain cells: printable ASCII without double quotes, lines ended by LF alone. Its only
 * whitespace is the space, which trimming removes on both sides of a cell.
 */
const PLAIN = /^[\x20\x21\x23-\x7e\n]*$/;

/**
 * The records of a CSV text as csv-parse reads them with the options below (a byte order mark dropped, rows of any
 * length, blank rows kept, cells trimmed), or the row where it is malformed. A plain text (see {@link PLAIN}; what
 * exported or generated trajectories are) is split directly: csv-parse took about 0.45 s of the 0.55 s a 10 MB CSV's
 * check costs (issue 37), splitting it about a tenth of that. tests/trajectory/csv.test.ts holds the two to the same
 * records.
 */
export function csvRecords(text: string, separator: string): Result<string[][], CsvProblem> {
  if (separator !== ' ' && separator !== '\n' && PLAIN.test(text)) {
    const lines = text.split('\n');
    // The text's end: after a last line break nothing, and an unended last line of spaces only is no record either.
    if ((lines.at(-1) ?? '').trim() === '') lines.pop();
    return ok(lines.map((line) => line.split(separator).map((cell) => cell.trim())));
  }
  try {
    return ok(
      parse(text, {
        delimiter: separator,
        bom: true,
        relax_column_count: true,
        skip_empty_lines: false,
        trim: true,
      }) as string[][],
    );
  } catch (e) {
    const line = (e as { lines?: number }).lines;
    return err({ row: line ?? 0, column: '', msg: `malformed CSV: ${(e as Error).message}` });
  }
}

/**
 * Parses a trajectory CSV as leniently as the robot stack did: a header row with the joint columns
 * (joint1..joint7; case, underscores and spaces ignored: joint_1, JOINT1, Joint 1) and one time
 * column (t, time or time_from_start, compared the same way: TimeFromStart) in any order, then one
 * row per point. Other columns are ignored and reported; blank rows are skipped anywhere; a UTF-8
 * BOM is fine. Rows obey the bounds of JSON points (lib/trajectory/bounds.ts): at most 100,000,
 * times 0..86400 s, angles within +-2 pi. Every problem names its row and column.
 */
export function parseTrajectoryCsv(text: string, separator: string, jointCount = 7): Result<ParsedCsv, CsvProblem> {
  const read = csvRecords(text, separator);
  if (!read.ok) return read;
  const records = read.value;
  const blank = (cells: readonly string[]) => cells.every((cell) => cell === '');
  while (records.length > 0 && blank(records.at(-1) ?? [])) records.pop();
  const header = records[0];
  if (!header || header.every((c) => c === ''))
    return err({ row: 1, column: '', msg: 'the file is empty: a header row and at least one point are needed' });
  const columns: number[] = new Array(jointCount).fill(-1);
  let timeColumn = -1;
  const ignored: string[] = [];
  for (const [index, raw] of header.entries()) {
    const name = raw.trim();
    const joint = jointIndex(name, jointCount);
    if (joint >= 0) {
      if ((columns[joint] ?? -1) >= 0)
        return err({ row: 1, column: name, msg: `duplicate column for joint${joint + 1}` });
      columns[joint] = index;
    } else if (TIME_NAMES.has(normalized(name))) {
      if (timeColumn >= 0)
        return err({ row: 1, column: name, msg: `duplicate time column (use one of ${TIME_COLUMNS.join(', ')})` });
      timeColumn = index;
    } else {
      ignored.push(name === '' ? `(empty, column ${index + 1})` : name);
    }
  }
  const missing = columns.flatMap((c, j) => (c < 0 ? [`joint${j + 1}`] : []));
  if (timeColumn < 0) missing.push(`a time column (${TIME_COLUMNS.join(', ')})`);
  if (missing.length > 0) {
    const hint =
      header.length === 1 && /[;,\t|]/.test(header[0] ?? '')
        ? ` (the header has one column: is the separator '${separator === '\t' ? '\\t' : separator}' right? a semicolon is passed as %3B)`
        : '';
    const found = ignored.length > 0 ? `; columns found: ${ignored.join(', ')}` : '';
    // A header read as one column (the wrong separator) is named as that column.
    const column = hint ? (header[0] ?? '') : '';
    return err({ row: 1, column, msg: `missing column(s): ${missing.join(', ')}${found}${hint}` });
  }
  const dataRows = records.length - 1 - records.slice(1).filter(blank).length;
  if (dataRows < 1) return err({ row: 2, column: '', msg: 'no points after the header' });
  if (dataRows > MAX_POINTS) {
    return err({
      row: MAX_POINTS + 2,
      column: '',
      msg: `more than ${MAX_POINTS} points (rows 2..${MAX_POINTS + 1}): split the trajectory`,
    });
  }
  const points: ApiTrajectoryPoint[] = [];
  const rows: number[] = [];
  for (let r = 1; r < records.length; r++) {
    const cells = records[r] ?? [];
    const row = r + 1;
    if (blank(cells)) continue;
    if (cells.length !== header.length)
      return err({ row, column: '', msg: `expected ${header.length} cells, found ${cells.length}` });
    const time = cellNumber(cells, header, timeColumn, row);
    if (!time.ok) return time;
    const timeIssue = timeProblem(time.value);
    if (timeIssue) return err({ row, column: header[timeColumn] ?? '', msg: timeIssue });
    const positions: number[] = [];
    for (const index of columns) {
      const value = cellNumber(cells, header, index, row);
      if (!value.ok) return value;
      const angleIssue = angleProblem(value.value);
      if (angleIssue) return err({ row, column: header[index] ?? '', msg: angleIssue });
      positions.push(value.value);
    }
    points.push({ positions, time_from_start: time.value });
    rows.push(row);
  }
  return ok({ points, rows, ignored });
}
