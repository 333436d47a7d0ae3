/**
 * The Foxglove server (lib/foxglove) while the arm moves: message frames per second delivered to 1 and 50 clients
 * subscribed to every channel (/joint_states and /tf at the joint-state rate, the rest on change), the server's CPU
 * beside it, and POST /stop p50/p99 with no Foxglove client and with 50. The server runs in this process, the
 * clients in a child (foxglove-client.ts), /stop from another (stop.ts's client).
 */
import { type ChildProcess, fork } from 'node:child_process';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { startTestServer, type TestServer } from '../tests/support/server.ts';
import type { Section } from './section.ts';
import { median, summary } from './stats.ts';
import { stopClient } from './stop.ts';
import { type Table, verdict } from './table.ts';

const SECONDS = 5;
const STOP_SAMPLES = 40;
const STOP_TARGET_P99_MS = 20;
const A = [0.6, 0.4, 0, -1.2, 0.2, 1.2, 0.3];
const B = [-0.6, 0.2, 0.2, -1.5, -0.2, 1.4, -0.3];

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

interface ClientResult {
  readonly counts?: number[];
  readonly seconds?: number;
  readonly error?: string;
}

async function clients(): Promise<{ run(job: Record<string, unknown>): Promise<ClientResult>; close(): void }> {
  const child: ChildProcess = fork(fileURLToPath(new URL('./foxglove-client.ts', import.meta.url)), {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  await new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve());
    child.once('exit', (code) => reject(new Error(`foxglove client exited (code ${code})`)));
  });
  return {
    run(job) {
      return new Promise((resolve, reject) => {
        child.once('message', (m: ClientResult) => (m.error ? reject(new Error(m.error)) : resolve(m)));
        child.send(job);
      });
    },
    close() {
      child.removeAllListeners('exit');
      if (child.connected) child.disconnect();
    },
  };
}

/** Moves the arm between two poses until `done()` (a stopped move just goes on with the next). */
function keepMoving(server: TestServer): { done: () => Promise<void> } {
  let running = true;
  const loop = (async () => {
    for (let k = 0; running; k++) {
      const res = await fetch(`${server.url}/robot/move/joints`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ joints: k % 2 === 0 ? A : B, speed: 0.3 }),
      });
      await res.arrayBuffer();
      if (res.status !== 200) await sleep(50);
    }
  })();
  return {
    done: async () => {
      running = false;
      await loop;
    },
  };
}

export const foxgloveSection: Section = {
  id: 'foxglove',
  description:
    'Foxglove WebSocket server: messages/s to 1 and 50 clients subscribed to everything while the arm moves, server CPU, /stop with 50 clients',
  async run() {
    const server = await startTestServer({ foxglove: { enabled: true, port: 0 } });
    const url = server.foxglove?.url;
    if (!url) throw new Error('the Foxglove server did not start');
    const child = await clients();
    const stopper = await stopClient();
    const stops = async () => {
      await stopper.stop(server.url); // the stop client's own first request (see events.ts)
      await sleep(200);
      const ms: number[] = [];
      for (let k = 0; k < STOP_SAMPLES; k++) {
        ms.push(await stopper.stop(server.url));
        await sleep(200);
      }
      return summary(ms);
    };
    const mover = keepMoving(server);
    const rows: (string | number)[][] = [];
    const stopRows: (string | number)[][] = [];
    try {
      const s0 = await stops();
      stopRows.push(['no Foxglove client', s0.p50, s0.p99, verdict(s0.p99 < STOP_TARGET_P99_MS)]);
      for (const n of [1, 50]) {
        const loop = monitorEventLoopDelay({ resolution: 1 });
        loop.enable();
        const cpu0 = process.cpuUsage();
        const t0 = performance.now();
        const result = await child.run({ url, clients: n, seconds: SECONDS });
        const cpu = process.cpuUsage(cpu0);
        const cpuPct = ((cpu.user + cpu.system) / 1000 / (performance.now() - t0)) * 100;
        loop.disable();
        const counts = result.counts ?? [];
        const seconds = result.seconds ?? SECONDS;
        rows.push([
          String(n),
          counts.reduce((a, b) => a + b, 0) / seconds,
          median(counts) / seconds,
          cpuPct,
          loop.max / 1e6,
          server.foxglove?.counts.dropped ?? 0,
        ]);
        if (n === 50) {
          const s = await stops();
          stopRows.push([
            '50 Foxglove clients subscribed to everything',
            s.p50,
            s.p99,
            verdict(s.p99 < STOP_TARGET_P99_MS),
          ]);
        }
        await child.run({ close: true });
      }
    } finally {
      await mover.done();
      child.close();
      stopper.close();
      await server.close();
    }
    return [
      {
        title: `Foxglove: message frames to N clients subscribed to every channel while the arm moves (${SECONDS} s each)`,
        header: [
          'clients',
          'messages/s delivered',
          'per client',
          'server CPU % of a core',
          'worst loop delay ms',
          'clients dropped',
        ],
        rows,
        notes: [
          'per client: /joint_states and /tf at the joint-state rate (100 Hz) plus /armgate/motion, /events and /trajectory on change',
          'server CPU includes the moves this process sends and 1 s of connecting and settling',
        ],
      },
      {
        title: `POST /stop while the arm moves, without and with 50 Foxglove clients (${STOP_SAMPLES} samples, from a process of its own)`,
        header: ['while', 'p50 ms', 'p99 ms', `p99 < ${STOP_TARGET_P99_MS} ms`],
        rows: stopRows,
      },
    ] satisfies Table[];
  },
};
