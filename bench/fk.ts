import { loadavg } from 'node:os';
import { createFkWorkspace, forwardKinematics } from '../lib/kinematics/fk.ts';
import { type GetPositionFkRequest, MOVEIT_SUCCESS } from '../lib/ros/messages.ts';
import { SimContext } from '../lib/sim/context.ts';
import { ArmModel, type LinkPose } from '../lib/sim/model.ts';
import { testConfig } from '../tests/support/server.ts';
import { JOINTS, loadChain, loadUrdf, randomConfigs } from './fixtures.ts';
import type { Section } from './section.ts';
import { median, seededRandom } from './stats.ts';
import { type Table, verdict } from './table.ts';

const CONFIGS = 200_000;
/** The service path allocates a request and a response per call; fewer calls keep the section short. */
const SERVICE_CALLS = 50_000;
const ROUNDS = 5;
const TARGET_US = 5;

interface Timing {
  /** Median over rounds, ns per call. */
  readonly medianNs: number;
  readonly minNs: number;
  readonly maxNs: number;
}

/** Runs `pass` (which makes `calls` calls) once untimed to warm the JIT, then ROUNDS times timed. */
async function time(calls: number, pass: () => void | Promise<void>): Promise<Timing> {
  await pass();
  const ns: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const t0 = performance.now();
    await pass();
    ns.push(((performance.now() - t0) * 1e6) / calls);
  }
  return { medianNs: median(ns), minNs: Math.min(...ns), maxNs: Math.max(...ns) };
}

/**
 * Forward kinematics per call: MuJoCo through `ArmModel.linkPose` (what the FK service runs) over
 * 200k precomputed random in-limit configurations, the whole service path `SimContext.computeFk`
 * (request in, PoseStamped response out, awaited) on the first 50k of them, and the pure
 * TypeScript chain the planners use. One untimed warm-up pass, then 5 timed rounds; medians.
 */
export const fkSection: Section = {
  id: 'fk',
  description: 'forward kinematics per call: MuJoCo linkPose, the computeFk service path, the TypeScript chain',
  async run() {
    const { chain, min, max } = await loadChain();
    const configs = randomConfigs(CONFIGS, min, max, seededRandom(3));

    const model = await ArmModel.load(await loadUrdf(), JOINTS);
    let mujoco: Timing;
    try {
      const out: LinkPose = { positionM: new Float64Array(3), rotation: new Float64Array(9) };
      if (!model.linkPose(configs[0] ?? [], 'flange', out)) throw new Error("the model has no link 'flange'");
      mujoco = await time(CONFIGS, () => {
        for (const q of configs) model.linkPose(q, 'flange', out);
      });
    } finally {
      model.dispose();
    }

    // The joint-state publisher is off: it has no part in computeFk and would only add timer noise.
    const context = await SimContext.create(await testConfig({ sim: { publish_joint_states: false } }));
    const frame = context.endpoints.planning_frame;
    const link = context.endpoints.tcp_link;
    let service: Timing;
    try {
      const requests: GetPositionFkRequest[] = configs.slice(0, SERVICE_CALLS).map((q) => ({
        header: { stamp: { sec: 0, nanosec: 0 }, frame_id: frame },
        fk_link_names: [link],
        robot_state: { joint_state: { name: [...JOINTS], position: Array.from(q) } },
      }));
      const first = requests[0] && (await context.computeFk(requests[0]));
      if (!first?.ok || first.value.error_code.val !== MOVEIT_SUCCESS)
        throw new Error('computeFk failed on the bench request');
      service = await time(requests.length, async () => {
        for (const request of requests) {
          await context.computeFk(request);
        }
      });
    } finally {
      await context.close();
    }

    const ws = createFkWorkspace(chain);
    const typescript = await time(CONFIGS, () => {
      for (const q of configs) forwardKinematics(chain, q, ws);
    });

    const row = (name: string, t: Timing, calls: number, target: string) => [
      name,
      t.medianNs / 1000,
      t.medianNs,
      `${Math.round(t.minNs)}-${Math.round(t.maxNs)}`,
      calls,
      target,
    ];
    const table: Table = {
      title: `Forward kinematics per call, random in-limit configurations, ${ROUNDS} rounds after a warm-up pass; medians across rounds`,
      header: ['implementation', 'us/call', 'ns/call', 'ns range', 'calls/round', 'target'],
      rows: [
        row(
          "MuJoCo ArmModel.linkPose(q, 'flange')",
          mujoco,
          CONFIGS,
          `< ${TARGET_US} us: ${verdict(mujoco.medianNs / 1000 < TARGET_US)}`,
        ),
        row(`SimContext.computeFk, '${link}' (FK service path)`, service, SERVICE_CALLS, ''),
        row('pure TypeScript chain (planners, IK)', typescript, CONFIGS, ''),
      ],
      notes: [
        'computeFk: linkPose plus the partial-state merge, PoseStamped response objects, tool offset, quaternion and one await per call',
      ],
    };
    return [table, await publishIntervals()];
  },
};

/**
 * The simulator's joint-state publisher on the wall clock (the tests check its rate on a stepped clock):
 * the interval between 200 consecutive messages at 100 Hz, median and p95, with the load it ran under.
 */
async function publishIntervals(): Promise<Table> {
  const context = await SimContext.create(await testConfig({ sim: { joint_state_rate_hz: 100 } }));
  const intervals: number[] = [];
  try {
    await context.nextJointState(1000);
    let last = performance.now();
    for (let k = 0; k < 200; k++) {
      if (!(await context.nextJointState(1000))) throw new Error('no joint state within 1 s');
      const now = performance.now();
      intervals.push(now - last);
      last = now;
    }
  } finally {
    await context.close();
  }
  const sorted = [...intervals].sort((a, b) => a - b);
  const p95 = sorted[Math.floor(sorted.length * 0.95)] ?? 0;
  const med = median(intervals);
  return {
    title: 'Simulated joint states at 100 Hz on the wall clock: interval between 200 consecutive messages (ms)',
    header: ['median', 'p95', 'worst', 'target'],
    rows: [[med, p95, sorted.at(-1) ?? 0, `median 7-14 ms: ${verdict(med >= 7 && med <= 14)}`]],
    notes: [`load average ${loadavg()[0]?.toFixed(2)} while measured`],
  };
}
