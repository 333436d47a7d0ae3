/**
 * LIN and CIRC: planning time and motion duration of the time-optimal planner (lib/planning/
 * cartesian.ts) against the refusing planner of the previous round (cartesian-legacy.ts), on the
 * same lines and arcs from a few typical starts.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { Chain } from '../lib/kinematics/chain.ts';
import { arcPath, type CartesianPath, linePath, planCartesianSteps, tcpPose } from '../lib/planning/cartesian.ts';
import type { MotionScales } from '../lib/planning/limits.ts';
import { type JointTrajectory, trajectoryDuration } from '../lib/planning/trajectory.ts';
import { type JointLimits, parseJointLimits } from '../lib/robot/limits.ts';
import type { Result } from '../lib/result.ts';
import { PROJECT_ROOT } from '../lib/settings/resolve.ts';
import { planCartesianLegacy } from './cartesian-legacy.ts';
import { JOINTS, loadChain } from './fixtures.ts';
import type { Section } from './section.ts';
import { quantile, seededRandom } from './stats.ts';
import type { Table } from './table.ts';

const STARTS = [
  [0, 0.4, 0, -1.4, 0, 1.3, 0],
  [0, 0, 0, -1.57, 0, 1.57, 0],
  [0.5, 0.3, 0, -1.2, 0, 1.2, 0.3],
  [-0.6, 0.6, 0.3, -1.0, -0.2, 1.0, 0],
];
const CASES_PER_START = 15;

interface Case {
  readonly start: readonly number[];
  readonly path: CartesianPath;
}

/** Lines of 5 to 30 cm in random directions, orientation kept. */
function lines(chain: Chain, random: () => number): Case[] {
  return STARTS.flatMap((start) => {
    const from = tcpPose(chain, start);
    return Array.from({ length: CASES_PER_START }, () => {
      const d = [random() - 0.5, random() - 0.5, random() - 0.5];
      const k = (0.05 + 0.25 * random()) / (Math.hypot(...d) || 1);
      const to = from.position.map((v, i) => v + (d[i] ?? 0) * k);
      return { start, path: linePath(from.position, from.orientation, to, from.orientation) };
    });
  });
}

/** Arcs of 5 to 15 cm radius, 60 to 180 degrees, in random planes through the start, orientation kept. */
function arcs(chain: Chain, random: () => number): Case[] {
  return STARTS.flatMap((start) => {
    const from = tcpPose(chain, start);
    const cases: Case[] = [];
    while (cases.length < CASES_PER_START) {
      const u = [random() - 0.5, random() - 0.5, random() - 0.5];
      const w = [random() - 0.5, random() - 0.5, random() - 0.5];
      const nu = Math.hypot(...u) || 1;
      const uu = u.map((x) => x / nu);
      const dot = w.reduce((s, x, i) => s + x * (uu[i] ?? 0), 0);
      const v = w.map((x, i) => x - dot * (uu[i] ?? 0));
      const nv = Math.hypot(...v) || 1;
      const r = 0.05 + 0.1 * random();
      const sweep = (Math.PI / 3) * (1 + 2 * random());
      // the start lies on the circle at angle 0 from its centre
      const center = from.position.map((p, i) => p - r * (uu[i] ?? 0));
      const at = (phi: number) =>
        center.map((c, i) => c + r * (Math.cos(phi) * (uu[i] ?? 0) + Math.sin(phi) * ((v[i] ?? 0) / nv)));
      const arc = arcPath(from.position, from.orientation, at(sweep), from.orientation, { interim: at(sweep / 2) });
      if (arc.ok) cases.push({ start, path: arc.value });
    }
    return cases;
  });
}

interface Run {
  readonly ms: number;
  /** The longest step between two yields (ms): how finely the planner can be sliced. */
  readonly longestStepMs: number;
  readonly duration: number | undefined;
  /** Why it failed, when it did. */
  readonly reason: string | undefined;
}

/** Drives a planning generator to its end, timing it and its longest step. */
function drive(steps: Generator<void, Result<JointTrajectory, { readonly reason: string }>>): Run {
  const t0 = performance.now();
  let longest = 0;
  for (;;) {
    const s0 = performance.now();
    const step = steps.next();
    longest = Math.max(longest, performance.now() - s0);
    if (step.done) {
      const ms = performance.now() - t0;
      const value = step.value;
      return value.ok
        ? { ms, longestStepMs: longest, duration: trajectoryDuration(value.value), reason: undefined }
        : { ms, longestStepMs: longest, duration: undefined, reason: value.error.reason };
    }
  }
}

/** Failure reasons with their counts: "unreachable 9, joint_limit 2". */
function reasons(list: readonly (string | undefined)[]): string {
  const counts = new Map<string, number>();
  for (const r of list) if (r !== undefined) counts.set(r, (counts.get(r) ?? 0) + 1);
  return [...counts].map(([r, n]) => `${r} ${n}`).join(', ') || '-';
}

async function loadLimits(): Promise<JointLimits> {
  const yaml = parseYaml(await readFile(path.join(PROJECT_ROOT, 'share/armgate/config/joint_limits.yaml'), 'utf8'));
  const limits = parseJointLimits(yaml, JOINTS);
  if (!limits.ok) throw new Error(limits.error);
  return limits.value;
}

export const cartesianSection: Section = {
  id: 'cartesian',
  description: 'LIN/CIRC: time-optimal planner against the refusing one (planning time, success, duration)',
  async run(): Promise<readonly Table[]> {
    const { chain } = await loadChain();
    const limits = await loadLimits();
    const random = seededRandom(13);
    const kinds = [
      ['lin', lines(chain, random)],
      ['circ', arcs(chain, random)],
    ] as const;
    const options = { nowMs: () => performance.now() };
    const timing: (string | number)[][] = [];
    const fastest: (string | number)[][] = [];
    for (const [kind, cases] of kinds) {
      // what a client had to do before: lower the speed until the old planner accepts
      const ratios: number[] = [];
      for (const c of cases) {
        const now = drive(planCartesianSteps(chain, limits, c.path, c.start, { speed: 1, accelScale: 0 }, options));
        if (now.duration === undefined) continue;
        for (let speed = 1; speed > 0.05; speed -= 0.05) {
          const old = drive(planCartesianLegacy(chain, limits, c.path, c.start, { speed, accelScale: 0 }, options));
          if (old.duration === undefined) continue;
          ratios.push(now.duration / old.duration);
          break;
        }
      }
      fastest.push([kind, ratios.length, quantile(ratios, 0.5), Math.min(...ratios), Math.max(...ratios)]);
    }
    const durations: (string | number)[][] = [];
    for (const [kind, cases] of kinds) {
      for (const speed of [1, 0.3]) {
        const scales: MotionScales = { speed, accelScale: 0 };
        // warm-up: the first plans include compiling the planners
        for (const c of cases.slice(0, 10)) drive(planCartesianSteps(chain, limits, c.path, c.start, scales, options));
        const runs = cases.map((c) => ({
          now: drive(planCartesianSteps(chain, limits, c.path, c.start, scales, options)),
          old: drive(planCartesianLegacy(chain, limits, c.path, c.start, scales, options)),
        }));
        const ok = (r: Run) => r.duration !== undefined;
        const both = runs.filter((r) => ok(r.now) && ok(r.old));
        const ratios = both.map((r) => (r.now.duration ?? 0) / (r.old.duration ?? 1));
        timing.push([
          kind,
          speed,
          cases.length,
          runs.filter((r) => ok(r.now)).length,
          runs.filter((r) => ok(r.old)).length,
          quantile(
            runs.map((r) => r.now.ms),
            0.5,
          ),
          quantile(
            runs.map((r) => r.now.ms),
            0.95,
          ),
          quantile(
            runs.map((r) => r.now.longestStepMs),
            0.5,
          ),
          Math.max(...runs.map((r) => r.now.longestStepMs)),
          quantile(
            runs.map((r) => r.old.ms),
            0.5,
          ),
          reasons(runs.map((r) => r.now.reason)),
        ]);
        durations.push([
          kind,
          speed,
          both.length,
          both.length > 0 ? quantile(ratios, 0.5) : '-',
          both.length > 0 ? Math.min(...ratios) : '-',
          both.length > 0 ? Math.max(...ratios) : '-',
          quantile(
            runs.filter((r) => ok(r.now)).map((r) => r.now.duration ?? 0),
            0.5,
          ),
        ]);
      }
    }
    return [
      {
        title: `LIN/CIRC planning: ${STARTS.length} starts x ${CASES_PER_START} lines (5-30 cm) or arcs (r 5-15 cm, 60-180 deg), orientation kept`,
        header: [
          'planner',
          'speed',
          'cases',
          'planned',
          'planned (old)',
          'ms p50',
          'ms p95',
          'step ms p50',
          'step ms max',
          'ms p50 (old)',
          'why not (new)',
        ],
        rows: timing,
        notes: [
          'old: the refusing planner of the previous round (Pilz trapezoid on the Cartesian limits, refused at the first joint limit).',
          'step: the longest work between two yields of the planning generator in each plan (the service runs it in 4 ms',
          'slices); its max includes garbage collection and CPU time taken by other processes.',
          'why not: unreachable = the path leaves the workspace with its orientation kept (the arm is 0.8 m long).',
        ],
      },
      {
        title: 'LIN/CIRC motion duration, time-optimal over old, where both plan',
        header: ['planner', 'speed', 'both planned', 'ratio p50', 'ratio min', 'ratio max', 'duration s p50 (new)'],
        rows: durations,
        notes: [
          'Below speed 1 the new planner keeps the joints within their limits scaled by speed (the old one checked the unscaled',
          'limits only), so where joints, not the Cartesian limits, bound the motion it is slower by design.',
        ],
      },
      {
        title: 'LIN/CIRC at speed 1 over the old planner at the highest speed (0.05 steps) it accepts',
        header: ['planner', 'cases', 'ratio p50', 'ratio min', 'ratio max'],
        rows: fastest,
        notes: ['What a client had to do before: lower the speed until the old planner accepted the path.'],
      },
    ];
  },
};
