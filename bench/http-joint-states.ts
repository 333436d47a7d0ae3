import { type ChildProcess, fork } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { startTestServer } from '../tests/support/server.ts';
import { type LoadRequest, type LoadResult, runLoad } from './load.ts';
import type { Section } from './section.ts';
import { median } from './stats.ts';
import { type Table, verdict } from './table.ts';

const CONNECTIONS = 32;
const WARMUP_S = 1;
const ROUND_S = 4;
const ROUNDS = 3;
const TARGET_P50_MS = 1;
const TARGET_FRACTION = 0.5;

/** Runs load requests one at a time. */
export interface LoadGenerator {
  readonly where: string;
  run(request: LoadRequest): Promise<LoadResult>;
  close(): void;
}

/**
 * autocannon runs in a child process (the default). In this process it would share the one
 * JavaScript thread with the server under test, so each request would cost client time plus
 * server time on that thread: requests/s would measure the sum, latencies would include the
 * client's own event-loop turns, and the client's fixed share would push armgate's fraction of
 * the ceiling towards 100 %. Measured on this 2-core VM (quiet): in-process gave armgate 38k and
 * the ceiling 58k req/s (65 %, p50 0.78 ms); the child gave 61k and 100k (61 %, p50 0.45 ms), with
 * the server process at ~100 % of its core. So in-process distorts the absolute figures badly and
 * the ratio a little. The child's price: it needs both cores at once, so other processes' work
 * shows up as noise (the printed per-round CPU figures reveal it: armgate below ~95 % means the
 * round was starved), hence alternating rounds and medians. (A worker thread would isolate as
 * well, but tsx's loader does not reach worker threads on Node 20; a forked child inherits it
 * through execArgv.) BENCH_LOAD=in-process runs autocannon in this process instead, to compare.
 */
export async function childLoadGenerator(): Promise<LoadGenerator> {
  const child: ChildProcess = fork(fileURLToPath(new URL('./load-child.ts', import.meta.url)), {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let pending: { resolve: (r: LoadResult) => void; reject: (e: Error) => void } | undefined;
  let ready: (() => void) | undefined;
  const readyP = new Promise<void>((resolve, reject) => {
    ready = resolve;
    child.once('exit', (code) => reject(new Error(`load generator exited (code ${code}) before it was ready`)));
  });
  child.on('message', (message: unknown) => {
    const m = message as { ready?: boolean; ok?: boolean; result?: LoadResult; error?: string };
    if (m.ready) {
      ready?.();
      return;
    }
    const p = pending;
    pending = undefined;
    if (m.ok && m.result) p?.resolve(m.result);
    else p?.reject(new Error(`load generator: ${m.error ?? 'no result'}`));
  });
  child.on('exit', () => pending?.reject(new Error('load generator exited during a run')));
  await readyP;
  return {
    where: 'autocannon in a child process (own core)',
    run(request) {
      return new Promise((resolve, reject) => {
        pending = { resolve, reject };
        child.send(request);
      });
    },
    close() {
      child.removeAllListeners('exit');
      if (child.connected) child.disconnect();
    },
  };
}

const inProcessLoadGenerator = (): LoadGenerator => ({
  where: 'autocannon in the server process',
  run: runLoad,
  close() {},
});

/** A bare node:http server answering every request with `body` and `contentType`: the runtime's ceiling. */
async function bareServer(body: Buffer, contentType: string): Promise<{ server: Server; url: string }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': contentType, 'content-length': body.length });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/robot/joint_states` };
}

/** A load result with the CPU this (the server's) process used meanwhile, % of one core. */
interface Round extends LoadResult {
  readonly serverCpuPct: number;
}

async function checked(generator: LoadGenerator, url: string, seconds: number): Promise<Round> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const result = await generator.run({ url, connections: CONNECTIONS, seconds });
  const cpu = process.cpuUsage(cpu0);
  if (result.failures > 0)
    throw new Error(`${url}: ${result.failures} failed requests (errors, timeouts or non-2xx) under load`);
  return { ...result, serverCpuPct: (100 * (cpu.user + cpu.system)) / ((performance.now() - t0) * 1000) };
}

const rounded = (xs: readonly number[]) => xs.map((x) => Math.round(x)).join(' / ');

/**
 * GET /robot/joint_states on armgate (in-process via startTestServer) beside a bare node:http
 * server returning the same bytes with the same content-type, under 32 connections. The two run
 * alternately, ROUNDS times each after a warm-up; figures are medians across rounds, and the
 * fraction of the ceiling is the median of the per-round ratios (neighbouring runs, so slow drift
 * of the machine cancels).
 */
export const httpJointStates: Section = {
  id: 'http',
  description: 'GET /robot/joint_states under load, armgate beside a bare node:http ceiling',
  async run() {
    const armgate = await startTestServer();
    const inProcess = process.env.BENCH_LOAD === 'in-process';
    const generator = inProcess
      ? inProcessLoadGenerator()
      : await childLoadGenerator().catch(async (e: unknown) => {
          await armgate.close();
          throw e;
        });
    let bare: { server: Server; url: string } | undefined;
    try {
      const armgateUrl = `${armgate.url}/robot/joint_states`;
      const sample = await fetch(armgateUrl);
      if (sample.status !== 200) throw new Error(`GET /robot/joint_states answered ${sample.status}`);
      const body = Buffer.from(await sample.arrayBuffer());
      const contentType = sample.headers.get('content-type') ?? 'application/json';
      bare = await bareServer(body, contentType);

      await checked(generator, armgateUrl, WARMUP_S);
      await checked(generator, bare.url, WARMUP_S);
      const a: Round[] = [];
      const b: Round[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        a.push(await checked(generator, armgateUrl, ROUND_S));
        armgate.logs.length = 0;
        b.push(await checked(generator, bare.url, ROUND_S));
      }
      const fraction = median(a.map((x, i) => x.requestsPerS / (b[i]?.requestsPerS ?? Number.NaN)));
      const p50 = median(a.map((x) => x.p50Ms));
      const starved = median(a.map((x) => x.serverCpuPct)) < 90 || median(b.map((x) => x.serverCpuPct)) < 85;
      const row = (name: string, xs: readonly Round[], pct: number, target: string) => [
        name,
        median(xs.map((x) => x.requestsPerS)),
        median(xs.map((x) => x.p50Ms)),
        median(xs.map((x) => x.p99Ms)),
        pct,
        target,
      ];
      const table: Table = {
        title: `GET /robot/joint_states, ${CONNECTIONS} connections, ${ROUNDS} alternating rounds of ${ROUND_S} s after ${WARMUP_S} s warm-up; medians across rounds`,
        header: ['server', 'req/s', 'p50 ms', 'p99 ms', '% of ceiling', 'target'],
        rows: [
          row(
            'armgate (startTestServer)',
            a,
            100 * fraction,
            `p50 < ${TARGET_P50_MS} ms: ${verdict(p50 < TARGET_P50_MS)}; >= ${100 * TARGET_FRACTION} % of ceiling: ${verdict(fraction >= TARGET_FRACTION)}`,
          ),
          row('bare node:http, same bytes (ceiling)', b, 100, ''),
        ],
        notes: [
          `req/s per round: armgate ${rounded(a.map((x) => x.requestsPerS))}; ceiling ${rounded(b.map((x) => x.requestsPerS))}`,
          `server process CPU per round, % of one core: armgate ${rounded(a.map((x) => x.serverCpuPct))}; ceiling ${rounded(b.map((x) => x.serverCpuPct))}`,
          ...(inProcess
            ? []
            : [
                `load generator CPU per round, % of one core: against armgate ${rounded(a.map((x) => x.cpuPct))}; against the ceiling ${rounded(b.map((x) => x.cpuPct))}`,
              ]),
          `${CONNECTIONS} closed-loop connections: mean latency = ${CONNECTIONS} / (req/s) (Little's law), so p50 < ${TARGET_P50_MS} ms goes with roughly ${Math.round(CONNECTIONS / TARGET_P50_MS)}k req/s or more`,
          `load: ${generator.where}; latencies per response at sub-ms resolution; ${body.length}-byte body, content-type ${contentType}`,
          "armgate's request log is captured in memory (startTestServer), not printed: logging costs little here; its joint-state publisher runs at 100 Hz as in service",
          ...(starved
            ? [
                'WARNING: the server process used well under one core in its median round: other work on the machine starved the run, figures understate both servers',
              ]
            : []),
        ],
      };
      return [table];
    } finally {
      generator.close();
      if (bare) {
        const server = bare.server;
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
      await armgate.close();
    }
  },
};
