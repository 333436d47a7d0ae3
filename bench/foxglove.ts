/**
 * The Foxglove server (lib/foxglove) while the arm moves: message frames per second delivered to 1 and 50 clients
 * subscribed to every channel (/joint_states and /tf at the joint-state rate, the rest on change), the server's CPU
 * beside it, and POST /stop p50/p99 with no Foxglove client and with 50. The server runs in this process, the
 * clients in a child (foxglove-client.ts), /stop from another (stop.ts's client).
 */
import { startTestServer } from '../tests/support/server.ts';
import { forkClients, keepMoving, measured, stopSamples } from './crowd-harness.ts';
import type { Section } from './section.ts';
import { median } from './stats.ts';
import { stopClient } from './stop.ts';
import { type Table, verdict } from './table.ts';

const SECONDS = 5;
const STOP_SAMPLES = 40;
const STOP_TARGET_P99_MS = 20;

interface ClientResult {
  readonly counts?: number[];
  readonly seconds?: number;
  readonly error?: string;
}

export const foxgloveSection: Section = {
  id: 'foxglove',
  description:
    'Foxglove WebSocket server: messages/s to 1 and 50 clients subscribed to everything while the arm moves, server CPU, /stop with 50 clients',
  async run() {
    const server = await startTestServer({ foxglove: { enabled: true, port: 0 } });
    const url = server.foxglove?.url;
    if (!url) throw new Error('the Foxglove server did not start');
    const child = await forkClients<ClientResult>(new URL('./foxglove-client.ts', import.meta.url), 'foxglove client');
    const stopper = await stopClient();
    const stops = () => stopSamples(stopper, server.url, STOP_SAMPLES);
    const mover = keepMoving(server);
    const rows: (string | number)[][] = [];
    const stopRows: (string | number)[][] = [];
    try {
      const s0 = await stops();
      stopRows.push(['no Foxglove client', s0.p50, s0.p99, verdict(s0.p99 < STOP_TARGET_P99_MS)]);
      for (const n of [1, 50]) {
        const { result, cpuPct, loopMs } = await measured(() => child.run({ url, clients: n, seconds: SECONDS }));
        const counts = result.counts ?? [];
        const seconds = result.seconds ?? SECONDS;
        rows.push([
          String(n),
          counts.reduce((a, b) => a + b, 0) / seconds,
          median(counts) / seconds,
          cpuPct,
          loopMs,
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
