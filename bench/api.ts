import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { planPtp } from '../lib/planning/ptp.ts';
import { trajectoryDuration } from '../lib/planning/trajectory.ts';
import { dhFlangePose } from '../tests/support/dh.ts';
import { startTestServer } from '../tests/support/server.ts';
import type { Section } from './section.ts';
import { quantile } from './stats.ts';
import type { Table } from './table.ts';
import { seededRandom } from '../lib/random.ts';

const A = [0, 0, 0, -1.57, 0, 1.57, 0];
const B = [0.2, 0.1, 0, -1.4, 0, 1.5, 0.1];
const JSON_TYPE = { 'content-type': 'application/json' };

/** Response time of POST /robot/move/joints minus the planned trajectory's duration (real time, time_scale 1). */
async function moveOverhead(moves = 16): Promise<{ p50Ms: number; p95Ms: number }> {
  const server = await startTestServer();
  try {
    const overheads: number[] = [];
    let from = A;
    for (let k = 0; k < moves; k++) {
      const to = k % 2 === 0 ? B : A;
      const durationS = trajectoryDuration(planPtp(from, to, server.context.limits, { speed: 0.5, accelScale: 0 }));
      const t0 = performance.now();
      const res = await fetch(`${server.url}/robot/move/joints`, {
        method: 'POST',
        headers: JSON_TYPE,
        body: JSON.stringify({ joints: to, speed: 0.5 }),
      });
      const body = (await res.json()) as { success: boolean };
      const elapsed = performance.now() - t0;
      if (!body.success) throw new Error('bench move failed');
      overheads.push(elapsed - durationS * 1000);
      from = to;
    }
    return { p50Ms: quantile(overheads, 0.5), p95Ms: quantile(overheads, 0.95) };
  } finally {
    await server.close();
  }
}

/** Time for POST /stop to answer while a slow move runs (and when idle). */
async function stopLatency(samples = 10): Promise<{ movingP50Ms: number; idleP50Ms: number }> {
  const server = await startTestServer();
  try {
    const moving: number[] = [];
    const idle: number[] = [];
    for (let k = 0; k < samples; k++) {
      const move = fetch(`${server.url}/robot/move/joints`, {
        method: 'POST',
        headers: JSON_TYPE,
        body: JSON.stringify({ joints: k % 2 === 0 ? B : A, speed: 0.05 }),
      });
      await new Promise((resolve) => setTimeout(resolve, 150));
      let t0 = performance.now();
      await (await fetch(`${server.url}/stop`, { method: 'POST' })).json();
      moving.push(performance.now() - t0);
      await (await move).json();
      await new Promise((resolve) => setTimeout(resolve, 100));
      t0 = performance.now();
      await (await fetch(`${server.url}/stop`, { method: 'POST' })).json();
      idle.push(performance.now() - t0);
    }
    return { movingP50Ms: quantile(moving, 0.5), idleP50Ms: quantile(idle, 0.5) };
  } finally {
    await server.close();
  }
}

/** get_joint_states over MCP (streamable HTTP, SDK client) beside GET /robot/joint_states, sequential round trips. */
async function mcpRoundTrip(
  calls = 500,
): Promise<{ mcp: { p50Ms: number; p99Ms: number }; rest: { p50Ms: number; p99Ms: number } }> {
  const server = await startTestServer();
  const client = new Client({ name: 'armgate-bench', version: '1' });
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp/mcp`)));
    const mcp: number[] = [];
    const rest: number[] = [];
    for (let k = 0; k < 50; k++) await client.callTool({ name: 'get_joint_states', arguments: {} });
    for (let k = 0; k < calls; k++) {
      let t0 = performance.now();
      await client.callTool({ name: 'get_joint_states', arguments: {} });
      mcp.push(performance.now() - t0);
      t0 = performance.now();
      await (await fetch(`${server.url}/robot/joint_states`)).json();
      rest.push(performance.now() - t0);
    }
    return {
      mcp: { p50Ms: quantile(mcp, 0.5), p99Ms: quantile(mcp, 0.99) },
      rest: { p50Ms: quantile(rest, 0.5), p99Ms: quantile(rest, 0.99) },
    };
  } finally {
    await client.close();
    await server.close();
  }
}

/** POST /robot/ik over HTTP for poses of random in-limit configurations, beside GET /robot/pose (FK over HTTP). */
async function ikLatency(requests = 300): Promise<{
  ik: { p50Ms: number; p99Ms: number; solved: number };
  pose: { p50Ms: number };
}> {
  const server = await startTestServer();
  try {
    const random = seededRandom(7);
    const { minRad, maxRad } = server.context.limits;
    const ik: number[] = [];
    const pose: number[] = [];
    let solved = 0;
    for (let k = 0; k < requests; k++) {
      const q = minRad.map((lo, j) => lo + (0.05 + 0.9 * random()) * ((maxRad[j] ?? 0) - lo));
      const fk = dhFlangePose(q);
      const r = fk.rotation;
      const target = {
        x: fk.position[0],
        y: fk.position[1],
        z: fk.position[2],
        a: Math.atan2(r[3] ?? 0, r[0] ?? 0),
        b: Math.asin(-(r[6] ?? 0)),
        c: Math.atan2(r[7] ?? 0, r[8] ?? 0),
        collision_check: false,
      };
      let t0 = performance.now();
      const res = await fetch(`${server.url}/robot/ik`, {
        method: 'POST',
        headers: JSON_TYPE,
        body: JSON.stringify(target),
      });
      if (((await res.json()) as { success?: boolean }).success) solved++;
      ik.push(performance.now() - t0);
      t0 = performance.now();
      await (await fetch(`${server.url}/robot/pose`)).json();
      pose.push(performance.now() - t0);
    }
    return {
      ik: { p50Ms: quantile(ik, 0.5), p99Ms: quantile(ik, 0.99), solved: solved / requests },
      pose: { p50Ms: quantile(pose, 0.5) },
    };
  } finally {
    await server.close();
  }
}

export const apiSection: Section = {
  id: 'api',
  description: 'move overhead, stop latency, MCP round trip beside its REST twin, IK over HTTP',
  async run() {
    const overhead = await moveOverhead();
    const stop = await stopLatency();
    const mcp = await mcpRoundTrip();
    const ik = await ikLatency();
    const table: Table = {
      title: 'API',
      header: ['measure', 'p50 ms', 'other', 'target'],
      rows: [
        [
          'move/joints response minus trajectory duration',
          overhead.p50Ms,
          `p95 ${overhead.p95Ms.toFixed(2)}`,
          '< 20 ms',
        ],
        ['POST /stop during a move', stop.movingP50Ms, `idle ${stop.idleP50Ms.toFixed(2)}`, '< 50 ms'],
        ['MCP get_joint_states round trip (SDK client)', mcp.mcp.p50Ms, `p99 ${mcp.mcp.p99Ms.toFixed(2)}`, '< 1.5 ms'],
        ['REST twin GET /robot/joint_states (fetch)', mcp.rest.p50Ms, `p99 ${mcp.rest.p99Ms.toFixed(2)}`, ''],
        [
          'POST /robot/ik, poses of random in-limit joints',
          ik.ik.p50Ms,
          `p99 ${ik.ik.p99Ms.toFixed(2)}; solved ${(ik.ik.solved * 100).toFixed(1)} %; GET /robot/pose (FK) p50 ${ik.pose.p50Ms.toFixed(2)}`,
          '',
        ],
      ],
    };
    return [table];
  },
};
