/** parseTrajectoryCsv (lib/trajectory/csv.ts): the CSV rules of POST /trajectory/send_csv without a server. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parse } from 'csv-parse/sync';
import fc from 'fast-check';
import { type CsvProblem, csvRecords, parseTrajectoryCsv } from '../../lib/trajectory/csv.ts';
import type { ApiTrajectoryPoint } from '../../lib/trajectory/points.ts';

const HEADER = 't,joint1,joint2,joint3,joint4,joint5,joint6,joint7';
const EXPECTED: ApiTrajectoryPoint[] = [
  { positions: [0.1, 0.2, 0.3, -1.5, 0.5, 1.5, 0.7], time_from_start: 0.5 },
  { positions: [-0.1, -0.2, -0.3, -1.4, -0.5, 1.4, -0.7], time_from_start: 1.25 },
];

function ok(text: string, separator = ','): ApiTrajectoryPoint[] {
  const result = parseTrajectoryCsv(text, separator);
  if (!result.ok)
    assert.fail(`expected success, got row ${result.error.row}, column '${result.error.column}': ${result.error.msg}`);
  return result.value.points;
}

function problem(text: string, separator = ','): CsvProblem {
  const result = parseTrajectoryCsv(text, separator);
  if (result.ok) assert.fail(`expected a problem, got ${JSON.stringify(result.value)}`);
  return result.error;
}

/** EXPECTED written with the given header cells (joint or time names), separator and line end. */
function text(header: readonly string[], sep = ',', eol = '\n'): string {
  const rows = EXPECTED.map((p) =>
    header
      .map((h) => {
        const m = /^joint(\d)$/.exec(h.toLowerCase().replace(/[_\s]/g, ''));
        return String(m ? p.positions[Number(m[1]) - 1] : p.time_from_start);
      })
      .join(sep),
  );
  return [header.join(sep), ...rows].join(eol) + eol;
}

const PLAIN = HEADER.split(',');

describe('parseTrajectoryCsv', () => {
  describe('accepts every documented variant with the same points', () => {
    const variants: [string, string, string?][] = [
      ['joint1..joint7 and t', text(PLAIN)],
      ['joint_1..joint_7', text(['t', 'joint_1', 'joint_2', 'joint_3', 'joint_4', 'joint_5', 'joint_6', 'joint_7'])],
      ['upper case', text(['T', 'JOINT1', 'JOINT2', 'JOINT3', 'JOINT4', 'JOINT5', 'JOINT6', 'JOINT7'])],
      [
        'upper case joint_N',
        text(['TIME', 'JOINT_1', 'JOINT_2', 'JOINT_3', 'JOINT_4', 'JOINT_5', 'JOINT_6', 'JOINT_7']),
      ],
      [
        'joint1 and joint_2 styles mixed',
        text(['t', 'joint1', 'joint_2', 'Joint3', 'JOINT_4', 'joint5', 'joint_6', 'joint7']),
      ],
      ['shuffled columns', text(['joint7', 'joint3', 't', 'joint1', 'joint6', 'joint2', 'joint5', 'joint4'])],
      ['time', text(['time', ...PLAIN.slice(1)])],
      ['time_from_start', text([...PLAIN.slice(1), 'time_from_start'])],
      ['Time_From_Start', text(['Time_From_Start', ...PLAIN.slice(1)])],
      // As the robot stack compared names: case, underscores and spaces do not count.
      ['TimeFromStart', text(['TimeFromStart', ...PLAIN.slice(1)])],
      [
        'Joint 1..Joint 7 (spaces)',
        text(['t', 'Joint 1', 'Joint 2', 'Joint 3', 'Joint 4', 'Joint 5', 'Joint 6', 'Joint 7']),
      ],
      ['time from start (spaces)', text(['time from start', ...PLAIN.slice(1)])],
      ['semicolons', text(PLAIN, ';'), ';'],
      ['tabs', text(PLAIN, '\t'), '\t'],
      ['pipes', text(PLAIN, '|'), '|'],
      ['a UTF-8 BOM', `\uFEFF${text(PLAIN)}`],
      ['CRLF', text(PLAIN, ',', '\r\n')],
      ['blank trailing lines', `${text(PLAIN)}\n\n\n`],
      [
        'a blank line between rows',
        text(PLAIN)
          .replace('\n', '\n\n')
          .replace(/\n(?=[^\n]*\n$)/, '\n\n'),
      ],
      ['blank trailing CRLF lines', `${text(PLAIN, ',', '\r\n')}\r\n\r\n`],
      ['trailing lines of spaces', `${text(PLAIN)}   \n \n`],
      ['no final newline', text(PLAIN).trimEnd()],
      ['spaces around cells and names', text(PLAIN.map((h) => ` ${h} `)).replaceAll(',', ' , ')],
      [
        'quoted cells',
        text(PLAIN)
          .split('\n')
          .map((line) =>
            line === ''
              ? line
              : line
                  .split(',')
                  .map((c) => `"${c}"`)
                  .join(','),
          )
          .join('\n'),
      ],
      [
        'a BOM, CRLF, semicolons, upper case and shuffled columns together',
        `\uFEFF${text(['JOINT_5', 'T', 'JOINT_1', 'JOINT_7', 'JOINT_2', 'JOINT_3', 'JOINT_6', 'JOINT_4'], ';', '\r\n')}\r\n`,
        ';',
      ],
    ];
    for (const [name, csv, sep] of variants) {
      it(name, () => {
        assert.deepEqual(ok(csv, sep), EXPECTED);
      });
    }

    it('ignores columns that are neither a joint nor the time, and names them', () => {
      const result = parseTrajectoryCsv(`${HEADER},gripper,speed,\n1,0,0,0,0,0,0,0,0.5,1,\n`, ',');
      if (!result.ok) return assert.fail(result.error.msg);
      assert.deepEqual(result.value.points, [{ positions: [0, 0, 0, 0, 0, 0, 0], time_from_start: 1 }]);
      assert.deepEqual(result.value.ignored, ['gripper', 'speed', '(empty, column 11)'], 'the ignored columns');
    });

    it("skips blank rows anywhere and keeps each point's file row", () => {
      const result = parseTrajectoryCsv(`${HEADER}\n\n1,0,0,0,0,0,0,0\n , ,\n\n2,0,0,0,0,0,0,0\n`, ',');
      if (!result.ok) return assert.fail(result.error.msg);
      assert.deepEqual(result.value.rows, [3, 6], 'rows of the two points (header = row 1)');
    });

    it('reads signs, exponents and leading dots', () => {
      const points = ok(`${HEADER}\n+1e-1,.5,-0.5,1E-3,-1.5e0,0,1.,0\n`);
      assert.deepEqual(points, [{ positions: [0.5, -0.5, 0.001, -1.5, 0, 1, 0], time_from_start: 0.1 }]);
    });

    it('keeps rows in file order and does not require increasing times (the controller judges them)', () => {
      const points = ok(`${HEADER}\n2,0,0,0,0,0,0,0\n1,0,0,0,0,0,0,0\n1,0,0,0,0,0,0,0\n0,0,0,0,0,0,0,0\n`);
      assert.deepEqual(
        points.map((p) => p.time_from_start),
        [2, 1, 1, 0],
      );
    });

    it('does not check joint limits (the handler does, with validate_limits)', () => {
      assert.deepEqual(ok(`${HEADER}\n1,0,0,0,-2.5,0,0,5\n`)[0]?.positions, [0, 0, 0, -2.5, 0, 0, 5]);
    });

    it('takes another joint count', () => {
      assert.deepEqual(parseTrajectoryCsv('t,joint1,joint2\n1,0.1,0.2\n', ',', 2), {
        ok: true,
        value: { points: [{ positions: [0.1, 0.2], time_from_start: 1 }], rows: [2], ignored: [] },
      });
      const r = parseTrajectoryCsv('t,joint1,joint2\n1,0.1,0.2\n', ',', 3);
      assert.ok(!r.ok && /missing column\(s\): joint3/.test(r.error.msg));
    });

    it('reads many rows', () => {
      const rows = Array.from({ length: 5000 }, (_, k) => `${(k + 1) * 0.01},${Math.sin(k / 100)},0,0,-1.57,0,1.57,0`);
      const points = ok(`${HEADER}\n${rows.join('\n')}\n`);
      assert.equal(points.length, 5000);
      assert.equal(points[4999]?.time_from_start, 50);
    });
  });

  describe('names the row and the column of every problem', () => {
    const cases: [string, string, Partial<Omit<CsvProblem, 'msg'>> & { msg: RegExp }, string?][] = [
      ['an empty file', '', { row: 1, column: '', msg: /the file is empty/ }],
      ['only blank lines', '\n\n\r\n', { row: 1, column: '', msg: /the file is empty/ }],
      ['only a BOM', '\uFEFF', { row: 1, column: '', msg: /the file is empty/ }],
      ['a header only', `${HEADER}\n`, { row: 2, column: '', msg: /no points after the header/ }],
      ['a header and blank lines', `${HEADER}\n\n\n`, { row: 2, column: '', msg: /no points after the header/ }],
      [
        'a missing joint column',
        't,joint1,joint2,joint3,joint5,joint6,joint7\n1,0,0,0,0,0,0\n',
        { row: 1, column: '', msg: /^missing column\(s\): joint4$/ },
      ],
      [
        'several missing columns',
        't,joint1\n1,0\n',
        { row: 1, msg: /^missing column\(s\): joint2, joint3, joint4, joint5, joint6, joint7$/ },
      ],
      [
        'a missing time column',
        'joint1,joint2,joint3,joint4,joint5,joint6,joint7\n0,0,0,0,0,0,0\n',
        { row: 1, msg: /missing column\(s\): a time column \(t, time, time_from_start\)/ },
      ],
      [
        'a duplicate joint (joint2, JOINT_2)',
        `${HEADER},JOINT_2\n1,0,0,0,0,0,0,0,0\n`,
        { row: 1, column: 'JOINT_2', msg: /duplicate column for joint2/ },
      ],
      [
        'two time columns (t, time)',
        `${HEADER},time\n1,0,0,0,0,0,0,0,1\n`,
        { row: 1, column: 'time', msg: /duplicate time column/ },
      ],
      [
        'joint0 and joint8 instead of joint1 (ignored columns named)',
        `${HEADER.replace('joint1', 'joint0')},joint8\n1,0,0,0,0,0,0,0,0\n`,
        { row: 1, column: '', msg: /^missing column\(s\): joint1; columns found: joint0, joint8$/ },
      ],
      [
        'the wrong separator',
        text(PLAIN, ';'),
        { row: 1, msg: /the header has one column: is the separator ',' right\?/ },
      ],
      [
        'a non-numeric cell',
        `${HEADER}\n1,0,0,0,0,0,0,0\n2,0,0,zero,0,0,0,0\n`,
        { row: 3, column: 'joint3', msg: /^'zero' is not a finite number$/ },
      ],
      [
        'a cell with a unit',
        `${HEADER}\n1,0,0,0,0,0,0,0.5rad\n`,
        { row: 2, column: 'joint7', msg: /'0\.5rad' is not a finite number/ },
      ],
      [
        'a hexadecimal cell',
        `${HEADER}\n0x1,0,0,0,0,0,0,0\n`,
        { row: 2, column: 't', msg: /'0x1' is not a finite number/ },
      ],
      [
        'a decimal comma',
        `${HEADER.replaceAll(',', ';')}\n1;0,5;0;0;0;0;0;0\n`,
        { row: 2, column: 'joint1', msg: /'0,5' is not a finite number/ },
        ';',
      ],
      ['an empty cell', `${HEADER}\n1,0,,0,0,0,0,0\n`, { row: 2, column: 'joint2', msg: /'' is not a finite number/ }],
      ["'inf'", `${HEADER}\n1,inf,0,0,0,0,0,0\n`, { row: 2, column: 'joint1', msg: /'inf' is not a finite number/ }],
      [
        "'Infinity'",
        `${HEADER}\n1,0,0,0,0,Infinity,0,0\n`,
        { row: 2, column: 'joint5', msg: /'Infinity' is not a finite number/ },
      ],
      [
        "'-Infinity'",
        `${HEADER}\n1,0,0,0,0,0,-Infinity,0\n`,
        { row: 2, column: 'joint6', msg: /'-Infinity' is not a finite number/ },
      ],
      ["'NaN'", `${HEADER}\nNaN,0,0,0,0,0,0,0\n`, { row: 2, column: 't', msg: /'NaN' is not a finite number/ }],
      [
        "'1e999'",
        `${HEADER}\n1,0,0,0,1e999,0,0,0\n`,
        { row: 2, column: 'joint4', msg: /'1e999' is not a finite number/ },
      ],
      [
        'a row with too few cells',
        `${HEADER}\n1,0,0,0,0,0,0,0\n2,0,0,0\n`,
        { row: 3, column: '', msg: /^expected 8 cells, found 4$/ },
      ],
      [
        'a row with too many cells',
        `${HEADER}\n1,0,0,0,0,0,0,0,0\n`,
        { row: 2, column: '', msg: /^expected 8 cells, found 9$/ },
      ],
      [
        'a negative time',
        `${HEADER}\n1,0,0,0,0,0,0,0\n-0.25,0,0,0,0,0,0,0\n`,
        { row: 3, column: 't', msg: /^time -0\.25 is negative$/ },
      ],
      [
        'a negative time in a shuffled time_from_start column',
        `joint1,joint2,joint3,TIME_FROM_START,joint4,joint5,joint6,joint7\n0,0,0,-1,0,0,0,0\n`,
        { row: 2, column: 'TIME_FROM_START', msg: /time -1 is negative/ },
      ],
      [
        'a problem in a shuffled, upper case column (the header name is kept)',
        `JOINT_3,t,joint1,joint2,joint4,joint5,joint6,joint7\nx,1,0,0,0,0,0,0\n`,
        { row: 2, column: 'JOINT_3', msg: /'x' is not a finite number/ },
      ],
      // The bounds of JSON points (lib/trajectory/bounds.ts) apply to rows too.
      [
        'a time of 1e300 s',
        `${HEADER}\n1,0,0,0,0,0,0,0\n1e300,0,0,0,0,0,0,0\n`,
        { row: 3, column: 't', msg: /^time 1e\+300 s is beyond 86400 s$/ },
      ],
      [
        'a time just beyond one day',
        `${HEADER}\n86400.5,0,0,0,0,0,0,0\n`,
        { row: 2, column: 't', msg: /^time 86400\.5 s is beyond 86400 s$/ },
      ],
      [
        'an angle beyond 2 pi',
        `${HEADER}\n1,0,0,0,0,0,0,6.3\n`,
        { row: 2, column: 'joint7', msg: /^6\.3 rad is beyond \+-2 pi$/ },
      ],
      [
        'an angle beyond -2 pi',
        `JOINT_3,t,joint1,joint2,joint4,joint5,joint6,joint7\n-7,1,0,0,0,0,0,0\n`,
        { row: 2, column: 'JOINT_3', msg: /^-7 rad is beyond \+-2 pi$/ },
      ],
      ['an unclosed quote', `${HEADER}\n1,0,0,0,0,0,0,0\n"2,0,0,0,0,0,0,0\n`, { msg: /malformed CSV/ }],
    ];
    for (const [name, csv, expected, sep] of cases) {
      it(name, () => {
        const p = problem(csv, sep);
        if (expected.row !== undefined) assert.equal(p.row, expected.row, p.msg);
        if (expected.column !== undefined) assert.equal(p.column, expected.column, p.msg);
        assert.match(p.msg, expected.msg);
      });
    }

    it('accepts 100,000 rows and refuses 100,001, naming the first row beyond (row 100002)', () => {
      const rows = (n: number) =>
        `${HEADER}\n${Array.from({ length: n }, (_, k) => `${(k + 1) * 0.01},0,0,0,-1.57,0,1.57,0`).join('\n')}\n`;
      assert.equal(ok(rows(100_000)).length, 100_000);
      assert.deepEqual(problem(rows(100_001)), {
        row: 100_002,
        column: '',
        msg: 'more than 100000 points (rows 2..100001): split the trajectory',
      });
      assert.equal(ok(`${rows(100_000)}\n\n`).length, 100_000, 'blank trailing lines do not count');
    });

    it('counts rows in the file, after a BOM and CRLF line ends', () => {
      const p = problem(`\uFEFF${HEADER}\r\n1,0,0,0,0,0,0,0\r\n2,0,0,0,0,0,0,0\r\n3,0,0,0,0,0,0,bad\r\n`);
      assert.deepEqual(p, { row: 4, column: 'joint7', msg: "'bad' is not a finite number" });
    });

    it('shortens a very long bad cell in the message', () => {
      const p = problem(`${HEADER}\n1,0,0,0,0,0,0,${'x'.repeat(10_000)}\n`);
      assert.ok(p.msg.length < 200, p.msg);
    });
  });
});

describe('csvRecords', () => {
  it("reads any text's records as csv-parse does (plain ones split directly)", () => {
    const options = { bom: true, relax_column_count: true, skip_empty_lines: false, trim: true };
    fc.assert(
      fc.property(
        fc.string({
          unit: fc.constantFrom(',', ';', ' ', ' ', '\n', '\n', '1', '.', '-', 'e', 'x', 'a'),
          maxLength: 80,
        }),
        fc.constantFrom(',', ';', 'a', '.'),
        (text, separator) => {
          const expected = parse(text, { ...options, delimiter: separator }) as string[][];
          const records = csvRecords(text, separator);
          assert.ok(records.ok);
          assert.deepEqual(records.value, expected, JSON.stringify(text));
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('gives the same records for a 10 MB trajectory file as csv-parse', () => {
    const rows = ['t,joint1,joint2,joint3,joint4,joint5,joint6,joint7'];
    for (let i = 1; i <= 90_000; i++)
      rows.push(`${(i * 0.01).toFixed(6)}, ${[0.1, 0, 0, -1.57, 0, 1.57, 0].map((x) => x.toFixed(12)).join(' ,')}`);
    const text = `${rows.join('\n')}\n`;
    const records = csvRecords(text, ',');
    assert.ok(records.ok);
    const expected = parse(text, {
      bom: true,
      relax_column_count: true,
      skip_empty_lines: false,
      trim: true,
      delimiter: ',',
    });
    assert.deepEqual(records.value, expected);
  });
});
