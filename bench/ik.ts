import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createFkWorkspace, forwardKinematics } from '../lib/kinematics/fk.ts';
import { createIkWorkspace, solveIk } from '../lib/kinematics/ik.ts';
import { JOINTS, loadChain } from './fixtures.ts';
import type { Section } from './section.ts';
import { quantileSorted, seededRandom } from './stats.ts';
import { type Table, verdict } from './table.ts';

const PYTHON = '/usr/bin/python3';
const KDL_SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'kdl_ik.py');

/** One row of the IK table. */
interface IkRow {
  readonly solver: string;
  readonly success: number;
  readonly medianUs: number;
  readonly p95Us: number;
}

/**
 * The TRAC-IK protocol: `count` random in-limit configurations, their FK as targets, the solver
 * seeded at the middle of the limits, a 5 ms budget per solve, success = pose within 1e-5 (m and
 * rad) and inside the limits. armgate's solver here, KDL's NR_JL and LMA (PyKDL, Debian's
 * python3-pykdl) on the same chain, limits and targets in the same run.
 */
async function ikBench(count = 10_000): Promise<{ rows: IkRow[]; note?: string }> {
  const { chain, min, max } = await loadChain();
  const random = seededRandom(20261122);
  const configs = Array.from({ length: count }, () => min.map((lo, i) => lo + random() * ((max[i] ?? 0) - lo)));
  const mid = min.map((lo, i) => (lo + (max[i] ?? 0)) / 2);
  const fk = createFkWorkspace(chain);
  const ws = createIkWorkspace(chain);
  const times: number[] = [];
  let ok = 0;
  const restarts = seededRandom(7);
  // Warm the JIT on other targets first, so the timed solves measure compiled code.
  const warm = seededRandom(1);
  for (let k = 0; k < 1000; k++) {
    forwardKinematics(
      chain,
      min.map((lo, i) => lo + warm() * ((max[i] ?? 0) - lo)),
      fk,
    );
    solveIk(
      chain,
      min,
      max,
      Float64Array.from(fk.tipPos),
      Float64Array.from(fk.tipRot),
      mid,
      { deadlineMs: performance.now() + 5, nowMs: () => performance.now(), random: warm },
      ws,
    );
  }
  for (const q of configs) {
    forwardKinematics(chain, q, fk);
    const pos = Float64Array.from(fk.tipPos);
    const rot = Float64Array.from(fk.tipRot);
    const t0 = performance.now();
    const r = solveIk(
      chain,
      min,
      max,
      pos,
      rot,
      mid,
      { deadlineMs: t0 + 5, nowMs: () => performance.now(), random: restarts },
      ws,
    );
    times.push((performance.now() - t0) * 1000);
    if (
      r.status === 'converged' &&
      r.posErrM <= 1e-5 &&
      r.rotErrRad <= 1e-5 &&
      Array.from(r.qRad).every((v, i) => v >= (min[i] ?? 0) && v <= (max[i] ?? 0))
    )
      ok++;
  }
  times.sort((a, b) => a - b);
  const rows: IkRow[] = [
    {
      solver: 'armgate LM + restarts',
      success: ok / count,
      medianUs: quantileSorted(times, 0.5),
      p95Us: quantileSorted(times, 0.95),
    },
  ];
  if (!existsSync(PYTHON)) return { rows, note: 'KDL comparison skipped: /usr/bin/python3 is missing' };
  const joints = JOINTS.map((_, i) => ({
    origin: Array.from(chain.originPos.subarray(3 * i, 3 * i + 3)),
    axis: Array.from(chain.axis.subarray(3 * i, 3 * i + 3)),
  }));
  const input = JSON.stringify({ joints, tip: Array.from(chain.tipPos), min, max, configs, eps: 1e-5 });
  const kdl = spawnSync(PYTHON, [KDL_SCRIPT], { input, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
  if (kdl.status !== 0) {
    const missing = /No module named 'PyKDL'/.test(kdl.stderr);
    return {
      rows,
      note: missing
        ? 'KDL comparison not run: PyKDL is missing. Install it with: sudo apt-get install python3-pykdl python3-numpy'
        : `KDL comparison failed: ${kdl.stderr.trim().split('\n').at(-1)}`,
    };
  }
  const results = JSON.parse(kdl.stdout) as Record<string, { success: number; median_us: number; p95_us: number }>;
  for (const [solver, r] of Object.entries(results))
    rows.push({ solver, success: r.success, medianUs: r.median_us, p95Us: r.p95_us });
  return { rows };
}

/**
 * An unreachable target (x = 2 m) with a 5 ms budget: the wall time the solver takes to give up (the tests check,
 * on a clock counting its work, that it gives up by its deadline), over 200 solves after a warm-up.
 */
async function giveUpMs(count = 200): Promise<{ medianMs: number; p95Ms: number; worstMs: number }> {
  const { chain, min, max } = await loadChain();
  const work = [0, 0, 0, -1.57, 0, 1.57, 0];
  const fk = createFkWorkspace(chain);
  forwardKinematics(chain, work, fk);
  const rot = Float64Array.from(fk.tipRot);
  const ws = createIkWorkspace(chain);
  const random = seededRandom(42);
  const times: number[] = [];
  for (let k = 0; k < count + 20; k++) {
    const t0 = performance.now();
    solveIk(
      chain,
      min,
      max,
      [2, 0, 0.5],
      rot,
      work,
      { deadlineMs: t0 + 5, nowMs: () => performance.now(), random },
      ws,
    );
    if (k >= 20) times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return { medianMs: quantileSorted(times, 0.5), p95Ms: quantileSorted(times, 0.95), worstMs: times.at(-1) ?? 0 };
}

export const ikSection: Section = {
  id: 'ik',
  description: 'IK under the TRAC-IK protocol, beside KDL NR_JL and LMA (PyKDL) when installed',
  async run() {
    const ik = await ikBench();
    const table: Table = {
      title:
        'IK, TRAC-IK protocol: 10,000 random in-limit targets, seed at mid-limits, 5 ms budget, success = 1e-5 and in limits',
      header: ['solver', 'success %', 'median us', 'p95 us', 'target'],
      rows: ik.rows.map((r, i) => [
        r.solver,
        r.success * 100,
        r.medianUs,
        r.p95Us,
        i === 0 ? '>= 99.9 %, median < 100 us' : '',
      ]),
      ...(ik.note ? { notes: [ik.note] } : {}),
    };
    const giveUp = await giveUpMs();
    const unreachable: Table = {
      title:
        'IK on an unreachable target (x = 2 m), 5 ms budget: wall time to give up, 200 solves after 20 warm-up (ms)',
      header: ['median', 'p95', 'worst', 'target'],
      rows: [[giveUp.medianMs, giveUp.p95Ms, giveUp.worstMs, `median < 5 + 1 ms: ${verdict(giveUp.medianMs < 6)}`]],
      notes: [`load average ${loadavg()[0]?.toFixed(2)} while measured`],
    };
    return [table, unreachable];
  },
};
