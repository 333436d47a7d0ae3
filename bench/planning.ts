import { createFkWorkspace, forwardKinematics } from '../lib/kinematics/fk.ts';
import { createIkWorkspace, solveIk } from '../lib/kinematics/ik.ts';
import { abcFromMat, matFromAbc } from '../lib/kinematics/rotation.ts';
import { linePath, planCartesian, tcpPose } from '../lib/planning/cartesian.ts';
import { planPtp } from '../lib/planning/ptp.ts';
import { trapezoid } from '../lib/planning/profile.ts';
import { createSample, sampleTrajectory, trajectoryDuration } from '../lib/planning/trajectory.ts';
import type { JointLimits } from '../lib/robot/limits.ts';
import { SimContext } from '../lib/sim/context.ts';
import { ArmModel } from '../lib/sim/model.ts';
import { testConfig } from '../tests/support/server.ts';
import { JOINTS, loadChain, loadUrdf } from './fixtures.ts';
import type { Section } from './section.ts';
import { quantile, seededRandom } from './stats.ts';
import type { Table } from './table.ts';

interface PlannerRow {
  readonly planner: string;
  /** Successes over the feasible targets (0..1). */
  readonly success: number;
  readonly failed: number;
  readonly medianMs: number;
  readonly p95Ms: number;
  /** Why plans to feasible targets failed: reason -> count, most frequent first. */
  readonly reasons: readonly (readonly [string, number])[];
}

interface Target {
  readonly x: number;
  readonly y: number;
  readonly z: number;
  readonly a: number;
  readonly b: number;
  readonly c: number;
  /** The configuration whose flange pose this is. */
  readonly qRad: readonly number[];
}

/** Whether a collision-free configuration reaches a target, and if not, why. */
type Feasibility =
  | { readonly feasible: true; readonly ownCollides: boolean }
  | { readonly feasible: false; readonly why: string };

const WORK = [0, 0, 0, -1.57, 0, 1.57, 0];
const BOX = { name: 'box', center: [0.55, -0.35, 0.2], size: [0.2, 0.2, 0.4] } as const;
/** IK attempts from random seeds before a target whose own configuration collides is called colliding. */
const FEASIBILITY_SEEDS = 40;

/** 100 fixed reachable targets in front of the robot, flange pointing down-ish (seeded). */
async function targets(count: number): Promise<Target[]> {
  const { chain } = await loadChain();
  const fk = createFkWorkspace(chain);
  const random = seededRandom(42);
  const out: Target[] = [];
  while (out.length < count) {
    const q = WORK.map((v, i) => v + (random() - 0.5) * (i === 0 ? 1.6 : 0.8));
    forwardKinematics(chain, q, fk);
    const [x = 0, y = 0, z = 0] = fk.tipPos;
    if (z < 0.25 || x < 0.2) continue;
    const { a, b, c } = abcFromMat(fk.tipRot);
    out.push({ x, y, z, a, b, c, qRad: q });
  }
  return out;
}

/**
 * Classifies each target in the bench's scene, independently of the planners: feasible when its
 * own configuration is free, or when one of {@link FEASIBILITY_SEEDS} IK solutions from random
 * seeds is; otherwise unreachable (no IK solution within the limits) or colliding (every solution
 * found collides; named by what its own configuration touches).
 */
async function classify(goals: readonly Target[], marginM: number): Promise<Feasibility[]> {
  const { chain, min, max } = await loadChain();
  const model = await ArmModel.load(await loadUrdf(), JOINTS, { marginM, boxes: [BOX] });
  const ws = createIkWorkspace(chain);
  const random = seededRandom(77);
  const rot = new Float64Array(9);
  try {
    return goals.map((g): Feasibility => {
      const own = model.collisionAt(g.qRad);
      if (!own) return { feasible: true, ownCollides: false };
      matFromAbc(rot, g.a, g.b, g.c);
      let solved = 0;
      for (let k = 0; k < FEASIBILITY_SEEDS; k++) {
        const seed = min.map((lo, i) => lo + random() * ((max[i] ?? 0) - lo));
        const deadlineMs = performance.now() + 20;
        const ik = solveIk(
          chain,
          min,
          max,
          [g.x, g.y, g.z],
          rot,
          seed,
          { deadlineMs, nowMs: () => performance.now(), random },
          ws,
        );
        if (ik.status !== 'converged') continue;
        solved++;
        if (!model.collisionAt(ik.qRad)) return { feasible: true, ownCollides: true };
      }
      if (solved === 0) return { feasible: false, why: 'unreachable' };
      return { feasible: false, why: `colliding (${[own.a, own.b].sort().join(' with ')})` };
    });
  } finally {
    model.dispose();
  }
}

/** A planner's refusal in a few words, for counting: the kind of failure and the pair it names, without coordinates. */
function reasonOf(message: string): string {
  const pair = /\(([^)]*?) with ([^)]*?)\)/.exec(message);
  const named = pair ? ` (${[pair[1], pair[2]].sort().join(' with ')})` : '';
  if (/target is in collision/.test(message)) return `target in collision${named}`;
  if (/path would collide/.test(message)) return `path collides${named}`;
  if (/no inverse kinematics/.test(message)) return 'no IK solution';
  const short = message.split(/ at \(| \(within /)[0] ?? message;
  return short.length > 70 ? `${short.slice(0, 67)}...` : short;
}

/**
 * The collision model over `count` random in-limit configurations (no box: the arm and the floor):
 * the share that collides, the share with a link-with-link contact, and the time of one check.
 */
async function collisionModelBench(
  count = 10_000,
): Promise<{ colliding: number; self: number; selfOnly: number; medianUs: number; p95Us: number }> {
  const { min, max } = await loadChain();
  const model = await ArmModel.load(await loadUrdf(), JOINTS, { marginM: 0.005, boxes: [] });
  const random = seededRandom(13);
  const times: number[] = [];
  let colliding = 0;
  let self = 0;
  let selfOnly = 0;
  try {
    for (let k = 0; k < count; k++) {
      const q = min.map((lo, i) => lo + random() * ((max[i] ?? 0) - lo));
      const t0 = performance.now();
      const contact = model.collisionAt(q);
      times.push((performance.now() - t0) * 1000);
      if (!contact) continue;
      colliding++;
      const contacts = model.contactsAt(q);
      const links = contacts.filter((c) => c.a !== 'floor' && c.b !== 'floor');
      if (links.length > 0) self++;
      if (links.length === contacts.length) selfOnly++;
    }
  } finally {
    model.dispose();
  }
  return {
    colliding: colliding / count,
    self: self / count,
    selfOnly: selfOnly / count,
    medianUs: quantile(times, 0.5),
    p95Us: quantile(times, 0.95),
  };
}

/**
 * Planning time per planner on 100 fixed targets from "work", in a scene with one box (so ompl and
 * chomp have something to plan around); plans only, nothing moves. Success counts only the
 * feasible targets (a collision-free configuration reaches them); the others are reported apart.
 */
async function plannerBench(
  count = 100,
): Promise<{ rows: PlannerRow[]; infeasible: Map<string, number>; ownCollides: number }> {
  const goals = await targets(count);
  const config = await testConfig({
    sim: { publish_joint_states: false, obstacles: [BOX], planning_time_s: 2 },
  });
  const feasibility = await classify(goals, config.sim.collision_margin);
  const infeasible = new Map<string, number>();
  for (const f of feasibility) if (!f.feasible) infeasible.set(f.why, (infeasible.get(f.why) ?? 0) + 1);
  const feasibleCount = feasibility.filter((f) => f.feasible).length;
  const ownCollides = feasibility.filter((f) => f.feasible && f.ownCollides).length;
  const rows: PlannerRow[] = [];
  const context = await SimContext.create(config);
  try {
    for (const planner of ['ptp', 'lin', 'circ', 'ompl', 'chomp']) {
      const times: number[] = [];
      const reasons = new Map<string, number>();
      let ok = 0;
      for (const [k, g] of goals.entries()) {
        const circ =
          planner === 'circ' ? { circ_interim: { x: (g.x + 0.4) / 2 + 0.05, y: g.y / 2, z: (g.z + 0.614) / 2 } } : {};
        const { x, y, z, a, b, c } = g;
        const t0 = performance.now();
        const planned = await context.planPoseGoal({ x, y, z, a, b, c, speed: 0.5, planner, frame_id: '', ...circ });
        times.push(performance.now() - t0);
        if (!feasibility[k]?.feasible) continue;
        if (planned.ok) ok++;
        else reasons.set(reasonOf(planned.error), (reasons.get(reasonOf(planned.error)) ?? 0) + 1);
      }
      rows.push({
        planner,
        success: feasibleCount > 0 ? ok / feasibleCount : Number.NaN,
        failed: feasibleCount - ok,
        medianMs: quantile(times, 0.5),
        p95Ms: quantile(times, 0.95),
        reasons: [...reasons].sort((p, q) => q[1] - p[1]),
      });
    }
  } finally {
    await context.close();
  }
  return { rows, infeasible, ownCollides };
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
  description: 'planning time and success per planner over feasible targets (plan only)',
  async run() {
    const { rows, infeasible, ownCollides } = await plannerBench();
    const infeasibleCount = [...infeasible.values()].reduce((s, n) => s + n, 0);
    const why = [...infeasible].map(([reason, n]) => `${n} ${reason}`).join(', ');
    const table: Table = {
      title: 'Planning time per planner, 100 fixed targets from work, one box in the scene (plan only)',
      header: ['planner', 'success % of feasible', 'failed', 'median ms', 'p95 ms'],
      rows: rows.map((r) => [r.planner, r.success * 100, String(r.failed), r.medianMs, r.p95Ms]),
      notes: [
        `feasible targets: ${100 - infeasibleCount} of 100 (a collision-free configuration reaches them; for ${ownCollides} only another IK solution than the one that made the target); infeasible: ${infeasibleCount}${why ? ` (${why})` : ''}`,
        'times are over all 100 targets; failures to feasible targets, by reason:',
        ...rows
          .filter((r) => r.reasons.length > 0)
          .map((r) => `  ${r.planner}: ${r.reasons.map(([reason, n]) => `${n} ${reason}`).join('; ')}`),
      ],
    };
    const cm = await collisionModelBench();
    const collision: Table = {
      title: 'Collision model (fitted capsules), 10,000 random in-limit configurations, arm and floor',
      header: ['measure', 'value'],
      rows: [
        ['colliding %', cm.colliding * 100],
        ['with a link-with-link contact %', cm.self * 100],
        ['link with link only (no floor) %', cm.selfOnly * 100],
        ['one check (collisionAt), median us', cm.medianUs],
        ['one check, p95 us', cm.p95Us],
      ],
      notes: ['the coarse cylinders before issue 13: 25 % colliding, 13 % link5 with link7'],
    };
    return [table, collision];
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
