/**
 * POST /trajectory/send, POST /trajectory/send_csv and GET /trajectory/logs end to end on a live
 * server over the simulated arm (issue 4): what is published on the controller topic (watched
 * through the context's topic subscription), what the controller does with it (the trajectory
 * log) and whether the arm moves (GET /robot/joint_states). The app in memory on a clock the test steps
 * (tests/support/stepped.ts): each request steps it until answered, the waits move it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { JointTrajectoryMsg } from '../../lib/ros/messages.ts';
import { type FileContent, csvForm, fileForm } from '../support/multipart.ts';
import type { SteppedClock } from '../../lib/clock.ts';
import {
  describeIssues,
  type InMemory,
  issuesOf,
  JOINT_NAMES,
  jointStates,
  LOG_LINE,
  logLines,
  maxDiff,
  post,
  send,
} from '../support/live.ts';
import type { TestApp } from '../support/server.ts';
import {
  atRestOnClock,
  createSteppedApp,
  movingOnClock,
  steppedTarget,
  steppedUntilSettled,
} from '../support/stepped.ts';

const TIME_SCALE = 10;
const TOPIC = '/iiwa_arm_controller/joint_trajectory';

/** The two points every CSV variant describes (times in simulated seconds). */
const CSV_POINTS = [
  { t: 2.5, q: [0.05, 0.1, 0, -1.5, 0, 1.5, 0.1] },
  { t: 3, q: [0.1, 0.15, 0.05, -1.45, 0.05, 1.45, 0.2] },
] as const;

/** A CSV of CSV_POINTS with the given header cells (joint or time columns), separator and line end. */
function csvText(
  header: readonly string[],
  options: { sep?: string; eol?: string; bom?: boolean; trailing?: string; cell?: (value: string) => string } = {},
): string {
  const sep = options.sep ?? ',';
  const eol = options.eol ?? '\n';
  const cell = options.cell ?? ((value: string) => value);
  const rows = CSV_POINTS.map((p) =>
    header
      .map((name) => {
        const m = /^joint_?(\d)$/i.exec(name.trim());
        return cell(String(m ? p.q[Number(m[1]) - 1] : p.t));
      })
      .join(sep),
  );
  return `${options.bom ? '\uFEFF' : ''}${[header.join(sep), ...rows].join(eol)}${options.trailing ?? eol}`;
}

const PLAIN = ['t', 'joint1', 'joint2', 'joint3', 'joint4', 'joint5', 'joint6', 'joint7'];
const HEADER = PLAIN.join(',');
/** A valid data row for HEADER at time t. */
const row = (t: number, q: readonly number[] = CSV_POINTS[0].q) => [t, ...q].join(',');

describe('trajectories end to end on the simulated arm', () => {
  let server: TestApp;
  let clock: SteppedClock;
  /** The app, each request stepping the clock until it is answered. */
  let url: InMemory;
  /** Time passing: the clock moves on. */
  const sleep = (ms: number) => clock.advance(ms);
  const atRest = (target: InMemory) => atRestOnClock(target, clock);
  const published: JointTrajectoryMsg[] = [];
  let unsubscribe: () => void = () => undefined;

  before(async () => {
    ({ app: server, clock } = await createSteppedApp({ sim: { time_scale: TIME_SCALE } }));
    url = steppedTarget(server, clock);
    unsubscribe = server.context.subscribe(TOPIC, (msg) => published.push(msg as JointTrajectoryMsg));
  });
  after(async () => {
    unsubscribe();
    await server.close();
  });

  const trajectoryLog = (n = 300) => logLines(url, '/trajectory/logs', n);
  /** Log lines added since `before` (compared by content, the ring holds at most 300). */
  const newLines = async (beforeLines: readonly string[]) => {
    const now = await trajectoryLog();
    const last = beforeLines.at(-1);
    const from = last === undefined ? 0 : now.lastIndexOf(last) + 1;
    return now.slice(from);
  };

  /** Runs `act` from rest and asserts it neither published anything nor moved the arm. */
  async function assertNoEffect(act: () => Promise<void>): Promise<void> {
    const start = await atRest(url);
    const count = published.length;
    await act();
    await sleep(30);
    assert.equal(published.length, count, 'nothing is published');
    const now = await jointStates(url);
    assert.deepEqual(now.position, start.position, 'the arm did not move');
    assert.ok(now.velocity.every((v) => v === 0));
  }

  /** Runs `act` from rest; it publishes one trajectory that the controller refuses: the log says `why` and the arm stays. */
  async function assertRefusedByController(act: () => Promise<void>, why: RegExp): Promise<void> {
    const start = await atRest(url);
    const count = published.length;
    const logBefore = await trajectoryLog();
    await act();
    assert.equal(published.length, count + 1, 'the trajectory was published');
    const lines = await newLines(logBefore);
    assert.ok(
      lines.some((l) => /publishing \d+ points/.test(l)),
      lines.join('\n'),
    );
    assert.ok(
      lines.some((l) => /controller: refused a trajectory: /.test(l) && why.test(l)),
      `expected a refusal matching ${why}:\n${lines.join('\n')}`,
    );
    assert.ok(!lines.some((l) => /accepted trajectory/.test(l)), lines.join('\n'));
    await sleep(50);
    const now = await jointStates(url);
    assert.deepEqual(now.position, start.position, 'the arm did not move');
  }

  describe('POST /trajectory/send', () => {
    // Sent, published, and followed point by point on a stepped clock: tests/http/trajectory-follow.test.ts.

    it('publishes non-increasing times with times_increasing false and a warning; the controller refuses them and the arm stays', async () => {
      const q = (await atRest(url)).position;
      for (const times of [
        [1, 1],
        [2, 1],
      ]) {
        await assertRefusedByController(async () => {
          const res = await post<{ status: string; points: number; times_increasing: boolean; warning: string }>(
            url,
            '/trajectory/send',
            {
              points: times.map((t) => ({ positions: q, time_from_start: t })),
            },
          );
          assert.equal(res.status, 200);
          assert.equal(res.body.status, 'sent');
          assert.equal(res.body.points, 2);
          assert.equal(res.body.times_increasing, false);
          assert.match(res.body.warning, /time_from_start does not increase at point 1/);
        }, /point 1: time_from_start \d s does not increase/);
      }
    });

    const bad = (
      label: string,
      body: unknown,
      loc: (string | number)[],
      msg: RegExp,
    ): [string, unknown, (string | number)[], RegExp] => [label, body, loc, msg];
    const W = [0, 0, 0, -1.57, 0, 1.57, 0];
    const cases = [
      bad('empty points', { points: [] }, ['body', 'points'], /must not be empty/),
      bad('no points field', { validate_limits: true }, ['body', 'points'], /Field required/),
      bad(
        '6 positions',
        { points: [{ positions: [0, 0, 0, -1.57, 0, 1.57], time_from_start: 1 }] },
        ['body', 'points', 0, 'positions'],
        /exactly 7 .*got 6/,
      ),
      bad(
        '8 positions',
        {
          points: [
            { positions: [...W, 0], time_from_start: 1 },
            { positions: W, time_from_start: 2 },
          ],
        },
        ['body', 'points', 0, 'positions'],
        /exactly 7 .*got 8/,
      ),
      bad(
        'a non-finite position (1e999)',
        '{"points": [{"positions": [0, 0, 0, -1.57, 0, 1.57, 1e999], "time_from_start": 1}]}',
        ['body', 'points', 0, 'positions', 6],
        /finite/,
      ),
      bad(
        'a NaN literal',
        '{"points": [{"positions": [0, 0, 0, -1.57, 0, 1.57, NaN], "time_from_start": 1}]}',
        ['body'],
        /JSON/,
      ),
      bad(
        // (A numeric string such as '0' is taken as a number, as FastAPI took it.)
        'a string position',
        { points: [{ positions: [0, 0, 0, -1.57, 0, 1.57, 'zero'], time_from_start: 1 }] },
        ['body', 'points', 0, 'positions', 6],
        /number/,
      ),
      bad(
        'a negative time_from_start',
        {
          points: [
            { positions: W, time_from_start: 1 },
            { positions: W, time_from_start: -0.5 },
          ],
        },
        ['body', 'points', 1, 'time_from_start'],
        /at least 0/,
      ),
      bad(
        'a non-finite time_from_start',
        '{"points": [{"positions": [0, 0, 0, -1.57, 0, 1.57, 0], "time_from_start": 1e999}]}',
        ['body', 'points', 0, 'time_from_start'],
        /finite/,
      ),
      bad(
        'a missing time_from_start',
        { points: [{ positions: W }] },
        ['body', 'points', 0, 'time_from_start'],
        /Field required/,
      ),
      bad(
        'an unknown top-level field',
        { points: [{ positions: W, time_from_start: 1 }], speed: 0.5 },
        ['body', 'speed'],
        /.+/,
      ),
      bad(
        'an unknown point field',
        { points: [{ positions: W, time_from_start: 1, velocities: [0, 0, 0, 0, 0, 0, 0] }] },
        ['body', 'points', 0, 'velocities'],
        /.+/,
      ),
      bad(
        'a non-boolean validate_limits',
        { points: [{ positions: W, time_from_start: 1 }], validate_limits: 'no' },
        ['body', 'validate_limits'],
        /boolean/,
      ),
      bad('an array body', [{ positions: W, time_from_start: 1 }], ['body', 'points'], /Field required/),
      bad('an empty body', '', ['body'], /required/i),
    ];
    for (const [label, body, loc, msg] of cases) {
      it(`answers 422 to ${label} at ${loc.join('.')}, publishing nothing`, async () => {
        await assertNoEffect(async () => {
          const res = await post(url, '/trajectory/send', body);
          assert.equal(res.status, 422, JSON.stringify(res.body));
          const issues = issuesOf(res.body);
          assert.deepEqual(issues[0]?.loc, loc, describeIssues(issues));
          assert.match(issues[0]?.msg ?? '', msg);
        });
      });
    }

    it('answers 422 to a point beyond the joint limits, naming the point index, joint, value and bounds', async () => {
      const limits = server.context.limits;
      const [min3, max3] = [limits.minRad[3], limits.maxRad[3]];
      const [min1, max1] = [limits.minRad[1], limits.maxRad[1]];
      await assertNoEffect(async () => {
        const res = await post(url, '/trajectory/send', {
          points: [
            { positions: W, time_from_start: 1 },
            { positions: [0, 0, 0, -2.5, 0, 1.57, 0], time_from_start: 2 },
            { positions: [0, 2.2, 0, -1.57, 0, 1.57, 0], time_from_start: 3 },
          ],
        });
        assert.equal(res.status, 422);
        const issues = issuesOf(res.body);
        assert.deepEqual(issues[0], {
          loc: ['body', 'points', 1, 'positions', 3],
          msg: `point 1: joint4 = -2.5 rad is outside its limits [${min3}, ${max3}]`,
          type: 'limit',
        });
        assert.deepEqual(issues[1]?.loc, ['body', 'points', 2, 'positions', 1]);
        assert.equal(issues[1]?.msg, `point 2: joint2 = 2.2 rad is outside its limits [${min1}, ${max1}]`);
      });
    });

    it('accepts the same point with validate_limits false, but the controller refuses it (logged) and the arm does not move', async () => {
      await assertRefusedByController(async () => {
        const res = await post(url, '/trajectory/send', {
          validate_limits: false,
          points: [{ positions: [0, 0, 0, -2.5, 0, 1.57, 0], time_from_start: 30 }],
        });
        assert.equal(res.status, 200);
        assert.deepEqual(res.body, { status: 'sent', points: 1, duration: 30, time_scale: 1, times_increasing: true });
      }, /point 0: joint4 = -2\.5 rad is outside its limits/);
    });

    // validate_limits true checks the execution first (tests/trajectory/limits-live.test.ts has the table); the two
    // controller refusals below are reached with validate_limits false (before issue 11 they were reached with true).
    it('answers 422 to a trajectory far beyond the dynamic limits with validate_limits true, naming point, joint and figure', async () => {
      const q = (await atRest(url)).position;
      await assertNoEffect(async () => {
        const res = await post(url, '/trajectory/send', {
          points: [{ positions: q.map((v, j) => (j === 0 ? v + 0.5 : v)), time_from_start: 0.1 }],
        });
        assert.equal(res.status, 422, JSON.stringify(res.body));
        const issues = issuesOf(res.body);
        assert.deepEqual(issues[0]?.loc, ['body', 'points', 0, 'positions', 0]);
        // From rest, 0.5 rad in 0.1 s on the cubic the controller would interpolate: 6 x 0.5 / 0.1^2 = 300 rad/s^2 at once.
        assert.equal(
          issues[0]?.msg,
          'point 0: joint1 would need 300 rad/s^2 (limit 8.5521) between t = 0 and 0.1 s: add time or points',
        );
      });
    });

    it('lets the controller refuse a trajectory that needs more than the velocity limits (validate_limits false): the log says which joint and how fast, the arm does not move', async () => {
      const q = (await atRest(url)).position;
      const target = q.map((v, j) => (j === 0 ? v + 0.5 : v));
      await assertRefusedByController(async () => {
        // 0.5 rad in 0.1 s: 5 rad/s against joint1's 1.71 rad/s.
        const res = await post(url, '/trajectory/send', {
          validate_limits: false,
          points: [{ positions: target, time_from_start: 0.1 }],
        });
        assert.equal(res.status, 200);
        assert.deepEqual(res.body, { status: 'sent', points: 1, duration: 0.1, time_scale: 1, times_increasing: true });
      }, /joint1 would need 5\.000 rad\/s .*\(limit 1\.71 rad\/s\)/);
    });

    it('answers 422 to a first point at time 0 away from the current position with validate_limits true (it would jump)', async () => {
      const q = (await atRest(url)).position;
      await assertNoEffect(async () => {
        const res = await post(url, '/trajectory/send', {
          points: [
            { positions: q.map((v, j) => (j === 2 ? v + 0.3 : v)), time_from_start: 0 },
            { positions: q, time_from_start: 1 },
          ],
        });
        assert.equal(res.status, 422, JSON.stringify(res.body));
        const issues = issuesOf(res.body);
        assert.deepEqual(issues[0]?.loc, ['body', 'points', 0, 'positions', 2]);
        assert.match(
          issues[0]?.msg ?? '',
          /^point 0: joint3 is at t = 0 but 0\.3 rad from the current position: the arm would jump/,
        );
      });
    });

    it('answers 422 to a lone point at time 0 beyond 0.1 rad of the arm (not a hold point: it would jump)', async () => {
      const q = (await atRest(url)).position;
      await assertNoEffect(async () => {
        const res = await post(url, '/trajectory/send', {
          points: [{ positions: q.map((v, j) => (j === 0 ? v + 0.5 : v)), time_from_start: 0 }],
        });
        assert.equal(res.status, 422, JSON.stringify(res.body));
        const issues = issuesOf(res.body);
        assert.deepEqual(issues[0]?.loc, ['body', 'points', 0, 'positions', 0]);
        assert.match(
          issues[0]?.msg ?? '',
          /^point 0: joint1 is at t = 0 but 0\.5 rad from the current position: the arm would jump/,
        );
      });
    });

    it('lets the controller refuse a first point at time 0 away from the current position (validate_limits false: it would jump)', async () => {
      const q = (await atRest(url)).position;
      await assertRefusedByController(async () => {
        const points = [
          { positions: q.map((v, j) => (j === 2 ? v + 0.3 : v)), time_from_start: 0 },
          { positions: q, time_from_start: 1 },
        ];
        const res = await post(url, '/trajectory/send', { validate_limits: false, points });
        assert.equal(res.status, 200);
      }, /first point is at time 0 but 0\.3000 rad away .*jump/);
    });

    it('preempts a trajectory still executing with a newer one', async () => {
      const q = (await atRest(url)).position;
      const away = q.map((v, j) => (j === 4 ? v + 0.5 : v));
      const first = await post(url, '/trajectory/send', { points: [{ positions: away, time_from_start: 20 }] });
      assert.equal(first.status, 200);
      await sleep(100);
      const second = await post(url, '/trajectory/send', { points: [{ positions: q, time_from_start: 1 }] });
      assert.equal(second.status, 200, JSON.stringify(second.body));
      const end = await atRest(url);
      assert.ok(maxDiff(end.position, q) < 1e-9, 'the newer trajectory brought the arm back');
      const lines = await trajectoryLog(10);
      assert.ok(
        lines.some((l) => /controller: trajectory #\d+ preempted by a newer one/.test(l)),
        lines.join('\n'),
      );
    });

    it('answers 409 while a move request holds the arm (for JSON and CSV), then works again', async () => {
      await atRest(url);
      // Sent without stepping: the clock moves with the test's own waits and requests, in their order.
      const move = post<{ success: boolean; message: string }>(server, '/robot/move/named', {
        name: 'home',
        speed: 0.2,
      });
      try {
        await waitForMotion();
        const count = published.length;
        const res = await post<{ detail: string }>(url, '/trajectory/send', {
          points: [{ positions: W, time_from_start: 5 }],
        });
        assert.equal(res.status, 409);
        assert.match(res.body.detail, /busy/);
        const csv = await post<{ detail: string }>(url, '/trajectory/send_csv', csvForm(`${HEADER}\n${row(5)}\n`));
        assert.equal(csv.status, 409);
        assert.equal(published.length, count, 'nothing published while busy');
      } finally {
        const done = await steppedUntilSettled(clock, move, 'the move');
        assert.equal(done.status, 200);
        assert.equal(done.body.success, true, done.body.message);
      }
      await atRest(url);
      const res = await post(url, '/trajectory/send', { points: [{ positions: W, time_from_start: 8 }] });
      assert.equal(res.status, 200);
      await atRest(url);
    });

    async function waitForMotion(): Promise<void> {
      // The move is planned in the machine's time while the clock runs on.
      await movingOnClock(server, clock, 5000, 5);
    }
  });

  describe('POST /trajectory/send_csv', () => {
    const expectedPoints = CSV_POINTS.map((p) => ({
      positions: [...p.q],
      time_from_start: { sec: Math.floor(p.t), nanosec: Math.round((p.t % 1) * 1e9) },
    }));
    const shuffled = ['joint5', 't', 'joint2', 'joint7', 'joint1', 'joint4', 'joint6', 'joint3'];
    const variants: { name: string; text: FileContent; query?: string; filename?: string }[] = [
      { name: 'joint1..joint7 and t', text: csvText(PLAIN) },
      {
        name: 'joint_1..joint_7 names',
        text: csvText(['t', 'joint_1', 'joint_2', 'joint_3', 'joint_4', 'joint_5', 'joint_6', 'joint_7']),
      },
      {
        name: 'upper case names',
        text: csvText(['T', 'JOINT1', 'JOINT2', 'JOINT3', 'JOINT4', 'JOINT5', 'JOINT6', 'JOINT7']),
      },
      {
        name: 'mixed case joint_N names',
        text: csvText(['Time', 'Joint_1', 'JOINT_2', 'joint_3', 'Joint_4', 'jOiNt_5', 'JOINT_6', 'joint_7']),
      },
      { name: 'shuffled columns', text: csvText(shuffled) },
      { name: 'semicolons with ?separator=%3B', text: csvText(PLAIN, { sep: ';' }), query: '?separator=%3B' },
      { name: 'tabs with ?separator=%09', text: csvText(PLAIN, { sep: '\t' }), query: '?separator=%09' },
      { name: 'a time column named time', text: csvText(['time', ...PLAIN.slice(1)]) },
      { name: 'a time column named time_from_start', text: csvText([...PLAIN.slice(1), 'time_from_start']) },
      { name: 'a UTF-8 BOM', text: csvText(PLAIN, { bom: true }) },
      { name: 'CRLF line ends', text: csvText(PLAIN, { eol: '\r\n' }) },
      { name: 'blank trailing lines', text: csvText(PLAIN, { trailing: '\n\n\n  \n' }) },
      {
        name: 'blank trailing CRLF lines and no final data newline',
        text: `${csvText(PLAIN, { eol: '\r\n', trailing: '' })}\r\n\r\n`,
      },
      { name: 'no final newline', text: csvText(PLAIN, { trailing: '' }) },
      {
        name: 'quoted and padded cells',
        text: csvText(PLAIN, { cell: (v) => ` "${v}" ` }).replace(/^[^\n]*/, PLAIN.map((h) => `"${h}"`).join(',')),
      },
      {
        name: 'a BOM, CRLF, upper case joint_N, semicolons and shuffled columns together',
        text: csvText(
          ['JOINT_3', 'TIME_FROM_START', 'JOINT_1', 'JOINT_2', 'JOINT_7', 'JOINT_5', 'JOINT_6', 'JOINT_4'],
          { sep: ';', eol: '\r\n', bom: true },
        ),
        query: '?separator=%3B&validate_limits=true',
      },
      { name: 'a file name with a space', text: csvText(PLAIN), filename: 'my trajectory.csv' },
      { name: 'validate_limits=false', text: csvText(PLAIN), query: '?validate_limits=false' },
    ];
    variants.forEach((variant, index) => {
      it(`accepts a CSV with ${variant.name} and publishes the same points`, async () => {
        const filename = variant.filename ?? `variant-${index}.csv`;
        const count = published.length;
        const logBefore = await trajectoryLog();
        const res = await post(url, `/trajectory/send_csv${variant.query ?? ''}`, csvForm(variant.text, { filename }));
        assert.equal(res.status, 200, JSON.stringify(res.body));
        assert.deepEqual(res.body, {
          status: 'sent',
          points: 2,
          file: filename,
          filename,
          duration: 3,
          time_scale: 1,
          times_increasing: true,
        });
        assert.equal(published.length, count + 1);
        const msg = published.at(-1);
        assert.deepEqual(msg?.joint_names, [...JOINT_NAMES]);
        assert.deepEqual(
          msg?.points.map((p) => ({ positions: p.positions, time_from_start: p.time_from_start })),
          expectedPoints,
        );
        const lines = await newLines(logBefore);
        assert.ok(
          lines.some((l) => l.includes(`publishing 2 points (3 s) from POST /trajectory/send_csv (${filename})`)),
          lines.join('\n'),
        );
        assert.ok(
          lines.some((l) => /controller: accepted trajectory/.test(l)),
          lines.join('\n'),
        );
      });
    });

    it('leaves the arm at the CSV trajectory end once it finishes', async () => {
      const end = await atRest(url);
      assert.ok(maxDiff(end.position, CSV_POINTS[1].q) < 1e-9, end.position.join(', '));
    });

    const BAD_UTF8 = new Uint8Array([...new TextEncoder().encode(`${HEADER}\n`), 0x31, 0xff, 0xfe, 0x2c, 0x30]);
    const bad: { name: string; body: FormData | string; query?: string; loc: (string | number)[]; msg: RegExp }[] = [
      { name: 'no parts at all', body: new FormData(), loc: ['body', 'file'], msg: /Field required.*'file'/ },
      {
        name: 'the file under another part name',
        body: fileForm(`${HEADER}\n${row(1)}\n`, 'a.csv', 'csv'),
        loc: ['body', 'csv'],
        msg: /unexpected file part 'csv'/,
      },
      { name: 'an empty file', body: csvForm(''), loc: ['body', 'file', 1], msg: /^row 1: the file is empty/ },
      {
        name: 'a file of blank lines',
        body: csvForm('\n\r\n\n'),
        loc: ['body', 'file', 1],
        msg: /^row 1: the file is empty/,
      },
      {
        name: 'a header only',
        body: csvForm(`${HEADER}\n\n`),
        loc: ['body', 'file', 2],
        msg: /^row 2: no points after the header/,
      },
      {
        name: 'a missing joint column',
        body: csvForm('t,joint1,joint2,joint3,joint4,joint5,joint6\n1,0,0,0,-1.57,0,1.57\n'),
        loc: ['body', 'file', 1],
        msg: /^row 1: missing column\(s\): joint7$/,
      },
      {
        name: 'a missing time column',
        body: csvForm('joint1,joint2,joint3,joint4,joint5,joint6,joint7\n0,0,0,-1.57,0,1.57,0\n'),
        loc: ['body', 'file', 1],
        msg: /^row 1: missing column\(s\): a time column \(t, time, time_from_start\)$/,
      },
      {
        name: 'a duplicate joint column (joint1 and JOINT_1)',
        body: csvForm(`${HEADER},JOINT_1\n${row(1)},0\n`),
        loc: ['body', 'file', 1, 'JOINT_1'],
        msg: /^row 1, column JOINT_1: duplicate column for joint1/,
      },
      {
        name: 'a duplicate time column',
        body: csvForm(`t,${HEADER}\n1,${row(1)}\n`),
        loc: ['body', 'file', 1, 't'],
        msg: /^row 1, column t: duplicate time column/,
      },
      {
        // (Extra columns are ignored and named in the answer, as the robot stack ignored them; see tests/compat.)
        name: 'joint8 in place of joint7',
        body: csvForm(`${HEADER.replace('joint7', 'joint8')}\n${row(1)}\n`),
        loc: ['body', 'file', 1],
        msg: /^row 1: missing column\(s\): joint7; columns found: joint8/,
      },
      {
        name: 'a non-numeric cell',
        body: csvForm(`${HEADER}\n${row(1)}\n2,0,abc,0,-1.57,0,1.57,0\n`),
        loc: ['body', 'file', 3, 'joint2'],
        msg: /^row 3, column joint2: 'abc' is not a finite number/,
      },
      {
        name: 'an empty cell',
        body: csvForm(`${HEADER}\n1,0,0,0,-1.57,0,1.57,\n`),
        loc: ['body', 'file', 2, 'joint7'],
        msg: /^row 2, column joint7: '' is not a finite number/,
      },
      {
        name: "a cell 'inf'",
        body: csvForm(`${HEADER}\n1,0,0,inf,-1.57,0,1.57,0\n`),
        loc: ['body', 'file', 2, 'joint3'],
        msg: /^row 2, column joint3: 'inf' is not a finite number/,
      },
      {
        name: "a cell 'NaN'",
        body: csvForm(`${HEADER}\n1,0,0,0,-1.57,NaN,1.57,0\n`),
        loc: ['body', 'file', 2, 'joint5'],
        msg: /^row 2, column joint5: 'NaN' is not a finite number/,
      },
      {
        name: "a cell '-Infinity'",
        body: csvForm(`${HEADER}\n1,0,0,0,-Infinity,0,1.57,0\n`),
        loc: ['body', 'file', 2, 'joint4'],
        msg: /is not a finite number/,
      },
      {
        name: "a cell '1e999'",
        body: csvForm(`${HEADER}\n1e999,0,0,0,-1.57,0,1.57,0\n`),
        loc: ['body', 'file', 2, 't'],
        msg: /^row 2, column t: '1e999' is not a finite number/,
      },
      {
        name: 'a row with too few cells',
        body: csvForm(`${HEADER}\n${row(1)}\n2,0,0\n`),
        loc: ['body', 'file', 3],
        msg: /^row 3: expected 8 cells, found 3/,
      },
      {
        name: 'a row with too many cells',
        body: csvForm(`${HEADER}\n${row(1)},9\n`),
        loc: ['body', 'file', 2],
        msg: /^row 2: expected 8 cells, found 9/,
      },
      {
        name: 'a negative time',
        body: csvForm(`${HEADER}\n${row(1)}\n${row(-0.5)}\n`),
        loc: ['body', 'file', 3, 't'],
        msg: /^row 3, column t: time -0\.5 is negative/,
      },
      {
        name: 'a limit violation',
        body: csvForm(`${HEADER}\n${row(1)}\n2,0,0,0,-2.5,0,1.57,0\n`),
        loc: ['body', 'file', 3, 'joint4'],
        msg: /^row 3: joint4 = -2\.5 rad is outside its limits \[-2\.\d+, 2\.\d+\]/,
      },
      {
        name: 'a separator of 2 characters',
        body: csvForm(csvText(PLAIN, { sep: ';' })),
        query: '?separator=%3B%3B',
        loc: ['query', 'separator'],
        msg: /exactly one character/,
      },
      {
        name: 'an empty separator',
        body: csvForm(csvText(PLAIN)),
        query: '?separator=',
        loc: ['query', 'separator'],
        msg: /exactly one character/,
      },
      {
        name: 'the wrong separator (semicolons without ?separator)',
        body: csvForm(csvText(PLAIN, { sep: ';' })),
        loc: ['body', 'file', 1, PLAIN.join(';')],
        msg: /separator/,
      },
      {
        name: 'validate_limits=maybe',
        body: csvForm(csvText(PLAIN)),
        query: '?validate_limits=maybe',
        loc: ['query', 'validate_limits'],
        msg: /true or false/,
      },
      {
        name: 'an unknown query parameter',
        body: csvForm(csvText(PLAIN)),
        query: '?sep=%3B',
        loc: ['query', 'sep'],
        msg: /.+/,
      },
      {
        name: 'a repeated query parameter',
        body: csvForm(csvText(PLAIN)),
        query: '?separator=%2C&separator=%2C',
        loc: ['query', 'separator'],
        msg: /more than once/,
      },
      { name: 'invalid UTF-8', body: csvForm(BAD_UTF8), loc: ['body', 'file'], msg: /UTF-8/ },
      {
        name: 'an extra file part',
        body: csvForm(csvText(PLAIN), { extraFiles: { other: csvText(PLAIN) } }),
        loc: ['body', 'other'],
        msg: /unexpected file part 'other'/,
      },
      {
        name: 'an extra text field',
        body: csvForm(csvText(PLAIN), { extraFields: { note: 'x' } }),
        loc: ['body', 'note'],
        msg: /unexpected field 'note'/,
      },
      {
        name: 'the file part twice',
        body: csvForm(csvText(PLAIN), { extraFiles: { file: csvText(PLAIN) } }),
        loc: ['body', 'file'],
        msg: /more than once/,
      },
    ];
    for (const c of bad) {
      it(`answers 422 to ${c.name} (${c.loc.join('.')}), publishing nothing`, async () => {
        await assertNoEffect(async () => {
          const res = await post(url, `/trajectory/send_csv${c.query ?? ''}`, c.body);
          assert.equal(res.status, 422, JSON.stringify(res.body));
          const issues = issuesOf(res.body);
          assert.deepEqual(issues[0]?.loc, c.loc, describeIssues(issues));
          assert.match(issues[0]?.msg ?? '', c.msg);
        });
      });
    }

    it('answers 415 to a JSON body instead of multipart, publishing nothing', async () => {
      await assertNoEffect(async () => {
        const res = await post<{ detail: string }>(url, '/trajectory/send_csv', JSON.stringify({ points: [] }));
        assert.equal(res.status, 415);
        assert.match(res.body.detail, /expected a multipart\/form-data body \(got Content-Type 'application\/json'\)/);
      });
    });

    it('answers 413 to an upload over 10 MiB, publishing nothing', async () => {
      const big = `${HEADER}\n${`${row(1)}\n`.repeat(Math.ceil((10 * 1024 * 1024) / row(1).length) + 10)}`;
      assert.ok(big.length > 10 * 1024 * 1024);
      await assertNoEffect(async () => {
        const res = await post<{ detail: string }>(url, '/trajectory/send_csv', csvForm(big));
        assert.equal(res.status, 413);
        assert.match(res.body.detail, /larger than 10485760 bytes/);
      });
    });

    it('publishes a limit violation with validate_limits=false; the controller refuses it (logged) and the arm does not move', async () => {
      await assertRefusedByController(async () => {
        const res = await post(
          url,
          '/trajectory/send_csv?validate_limits=false',
          csvForm(`${HEADER}\n30,0,0,0,-2.5,0,1.57,0\n`, { filename: 'beyond.csv' }),
        );
        assert.equal(res.status, 200, JSON.stringify(res.body));
        assert.deepEqual(res.body, {
          status: 'sent',
          points: 1,
          file: 'beyond.csv',
          filename: 'beyond.csv',
          duration: 30,
          time_scale: 1,
          times_increasing: true,
        });
      }, /point 0: joint4 = -2\.5 rad is outside its limits/);
    });

    it('reports non-increasing CSV times like /trajectory/send', async () => {
      const q = (await atRest(url)).position;
      await assertRefusedByController(async () => {
        const res = await post<{ times_increasing: boolean; warning: string; file: string }>(
          url,
          '/trajectory/send_csv',
          csvForm(`${HEADER}\n${row(2, q)}\n${row(2, q)}\n`, { filename: 'same-time.csv' }),
        );
        assert.equal(res.status, 200);
        assert.equal(res.body.times_increasing, false);
        assert.equal(res.body.file, 'same-time.csv');
        assert.match(res.body.warning, /point 1/);
      }, /does not increase/);
    });
  });

  describe('GET /trajectory/logs', () => {
    it('bounds n to 1..300 (422 on 0, 301, abc, 1.5, a repeat or an unknown parameter)', async () => {
      for (const query of ['n=0', 'n=301', 'n=abc', 'n=1.5', 'n=-1', 'n=', 'n=1&n=2', 'lines=5']) {
        const res = await send(url, `/trajectory/logs?${query}`);
        const body = (await res.json()) as unknown;
        assert.equal(res.status, 422, query);
        assert.equal(issuesOf(body)[0]?.loc[0], 'query', query);
      }
      for (const n of [1, 300]) assert.ok((await trajectoryLog(n)).length <= n);
    });

    it('keeps the latest 300 entries, oldest first, each with an ISO UTC timestamp; n defaults to 50', async () => {
      const marker = `oldest-marker-${process.pid}.csv`;
      await atRest(url);
      const q = (await jointStates(url)).position;
      const res = await post(
        url,
        '/trajectory/send_csv',
        csvForm(`${HEADER}\n${row(1, q)}\n${row(1, q)}\n`, { filename: marker }),
      );
      assert.equal(res.status, 200);
      assert.ok((await trajectoryLog()).some((l) => l.includes(marker)));
      // 160 refused trajectories: 2 entries each ("publishing" and "refused"), 320 in all.
      let lastFromMs = 0;
      for (let k = 0; k < 160; k++) {
        lastFromMs = clock.epochMs();
        const r = await post(url, '/trajectory/send', {
          points: [
            { positions: q, time_from_start: k + 1 },
            { positions: q, time_from_start: k + 1 },
          ],
        });
        assert.equal(r.status, 200);
      }
      const all = await trajectoryLog(300);
      assert.equal(all.length, 300, 'n=300 returns 300 entries');
      assert.ok(!all.some((l) => l.includes(marker)), 'the oldest entries were dropped');
      let previous = '';
      for (const line of all) {
        const m = LOG_LINE.exec(line);
        assert.ok(m, `timestamped: ${line}`);
        const stamp = m[1] ?? '';
        assert.equal(new Date(stamp).toISOString(), stamp, 'a valid UTC instant');
        assert.ok(stamp >= previous, 'oldest first');
        previous = stamp;
      }
      // The app's clock's current time (the process clock in production): the last line is of the last send.
      assert.ok(
        Date.parse(previous) >= Math.floor(lastFromMs) && Date.parse(previous) <= clock.epochMs(),
        `timestamps are the current time of the app's clock: ${previous}, the last send from ${new Date(lastFromMs).toISOString()} to ${new Date(clock.epochMs()).toISOString()}`,
      );
      // Oldest first: each "publishing" entry comes right before the controller's answer to it, and the latest is last.
      assert.match(all.at(-2) ?? '', /publishing 2 points \(160 s\) from POST \/trajectory\/send/);
      assert.match(
        all.at(-1) ?? '',
        /controller: refused a trajectory: point 1: time_from_start 160 s does not increase/,
      );
      const byDefault = (await (await send(url, `/trajectory/logs`)).json()) as { lines: string[] };
      assert.equal(byDefault.lines.length, 50, 'n defaults to 50');
      assert.deepEqual(byDefault.lines, all.slice(-50));
      assert.deepEqual(await trajectoryLog(1), all.slice(-1));
    });
  });
});
