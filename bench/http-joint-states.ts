import { type ChildProcess, fork, spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type LoadRequest, type LoadResult, runLoad } from './load.ts';
import type { Section } from './section.ts';
import { median } from './stats.ts';
import { type Table, verdict } from './table.ts';

const CONNECTIONS = 32;
const WARMUP_S = 1;
const ROUND_S = 4;
/** Alternating rounds of each server (the issue asks for medians of 5 side by side with their comparison). */
const ROUNDS = 5;
const TARGET_P50_MS = 1;
const TARGET_FRACTION = 0.6;
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

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

/** A load result with the CPU the server's process used meanwhile, % of one core. */
interface Round extends LoadResult {
  readonly serverCpuPct: number;
}

/** CPU time a process has used so far, ms. */
type CpuClock = () => number;

const ownCpu: CpuClock = () => {
  const cpu = process.cpuUsage();
  return (cpu.user + cpu.system) / 1000;
};

/** CPU time of another process, from /proc/PID/stat (utime + stime, in clock ticks of 10 ms). */
const processCpu =
  (pid: number): CpuClock =>
  () => {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return (Number(fields[11]) + Number(fields[12])) * 10;
  };

async function checked(generator: LoadGenerator, url: string, seconds: number, cpuMs: CpuClock): Promise<Round> {
  const cpu0 = cpuMs();
  const t0 = performance.now();
  const result = await generator.run({ url, connections: CONNECTIONS, seconds });
  const cpu = cpuMs() - cpu0;
  if (result.failures > 0)
    throw new Error(`${url}: ${result.failures} failed requests (errors, timeouts or non-2xx) under load`);
  return { ...result, serverCpuPct: (100 * cpu) / (performance.now() - t0) };
}

/** armgate as `npm start` serves it: the compiled server in its own process, stdout (its request log) on a file. */
export interface NpmStartServer {
  readonly url: string;
  /** The server process. */
  readonly pid: number;
  readonly cpuMs: CpuClock;
  /** Request lines in the log file so far. */
  requestLines(): Promise<number>;
  close(): Promise<void>;
}

/** Starts armgate as npm start runs it; `nodeArgs` go to node before the script (profiling flags). */
export async function npmStartServer(nodeArgs: readonly string[] = []): Promise<NpmStartServer> {
  const dir = await mkdtemp(path.join(tmpdir(), 'armgate-bench-http-'));
  const logFile = path.join(dir, 'stdout.log');
  const fd = openSync(logFile, 'w');
  const child = spawn(process.execPath, [...nodeArgs, path.join(ROOT, 'scripts', 'start.mjs'), '--port', '0'], {
    cwd: ROOT,
    stdio: ['ignore', fd, 'inherit'],
    env: { ...process.env, ARMGATE_TOKEN: '' },
  });
  closeSync(fd);
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const close = async () => {
    child.kill('SIGTERM');
    await exited;
    await rm(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 60_000;
  let url: string | undefined;
  while (url === undefined) {
    url = /^listening on (\S+)$/m.exec(await readFile(logFile, 'utf8'))?.[1];
    if (url !== undefined) break;
    if (child.exitCode !== null || Date.now() > deadline) {
      await close();
      throw new Error('npm start (node scripts/start.mjs) did not listen');
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url,
    pid: child.pid as number,
    cpuMs: processCpu(child.pid as number),
    requestLines: async () =>
      (await readFile(logFile, 'utf8')).split('\n').filter((l) => l.includes('"msg":"request"')).length,
    close,
  };
}

const rounded = (xs: readonly number[]) => xs.map((x) => Math.round(x)).join(' / ');

/**
 * GET /robot/joint_states on armgate as npm start serves it (the compiled server in its own process, its
 * request log on a file) beside a bare node:http
 * server returning the same bytes with the same content-type, under 32 connections. The two run
 * alternately, ROUNDS times each after a warm-up; figures are medians across rounds, and the
 * fraction of the ceiling is the median of the per-round ratios (neighbouring runs, so slow drift
 * of the machine cancels).
 */
export const httpJointStates: Section = {
  id: 'http',
  description: 'GET /robot/joint_states under load, armgate beside a bare node:http ceiling',
  async run() {
    const armgate = await npmStartServer();
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

      await checked(generator, armgateUrl, WARMUP_S, armgate.cpuMs);
      await checked(generator, bare.url, WARMUP_S, ownCpu);
      const a: Round[] = [];
      const b: Round[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        a.push(await checked(generator, armgateUrl, ROUND_S, armgate.cpuMs));
        b.push(await checked(generator, bare.url, ROUND_S, ownCpu));
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
            'armgate (npm start, log to a file)',
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
          `armgate runs as npm start runs it (node scripts/start.mjs: the compiled server, settings.yaml, --port 0) in its own process, stdout on a file as under a service manager: ${await armgate.requestLines()} request lines in it, one per request answered; its joint-state publisher runs at 100 Hz as in service`,
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
