import { forwardKinematics, createFkWorkspace } from '../lib/kinematics/fk.ts';
import { abcFromMat } from '../lib/kinematics/rotation.ts';
import { linePath, planCartesian, tcpPose } from '../lib/planning/cartesian.ts';
import { planPtp } from '../lib/planning/ptp.ts';
import { trapezoid } from '../lib/planning/profile.ts';
import { createSample, sampleTrajectory, trajectoryDuration } from '../lib/planning/trajectory.ts';
import type { JointLimits } from '../lib/robot/limits.ts';
import { SimContext } from '../lib/sim/context.ts';
import { testConfig } from '../tests/support/server.ts';
import { loadChain } from './fixtures.ts';
import type { Section } from './section.ts';
import { quantile, seededRandom } from './stats.ts';
import type { Table } from './table.ts';

interface PlannerRow {
  readonly planner: string;
  readonly success: number;
  readonly medianMs: number;
  readonly p95Ms: number;
}

const WORK = [0, 0, 0, -1.57, 0, 1.57, 0];

/** 100 fixed reachable targets in front of the robot, flange pointing down-ish (seeded). */
async function targets(count: number): Promise<{ x: number; y: number; z: number; a: number; b: number; c: number }[]> {
  const { chain } = await loadChain();
  const fk = createFkWorkspace(chain);
  const random = seededRandom(42);
  const out: { x: number; y: number; z: number; a: number; b: number; c: number }[] = [];
  while (out.length < count) {
    const q = WORK.map((v, i) => v + (random() - 0.5) * (i === 0 ? 1.6 : 0.8));
    forwardKinematics(chain, q, fk);
    const [x = 0, y = 0, z = 0] = fk.tipPos;
    if (z < 0.25 || x < 0.2) continue;
    const { a, b, c } = abcFromMat(fk.tipRot);
    out.push({ x, y, z, a, b, c });
  }
  return out;
}

/**
 * Planning time per planner on 100 fixed targets from "work", in a scene with one box (so ompl and
 * chomp have something to plan around); plans only, nothing moves.
 */
async function plannerBench(count = 100): Promise<PlannerRow[]> {
  const goals = await targets(count);
  const rows: PlannerRow[] = [];
  const context = await SimContext.create(
    await testConfig({
      sim: {
        publish_joint_states: false,
        obstacles: [{ name: 'box', center: [0.55, -0.35, 0.2], size: [0.2, 0.2, 0.4] }],
        planning_time_s: 2,
      },
    }),
  );
  try {
    for (const planner of ['ptp', 'lin', 'circ', 'ompl', 'chomp']) {
      const times: number[] = [];
      let ok = 0;
      for (const g of goals) {
        const circ =
          planner === 'circ' ? { circ_interim: { x: (g.x + 0.4) / 2 + 0.05, y: g.y / 2, z: (g.z + 0.614) / 2 } } : {};
        const t0 = performance.now();
        const planned = await context.planPoseGoal({ ...g, speed: 0.5, planner, frame_id: '', ...circ });
        times.push(performance.now() - t0);
        if (planned.ok) ok++;
      }
      rows.push({ planner, success: ok / goals.length, medianMs: quantile(times, 0.5), p95Ms: quantile(times, 0.95) });
    }
  } finally {
    await context.close();
  }
  return rows;
}

/** Largest distance (m) of the executed TCP path from its line, over LIN plans to nearby targets (sampled every 1 ms as the controller interpolates). */
async function linDeviation(limits: JointLimits, count = 40): Promise<{ plans: number; maxDeviationM: number }> {
  const { chain } = await loadChain();
  const fk = createFkWorkspace(chain);
  const random = seededRandom(99);
  const start = [0, 0.3, 0, -1.4, 0, 1.3, 0];
  const from = tcpPose(chain, start);
  let worst = 0;
  let plans = 0;
  const sample = createSample(7);
  for (let k = 0; k < count; k++) {
    const to = from.position.map((v) => v + (random() - 0.5) * 0.3);
    const planned = planCartesian(
      chain,
      limits,
      linePath(from.position, from.orientation, to, from.orientation),
      start,
      { speed: 0.3, accelScale: 0 },
      { nowMs: () => performance.now() },
    );
    if (!planned.ok) continue;
    plans++;
    const duration = trajectoryDuration(planned.value);
    const d = to.map((v, i) => v - (from.position[i] ?? 0));
    const len2 = d.reduce((s, v) => s + v * v, 0);
    for (let t = 0; t <= duration; t += 0.001) {
      sampleTrajectory(planned.value, t, sample);
      forwardKinematics(chain, sample.q, fk);
      const rel = [0, 1, 2].map((i) => (fk.tipPos[i] ?? 0) - (from.position[i] ?? 0));
      const along = Math.max(0, Math.min(1, rel.reduce((s, v, i) => s + v * (d[i] ?? 0), 0) / len2));
      worst = Math.max(worst, Math.hypot(...rel.map((v, i) => v - along * (d[i] ?? 0))));
    }
  }
  return { plans, maxDeviationM: worst };
}

/** PTP duration over the lower bound max_i(T_i) (each joint alone, time-optimal under its scaled limits), over random moves. */
function ptpOverOptimal(limits: JointLimits, count = 1000): { median: number; max: number } {
  const random = seededRandom(5);
  const ratios: number[] = [];
  for (let k = 0; k < count; k++) {
    const a = limits.minRad.map((lo, i) => lo + random() * ((limits.maxRad[i] ?? 0) - lo));
    const b = limits.minRad.map((lo, i) => lo + random() * ((limits.maxRad[i] ?? 0) - lo));
    const speed = 0.05 + random() * 0.95;
    const plan = planPtp(a, b, limits, { speed, accelScale: 0 });
    const bound = Math.max(
      ...a.map(
        (q, i) =>
          trapezoid(
            Math.abs((b[i] ?? 0) - q),
            (limits.maxVelRadS[i] ?? 0) * speed,
            (limits.maxAccRadS2[i] ?? 0) * speed,
          ).duration,
      ),
    );
    ratios.push(trajectoryDuration(plan) / bound);
  }
  return { median: quantile(ratios, 0.5), max: Math.max(...ratios) };
}

export const plannerSection: Section = {
  id: 'planning',
  description: 'planning time per planner (plan only)',
  async run() {
    const planners = await plannerBench();
    const table: Table = {
      title: 'Planning time per planner, 100 fixed targets from work, one box in the scene (plan only)',
      header: ['planner', 'success %', 'median ms', 'p95 ms'],
      rows: planners.map((r) => [r.planner, r.success * 100, r.medianMs, r.p95Ms]),
    };
    return [table];
  },
};

export const pathQualitySection: Section = {
  id: 'paths',
  description: 'LIN straightness and PTP duration against the time-optimal bound',
  async run() {
    const { limits } = await testConfig();
    const lin = await linDeviation(limits);
    const ptp = ptpOverOptimal(limits);
    const table: Table = {
      title: 'Path quality',
      header: ['measure', 'value', 'target'],
      rows: [
        [
          `LIN: max TCP distance from the line (${lin.plans} plans, 1 ms samples)`,
          `${(lin.maxDeviationM * 1000).toExponential(2)} mm`,
          '<= 0.1 mm',
        ],
        ['PTP: duration / max_i(T_i) over 1000 moves, median', ptp.median, '<= 1.02'],
        ['PTP: duration / max_i(T_i), worst', ptp.max, ''],
      ],
    };
    return [table];
  },
};
