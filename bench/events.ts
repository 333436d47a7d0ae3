/**
 * GET /events (issue 14): joint_state events per second delivered to 1, 10 and 100 SSE clients
 * at 50 Hz while the arm moves, the server's CPU beside it, and the latency from the simulator's
 * step (the joint state's stamp) to the client; beside each, the same clients polling
 * GET /robot/joint_states at 50 Hz (the request rate the service answers and its CPU). Then
 * POST /stop with no stream and with 100 streams open. The server runs in this process, the
 * clients in a child (events-client.ts), so the CPU figure is the server's own (plus the few
 * moves this process sends); /stop is sent from another child (stop.ts's client).
 */
import { startTestServer } from '../tests/support/server.ts';
import { forkClients, keepMoving, measured, stopSamples } from './crowd-harness.ts';
import type { Section } from './section.ts';
import { median, summary } from './stats.ts';
import { stopClient } from './stop.ts';
import { type Table, verdict } from './table.ts';

const RATE_HZ = 50;
const SECONDS = 5;
const STOP_SAMPLES = 40;
const STOP_TARGET_P99_MS = 20;

interface ClientResult {
  readonly counts?: number[];
  readonly latenciesMs?: number[];
  readonly seconds?: number;
  readonly stopMs?: number[];
  readonly error?: string;
}

export const eventsSection: Section = {
  id: 'events',
  description:
    'GET /events: joint states/s to 1, 10, 100 SSE clients at 50 Hz while the arm moves, server CPU, step-to-client latency; polling beside; /stop with 100 streams',
  async run() {
    // No token: the /stop client of the stop section sends none (the token check costs nothing measurable).
    const server = await startTestServer();
    const child = await forkClients<ClientResult>(new URL('./events-client.ts', import.meta.url), 'events client');
    const stopper = await stopClient();
    // One unmeasured stop first: the stop client's own first request in its fresh process takes about 60 ms (from
    // curl, the server's first /stop takes 10 ms), which is not what a stop costs.
    const stops = () => stopSamples(stopper, server.url, STOP_SAMPLES);
    const mover = keepMoving(server);
    const rows: (string | number)[][] = [];
    const stopRows: (string | number)[][] = [];
    const job = { url: server.url, rateHz: RATE_HZ, seconds: SECONDS };
    try {
      const s0 = await stops();
      stopRows.push(['no stream open', s0.p50, s0.p99, verdict(s0.p99 < STOP_TARGET_P99_MS)]);
      for (const n of [1, 10, 100]) {
        // The CPU of an SSE run covers the connections and a 1 s settle before the counted seconds.
        const sse = await measured(() => child.run({ ...job, mode: 'sse', clients: n }));
        const counts = sse.result.counts ?? [];
        const seconds = sse.result.seconds ?? SECONDS;
        const total = counts.reduce((a, b) => a + b, 0) / seconds;
        const lat = summary(sse.result.latenciesMs ?? []);
        rows.push([
          String(n),
          'GET /events?rate_hz=50',
          total,
          median(counts) / seconds,
          sse.cpuPct,
          sse.loopMs,
          lat.p50,
          lat.p99,
        ]);
        if (n === 100) {
          const s = await stops();
          stopRows.push(['100 streams open at 50 Hz', s.p50, s.p99, verdict(s.p99 < STOP_TARGET_P99_MS)]);
        }
        await child.run({ close: true });
        const polled = await measured(() => child.run({ ...job, mode: 'poll', clients: n }));
        const pc = polled.result.counts ?? [];
        const ps = polled.result.seconds ?? SECONDS;
        rows.push([
          String(n),
          'polling GET /robot/joint_states at 50 Hz',
          pc.reduce((a, b) => a + b, 0) / ps,
          median(pc) / ps,
          polled.cpuPct,
          polled.loopMs,
          '',
          '',
        ]);
      }
    } finally {
      await mover.done();
      child.close();
      stopper.close();
      await server.close();
    }
    const tables: Table[] = [
      {
        title: `Joint states to N clients while the arm moves (${SECONDS} s each; clients in a child process, server here)`,
        header: [
          'clients',
          'how',
          'joint states/s delivered',
          'per client',
          'server CPU % of a core',
          'worst loop delay ms',
          'latency p50 ms',
          'latency p99 ms',
        ],
        rows,
        notes: [
          'latency: from the simulator step that made the joint state (its stamp) to the event parsed in the client process',
          'server CPU includes the moves this process sends (one move request at a time) and, for SSE, 1 s of settling',
        ],
      },
      {
        title: `POST /stop while the arm moves, with and without event streams (${STOP_SAMPLES} samples, from a process of its own)`,
        header: ['while', 'p50 ms', 'p99 ms', `p99 < ${STOP_TARGET_P99_MS} ms`],
        rows: stopRows,
      },
    ];
    return tables;
  },
};
