/**
 * checkTrajectoryRequest (what the trajectory worker runs for both endpoints) in process, and the
 * worker itself: a job answered off the main thread, the bounded queue, the end on close.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { SteppedClock } from '../../lib/clock.ts';
import { after, before, describe, it } from 'node:test';
import type { JointLimits } from '../../lib/robot/limits.ts';
import {
  type CheckRequest,
  type CheckResult,
  checkTrajectoryRequest,
  packedPoint,
} from '../../lib/trajectory/check.ts';
import type { ArmState } from '../../lib/planning/dynamics.ts';
import { DEFAULT_MAX_UPLOADS } from '../../lib/settings/schema.ts';
import {
  checkOffThread,
  closeTrajectoryWorker,
  configureTrajectoryWorker,
  MAX_PENDING,
} from '../../lib/trajectory/worker-pool.ts';
import { CHECKER_NICENESS } from '../../lib/trajectory/worker-priority.ts';
import { bundledLimits, WORK } from '../support/arm.ts';

const REST: ArmState = { positions: WORK, velocities: [0, 0, 0, 0, 0, 0, 0] };
const HEADER = 't,joint1,joint2,joint3,joint4,joint5,joint6,joint7';

let limits: JointLimits;

const jsonFrom = (state: ArmState | undefined, body: unknown): CheckRequest => ({
  source: { kind: 'json', text: typeof body === 'string' ? body : JSON.stringify(body) },
  state,
  limits,
});
const json = (body: unknown): CheckRequest => jsonFrom(REST, body);
const csv = (text: string, validateLimits = true): CheckRequest => ({
  source: { kind: 'csv', bytes: new TextEncoder().encode(text), separator: ',', validateLimits },
  state: REST,
  limits,
});
const q = (j1: number) => WORK.map((v, j) => (j === 0 ? j1 : v));

function issues(result: CheckResult): { loc: readonly (string | number)[]; msg: string; type: string }[] {
  assert.ok(!result.ok, 'refused');
  assert.equal(result.error.kind, 'validation', JSON.stringify(result.error));
  return result.error.kind === 'validation' ? [...result.error.issues] : [];
}

describe('the trajectory check', () => {
  before(async () => {
    limits = await bundledLimits();
  });

  describe('checkTrajectoryRequest', () => {
    it('fills velocities with validate_limits and packs the points (positions, velocities, times)', () => {
      const result = checkTrajectoryRequest(
        json({
          points: [
            { positions: q(0.1), time_from_start: 1 },
            { positions: q(0.3), time_from_start: 2 },
          ],
        }),
      );
      assert.ok(result.ok);
      assert.equal(result.filled, true);
      assert.equal(result.points.count, 2);
      assert.deepEqual(Array.from(result.points.times), [1, 2]);
      const first = packedPoint(result.points, 0);
      assert.deepEqual(first.positions, q(0.1));
      assert.ok(
        Math.abs((first.velocities?.[0] ?? 0) - 0.15) < 1e-12,
        'the three-point estimate: (1 x 0.1 + 1 x 0.2) / 2',
      );
      assert.deepEqual(packedPoint(result.points, 1).velocities, [0, 0, 0, 0, 0, 0, 0]);
    });

    it('publishes positions only with validate_limits false, non-increasing times, or a lone point at t = 0', () => {
      for (const body of [
        { validate_limits: false, points: [{ positions: q(1.7), time_from_start: 1 }] },
        {
          points: [
            { positions: q(0), time_from_start: 1 },
            { positions: q(0), time_from_start: 1 },
          ],
        },
        { points: [{ positions: q(0), time_from_start: 0 }] },
      ]) {
        const result = checkTrajectoryRequest(json(body));
        assert.ok(result.ok, JSON.stringify(body));
        assert.equal(result.filled, false);
        assert.equal(result.points.velocities, undefined);
      }
    });

    it('refuses a lone point at t = 0 beyond 0.1 rad of the current position as a jump (JSON and CSV), naming the joint', () => {
      // The issue's body: joint1 0.5 rad from the arm, at t = 0.
      const [fromJson] = issues(checkTrajectoryRequest(json({ points: [{ positions: q(0.5), time_from_start: 0 }] })));
      assert.deepEqual(fromJson?.loc, ['body', 'points', 0, 'positions', 0]);
      assert.equal(
        fromJson?.msg,
        'point 0: joint1 is at t = 0 but 0.5 rad from the current position: the arm would jump; give the first point a time after 0',
      );
      const far = WORK.map((v, j) => (j === 5 ? v - 0.2 : v));
      const [fromCsv] = issues(checkTrajectoryRequest(csv(`${HEADER}\n0,${far.join(',')}\n`)));
      assert.deepEqual(fromCsv?.loc, ['body', 'file', 2, 'joint6']);
      assert.match(fromCsv?.msg ?? '', /joint6 is at t = 0 but 0\.2 rad from the current position: the arm would jump/);
      // Within 0.1 rad it is a hold point, as before; without a joint state it cannot be told: 503.
      const near = checkTrajectoryRequest(json({ points: [{ positions: q(0.099), time_from_start: 0 }] }));
      assert.ok(near.ok, JSON.stringify(near));
      const blind = checkTrajectoryRequest(jsonFrom(undefined, { points: [{ positions: q(0), time_from_start: 0 }] }));
      assert.ok(!blind.ok && blind.error.kind === 'unavailable', JSON.stringify(blind));
    });

    it('locates a dynamic limit violation at the point (JSON) or the row and joint column (CSV)', () => {
      const [fromJson] = issues(checkTrajectoryRequest(json({ points: [{ positions: q(1.7), time_from_start: 1 }] })));
      assert.deepEqual(fromJson, {
        loc: ['body', 'points', 0, 'positions', 0],
        msg: 'point 0: joint1 would need 10.2 rad/s^2 (limit 8.5521) between t = 0 and 1 s: add time or points',
        type: 'limit',
      });
      const [fromCsv] = issues(
        checkTrajectoryRequest(csv(`${HEADER}\n1,0,0,0,-1.57,0,1.57,0\n2,1.7,0,0,-1.57,0,1.57,0\n`)),
      );
      assert.deepEqual(fromCsv?.loc, ['body', 'file', 3, 'joint1']);
      assert.match(
        fromCsv?.msg ?? '',
        /^row 3: joint1 would need [\d.]+ rad\/s\^2 \(limit 8\.5521\) between t = 1 and 2 s: add time or points$/,
      );
    });

    it('checks the position limits of every point first, listing up to 20', () => {
      const points = Array.from({ length: 30 }, (_, i) => ({
        positions: WORK.map((v, j) => (j === 1 ? 2.5 : v)),
        time_from_start: i + 1,
      }));
      const found = issues(checkTrajectoryRequest(json({ points })));
      assert.equal(found.length, 20);
      assert.deepEqual(found[0]?.loc, ['body', 'points', 0, 'positions', 1]);
    });

    it('bounds a 422 that would list thousands of issues to 20 and a count (it crosses threads small)', () => {
      // Strings that are not numbers (numeric strings such as '0' are taken as numbers, as FastAPI took them).
      const points = Array.from({ length: 5000 }, (_, i) => ({
        positions: ['x', 'x', 'x', 'x', 'x', 'x', 'x'],
        time_from_start: i,
      }));
      const found = issues(checkTrajectoryRequest(json({ points })));
      assert.equal(found.length, 21);
      assert.equal(found[20]?.type, 'more_issues');
      assert.match(found[20]?.msg ?? '', /^and 34980 more issue\(s\)/);
    });

    it('answers the JSON and CSV errors of the endpoints: empty, malformed, schema, not UTF-8, CSV rows beyond the bounds', () => {
      assert.deepEqual(issues(checkTrajectoryRequest(json('  ')))[0]?.loc, ['body']);
      assert.equal(issues(checkTrajectoryRequest(json('{"points": [')))[0]?.type, 'json_invalid');
      assert.deepEqual(
        issues(checkTrajectoryRequest(json({ points: [{ positions: q(0), time_from_start: 86_401 }] })))[0]?.loc,
        ['body', 'points', 0, 'time_from_start'],
      );
      const badUtf8: CheckRequest = {
        source: { kind: 'csv', bytes: new Uint8Array([0x74, 0xff, 0x0a]), separator: ',', validateLimits: true },
        state: REST,
        limits,
      };
      assert.equal(issues(checkTrajectoryRequest(badUtf8))[0]?.type, 'encoding');
      const [late] = issues(checkTrajectoryRequest(csv(`${HEADER}\n1e300,0,0,0,-1.57,0,1.57,0\n`, false)));
      assert.deepEqual(late, {
        loc: ['body', 'file', 2, 't'],
        msg: 'row 2, column t: time 1e+300 s is beyond 86400 s',
        type: 'csv',
      });
    });

    it('needs a joint state to check the execution from (503 without one), but not to publish with validate_limits false', () => {
      const refused = checkTrajectoryRequest(
        jsonFrom(undefined, { points: [{ positions: q(0.1), time_from_start: 1 }] }),
      );
      assert.ok(!refused.ok && refused.error.kind === 'unavailable', JSON.stringify(refused));
      assert.ok(
        checkTrajectoryRequest(
          jsonFrom(undefined, { validate_limits: false, points: [{ positions: q(0.1), time_from_start: 1 }] }),
        ).ok,
      );
    });
  });

  describe('the trajectory worker thread', () => {
    after(closeTrajectoryWorker);

    it('answers a job off the main thread with the same result as in process, the points transferred', async () => {
      const request = csv(`${HEADER}\n1,0.1,0,0,-1.57,0,1.57,0\n2,0.2,0,0,-1.57,0,1.57,0\n`);
      const expected = checkTrajectoryRequest(request);
      const result = await checkOffThread(request);
      assert.deepEqual(result, expected);
    });

    it(`keeps at most ${MAX_PENDING} jobs waiting: more are a 503 at once`, async () => {
      const body = { points: Array.from({ length: 2000 }, (_, i) => ({ positions: q(0), time_from_start: i + 1 })) };
      const results = await Promise.all(Array.from({ length: MAX_PENDING + 3 }, () => checkOffThread(json(body))));
      assert.equal(results.filter((r) => r.ok).length, MAX_PENDING);
      const busy = results.filter((r) => !r.ok);
      assert.equal(busy.length, 3);
      for (const r of busy)
        assert.ok(!r.ok && r.error.kind === 'unavailable' && /requests waiting/.test(r.error.detail));
    });

    it('keeps as many CSV uploads waiting as web.limits.max_uploads (more than JSON bodies): none admitted is refused', async () => {
      const uploads = MAX_PENDING + 4;
      configureTrajectoryWorker({ maxUploads: uploads });
      try {
        const rows = Array.from({ length: 2000 }, (_, i) => `${i + 1},0,0,0,-1.57,0,1.57,0`).join('\n');
        const text = `${HEADER}\n${rows}\n`;
        const results = await Promise.all(Array.from({ length: uploads + 1 }, () => checkOffThread(csv(text, false))));
        assert.equal(results.filter((r) => r.ok).length, uploads);
        const busy = results.filter((r) => !r.ok);
        assert.equal(busy.length, 1);
        for (const r of busy)
          assert.ok(!r.ok && r.error.kind === 'unavailable' && /CSV uploads waiting/.test(r.error.detail));
      } finally {
        configureTrajectoryWorker({ maxUploads: DEFAULT_MAX_UPLOADS });
      }
    });

    /** Runs `body` with the checker started and its timeout 1,000 ms of a stepped clock; the defaults back after. */
    async function onSteppedTimeout(body: (clock: SteppedClock) => Promise<void>): Promise<void> {
      // The worker started (its start-up is not a check).
      assert.ok((await checkOffThread(csv(`${HEADER}\n1,0.1,0,0,-1.57,0,1.57,0\n`))).ok);
      const clock = new SteppedClock();
      configureTrajectoryWorker({ maxUploads: 3, jobTimeoutMs: 1000, clock });
      try {
        await body(clock);
      } finally {
        configureTrajectoryWorker({ maxUploads: DEFAULT_MAX_UPLOADS });
      }
    }
    /** A CSV of `rows` rows, every point within the limits, one second apart. */
    const rowsCsv = (rows: number) =>
      `${HEADER}\n${Array.from({ length: rows }, (_, i) => `${i + 1},0,0,0,-1.57,0,1.57,0`).join('\n')}\n`;

    it('times a check from when it is first in line: jobs waiting behind others past the timeout are all answered', async () => {
      // Three checks wait together; each takes 800 ms of a 1,000 ms timeout (a stepped clock: neither the checker's
      // speed nor the machine's load moves it). Timed from when they were queued, the second and third would be past it
      // at 1,600 and 2,400 ms, and would take the others with them. The clock moves while job k is surely being checked:
      // job 1 is posted as it is queued, job k + 1 as job k's answer comes (this loop goes on from there, before any
      // other message of the worker), and the clock moves and runs its timers at once, before the worker can answer.
      await onSteppedTimeout(async (clock) => {
        const text = rowsCsv(2_000);
        const jobs = Array.from({ length: 3 }, () => checkOffThread(csv(text, false)));
        for (const [k, job] of jobs.entries()) {
          clock.advanceAtOnce(800);
          const result = await job;
          assert.ok(result.ok, `job ${k + 1} at ${clock.nowMs()} ms of the clock: ${JSON.stringify(result)}`);
        }
      });
    });

    it('fails a check that takes longer than the timeout once first in line, on the clock it is given', async () => {
      await onSteppedTimeout(async (clock) => {
        const job = checkOffThread(csv(rowsCsv(20_000), false));
        // At once: the check is posted as it is queued, and cannot have been answered before the clock moved.
        clock.advanceAtOnce(1000);
        const result = await job;
        assert.equal(result.ok, false);
        assert.match(JSON.stringify(result), /took longer than 1 s/);
      });
    });

    it(`runs ${CHECKER_NICENESS} nicer than the event loop's thread, which keeps its priority (Linux)`, {
      skip: process.platform !== 'linux' && 'a nice value is per thread on Linux only',
    }, async () => {
      assert.ok((await checkOffThread(csv(`${HEADER}\n1,0.1,0,0,-1.57,0,1.57,0\n`))).ok);
      // Field 19 of /proc/<pid>/task/<tid>/stat (after the command name in parentheses) is the thread's nice value.
      const niceOf = (tid: string) => {
        const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
      };
      const own = getPriority();
      const nices = readdirSync('/proc/self/task').map(niceOf);
      assert.equal(niceOf(String(process.pid)), own);
      assert.ok(nices.includes(Math.min(19, own + CHECKER_NICENESS)), `threads' nice values: ${nices.join(', ')}`);
    });

    it('answers a waiting job its refusal, unchecked, when its turn comes: jobs a stop came after do not wait for checks', async () => {
      const long = { points: Array.from({ length: 20_000 }, (_, i) => ({ positions: q(0), time_from_start: i + 1 })) };
      const short = { points: [{ positions: q(0.01), time_from_start: 1 }] };
      let stopped = false;
      const refusal = () => (stopped ? { kind: 'busy' as const, detail: 'a stop came since' } : undefined);
      const first = checkOffThread(json(long), [], refusal);
      // Valid bodies behind it: checked, each would be ok; the stop comes while they wait.
      const waiting = Array.from({ length: 5 }, () => checkOffThread(json(short), [], refusal));
      stopped = true;
      const results = await Promise.all(waiting);
      for (const r of results) assert.ok(!r.ok && r.error.kind === 'busy', JSON.stringify(r).slice(0, 200));
      // The job being checked when the stop came is answered by its check (the caller refuses it after).
      assert.ok((await first).ok);
      stopped = false;
      assert.ok((await checkOffThread(json(short), [], refusal)).ok);
    });

    it('fails the jobs still waiting when it is closed, and starts again on the next job', async () => {
      const body = { points: Array.from({ length: 20_000 }, (_, i) => ({ positions: q(0), time_from_start: i + 1 })) };
      const waiting = checkOffThread(json(body));
      await closeTrajectoryWorker();
      const result = await waiting;
      assert.ok(
        !result.ok && result.error.kind === 'unavailable' && /shutting down/.test(result.error.detail),
        JSON.stringify(result).slice(0, 200),
      );
      assert.ok((await checkOffThread(json({ points: [{ positions: q(0.01), time_from_start: 1 }] }))).ok);
    });
  });
});
