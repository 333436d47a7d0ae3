/**
 * POST /stop latency while the service is busy in each way that used to hold the event loop: idle,
 * during a move, during a 10 MB CSV upload, during CHOMP planning, while 200 slow-body clients, 1,000
 * event streams or 16 uploads of 10 MB hold the server (crowd-client.ts, a child), under 200
 * concurrent readers.
 * Beside each: the worst event-loop delay of the server's process meanwhile (perf_hooks), the
 * figure that says whether anything held the loop. The server runs in this process
 * (startTestServer); /stop is sent and timed from a child process (stop-client.ts), and the 200
 * readers run in another (autocannon).
 */
import { type ChildProcess, fork } from 'node:child_process';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { MAX_JSON_BODY_BYTES } from '../lib/body/limits.ts';
import { MAX_MCP_BODY_BYTES } from '../lib/mcp/server.ts';
import { startTestServer, type TestServer } from '../tests/support/server.ts';
import type { CrowdKind } from './crowd-client.ts';
import { childLoadGenerator } from './http-joint-states.ts';
import type { Section } from './section.ts';
import { watchStalls, type WorstStall } from './stalls.ts';
import { summary } from './stats.ts';
import { type Table, verdict } from './table.ts';

const TARGET_P99_MS = 20;
const JSON_TYPE = { 'content-type': 'application/json' };
const WORK = [0, 0, 0, -1.57, 0, 1.57, 0];
const FAR = [1.0, 0.4, 0.3, -1.1, 0.4, 1.1, 0.6];
const OBSTACLE = { name: 'box', center: [0.55, -0.35, 0.2], size: [0.2, 0.2, 0.4] };

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

interface Row {
  readonly label: string;
  readonly latenciesMs: number[];
  /** Of the stops that found the arm moving: from the request to the first joint state showing the brake (ms). */
  readonly brakingMs: number[];
  readonly worstLoopDelayMs: number;
  /** The worst gap between 5 ms ticks of the server's loop, and the loop thread's running and waiting time in it. */
  readonly worstStall: WorstStall | undefined;
  readonly note: string;
}

/** A child process that stops the arm (POST /stop, or the MCP stop tool) and times it. */
export interface StopClient {
  stop(url: string, via?: 'rest' | 'mcp'): Promise<number>;
  /** When the last stop was sent: the wall clock's ms since 1970 (as joint states are stamped). */
  lastSentAtMs(): number | undefined;
  close(): void;
}

/** Forks the /stop client (stop-client.ts) and waits until it is ready. */
export async function stopClient(): Promise<StopClient> {
  const child: ChildProcess = fork(fileURLToPath(new URL('./stop-client.ts', import.meta.url)), {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  type Answer = { ms?: number; sentAtMs?: number; error?: string };
  let pending: ((m: Answer) => void) | undefined;
  let sentAtMs: number | undefined;
  await new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve());
    child.once('exit', (code) => reject(new Error(`stop client exited (code ${code})`)));
  });
  child.on('message', (m: Answer) => pending?.(m));
  return {
    stop(url, via = 'rest') {
      return new Promise((resolve, reject) => {
        pending = (m) => {
          sentAtMs = m.sentAtMs;
          if (m.ms !== undefined) resolve(m.ms);
          else reject(new Error(m.error ?? 'no answer'));
        };
        child.send({ url, via });
      });
    },
    lastSentAtMs: () => sentAtMs,
    close() {
      child.removeAllListeners('exit');
      if (child.connected) child.disconnect();
    },
  };
}

/** The crowd child (crowd-client.ts): opens slow bodies, event streams or uploads against a server. */
export interface Crowd {
  /** Opens `count` of a kind; resolves with how many hold the server. */
  open(kind: CrowdKind, url: string, count: number, csv?: string): Promise<number>;
  /** Ends the crowd; resolves with the count of each HTTP status it was answered meanwhile, and uploads' times. */
  close(): Promise<{ statuses: Record<string, number>; uploadMs: number[] }>;
  end(): void;
}

export type { CrowdKind };
type CrowdAnswer = { ready?: number; statuses?: Record<string, number>; uploadMs?: number[]; error?: string };

export async function crowdClient(): Promise<Crowd> {
  const child: ChildProcess = fork(fileURLToPath(new URL('./crowd-client.ts', import.meta.url)), {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let pending: ((m: CrowdAnswer) => void) | undefined;
  await new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve());
    child.once('exit', (code) => reject(new Error(`crowd client exited (code ${code})`)));
  });
  child.on('message', (m: CrowdAnswer) => pending?.(m));
  const ask = (command: object) =>
    new Promise<CrowdAnswer>((resolve, reject) => {
      pending = (m) => (m.error ? reject(new Error(m.error)) : resolve(m));
      child.send(command);
    });
  return {
    open: async (kind, url, count, csv) => (await ask({ kind, url, count, csv })).ready ?? 0,
    close: async () => {
      const answer = await ask({ kind: 'close' });
      return { statuses: answer.statuses ?? {}, uploadMs: answer.uploadMs ?? [] };
    },
    end: () => {
      child.removeAllListeners('exit');
      if (child.connected) child.disconnect();
    },
  };
}

/** The RSS (MB) of this process (the server's) when `during` starts and its largest while it runs (every 50 ms). */
async function rssMb<T>(during: () => Promise<T>): Promise<{ value: T; startMb: number; peakMb: number }> {
  const start = process.memoryUsage().rss;
  let peak = start;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 50);
  try {
    const value = await during();
    return { value, startMb: start / 1024 / 1024, peakMb: peak / 1024 / 1024 };
  } finally {
    clearInterval(sampler);
  }
}

interface StateSample {
  /** The joint state's stamp: the wall clock's ms since 1970. */
  readonly stampMs: number;
  /** Its fastest joint's speed (rad/s). */
  readonly speed: number;
}

/** The joint states the server publishes, read in its process (no client of its own to add to a crowd). */
function jointStates(server: TestServer): { samples: StateSample[]; close: () => void } {
  const samples: StateSample[] = [];
  const topic = server.context.endpoints.interfaces.joint_states.name;
  const close = server.context.subscribe(topic, (message) => {
    const msg = message as { header: { stamp: { sec: number; nanosec: number } }; velocity?: number[] };
    const stampMs = msg.header.stamp.sec * 1000 + msg.header.stamp.nanosec / 1e6;
    samples.push({ stampMs, speed: Math.max(0, ...(msg.velocity ?? []).map(Math.abs)) });
  });
  return { samples, close };
}

/**
 * From `sentAtMs` to the stamp of the first joint state showing the brake (its fastest joint 5 % slower than in the
 * last state before the stop, or at rest); undefined when the arm was not moving (under 1 mrad/s) or no state shows it.
 */
export function brakeBeganMs(samples: readonly StateSample[], sentAtMs: number): number | undefined {
  let before: StateSample | undefined;
  for (const s of samples) {
    if (s.stampMs <= sentAtMs) before = s;
    else if (!before || before.speed < 1e-3) return undefined;
    else if (s.speed < before.speed * 0.95 || s.speed < 1e-3) return s.stampMs - sentAtMs;
  }
  return undefined;
}

/**
 * Runs `samples` rounds of: start the load (`begin`), wait `delayMs`, POST /stop, let the load end; where the arm was
 * moving, when the brake began by the joint states' stamps.
 */
async function measure(
  client: StopClient,
  server: TestServer,
  label: string,
  samples: number,
  delayMs: number,
  begin: () => Promise<unknown>,
  note: string,
  via: 'rest' | 'mcp' = 'rest',
): Promise<Row> {
  const latenciesMs: number[] = [];
  const brakingMs: number[] = [];
  const states = jointStates(server);
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const stalls = watchStalls();
  try {
    for (let k = 0; k < samples; k++) {
      const load = begin();
      await sleep(delayMs);
      latenciesMs.push(await client.stop(server.url, via));
      await load;
      const sentAtMs = client.lastSentAtMs();
      const braking = sentAtMs === undefined ? undefined : brakeBeganMs(states.samples, sentAtMs);
      if (braking !== undefined) brakingMs.push(braking);
      states.samples.length = 0;
      server.logs.length = 0;
    }
  } finally {
    states.close();
  }
  loop.disable();
  return { label, latenciesMs, brakingMs, worstLoopDelayMs: loop.max / 1e6, worstStall: stalls.stop(), note };
}

const post = (url: string, path: string, body: unknown) =>
  fetch(`${url}${path}`, { method: 'POST', headers: JSON_TYPE, body: JSON.stringify(body) }).then((r) =>
    r.arrayBuffer(),
  );

/** A valid trajectory CSV of about `bytes`: a slow sweep of joint 1, one row per 10 ms, padded decimals. */
export function largeCsv(bytes: number): string {
  const rows = ['t,joint1,joint2,joint3,joint4,joint5,joint6,joint7'];
  let size = rows[0]?.length ?? 0;
  for (let i = 1; size < bytes; i++) {
    const t = i * 0.01;
    const q = [0.05 * Math.sin(t / 50), 0, 0, -1.57, 0, 1.57, 0];
    const row = `${t.toFixed(6)},${q.map((x) => x.toFixed(12)).join(',')}`;
    rows.push(row);
    size += row.length + 1;
  }
  return rows.join('\n');
}

/** A move back and forth while a crowd row samples: the stop ends each; the arm is sent home before the next. */
const moving = (url: string) => () =>
  post(url, '/robot/move/joints', { joints: FAR, speed: 0.1 }).then(() =>
    post(url, '/robot/move/joints', { joints: WORK, speed: 1 }),
  );

/**
 * The crowd rows: /stop while a crowd from a child process (crowd-client.ts) holds the server, the crowd's answers and
 * the server process's RSS beside each.
 */
/** A crowd row: [label, kind, how many, samples, ms between samples, moving]. */
type CrowdRow = [string, CrowdKind, number, number, number, boolean];

// The slow bodies' samples span 8 s, past the 5 s grace after which web.limits.min_body_rate cuts them all; the upload
// rows' span 15 s, for the uploads to be answered (409: a stop came after each) and sent again; the second asks for
// twice web.limits.max_uploads, so that its peak RSS beside the first's shows the cap bounding memory.
const CROWDS: CrowdRow[] = [
  ['while 200 slow-body clients hold connections (1 byte/s)', 'slow', 200, 40, 200, false],
  ['with 1,000 /events clients connected, reading as bytes come', 'events', 1000, 40, 40, false],
  ['with 1,000 /events clients reading at 50 Hz (as a browser page), at rest', 'events-50hz', 1000, 40, 40, false],
  ['with 1,000 /events clients reading at 50 Hz, during a move', 'events-50hz', 1000, 20, 150, true],
  ['with 16 uploads of a 10 MB CSV in flight', 'uploads', 16, 60, 250, false],
  ['with 32 uploads of a 10 MB CSV asked for (twice web.limits.max_uploads)', 'uploads', 32, 60, 250, false],
  ['with 5,000 connections held from one address, sending nothing, never reading', 'held', 5000, 40, 40, false],
  // The largest MCP bodies the endpoint reads (MAX_MCP_BODY_BYTES), each client sending the next once answered: a batch
  // of as many small calls as fit, and 100 calls whose arguments have thousands of keys (what JSON.parse is slowest on).
  ['with 1 MCP client POSTing maximal batches of small calls in a loop', 'mcp-batches', 1, 40, 100, false],
  ['with 4 MCP clients POSTing maximal batches of small calls in a loop', 'mcp-batches', 4, 40, 100, false],
  ['with 4 MCP clients POSTing maximal bodies of 100 many-keyed calls in a loop', 'mcp-keys', 4, 40, 100, false],
  [
    'with 4 MCP clients POSTing maximal calls of small objects of distinct keys in a loop',
    'mcp-distinct',
    4,
    40,
    100,
    false,
  ],
  // The largest REST JSON body (MAX_JSON_BODY_BYTES) of small objects of distinct keys, each client sending the next once
  // answered (422: an unknown field, once the body is parsed).
  [
    'with 4 REST clients POSTing maximal JSON bodies of small objects of distinct keys in a loop',
    'rest-distinct',
    4,
    40,
    100,
    false,
  ],
];

// WebSocket message floods, each client under its own per-second cap (the sum bounded by nothing per connection):
// atk2's jog sockets (9,000 commands a second, all refused 409 but one socket's) and atk3's Foxglove clients.
const WEBSOCKET_CROWDS: CrowdRow[] = [
  ['with 100 jog WebSockets from 5 addresses, each sending 90 commands/s', 'jog-sockets', 100, 40, 100, false],
  ['with 40 Foxglove clients, each sending 950 getParameters/s', 'foxglove-flood', 40, 40, 100, false],
];

async function crowdRows(client: StopClient, server: TestServer, csv: string, crowds = CROWDS): Promise<Row[]> {
  const url = server.url;
  const rows: Row[] = [];
  const crowd = await crowdClient();
  try {
    const only = process.env.BENCH_CROWDS?.split(',');
    for (const [label, kind, count, samples, delayMs, move] of crowds) {
      if (only && !only.includes(kind) && !only.includes(`${kind}:${count}`)) continue;
      const { value, startMb, peakMb } = await rssMb(async () => {
        const t0 = performance.now();
        const target = kind === 'foxglove-flood' ? (server.foxglove?.url ?? '') : url;
        const ready = await crowd.open(kind, target, count, kind === 'uploads' ? csv : undefined);
        const openedS = (performance.now() - t0) / 1000;
        if (kind === 'uploads') await sleep(500);
        const begin = move ? moving(url) : async () => undefined;
        const row = await measure(client, server, label, samples, delayMs, begin, '');
        return { row, ready, openedS, ...(await crowd.close()) };
      });
      const answered = Object.entries(value.statuses)
        .map(([status, n]) => `${n} x ${status}`)
        .join(', ');
      const held =
        kind === 'uploads'
          ? `${count} uploading in a loop`
          : kind === 'mcp-batches' || kind === 'mcp-keys' || kind === 'mcp-distinct'
            ? `${value.ready} of ${count} sending in a loop (bodies of ${MAX_MCP_BODY_BYTES} bytes at most)`
            : kind === 'rest-distinct'
              ? `${value.ready} of ${count} sending in a loop (bodies of ${MAX_JSON_BODY_BYTES} bytes at most)`
              : `${value.ready} of ${count} held (opened in ${value.openedS.toFixed(1)} s)`;
      const times = value.uploadMs.length > 0 ? summary(value.uploadMs) : undefined;
      const uploadTimes = times
        ? `; each upload's wall time from sending to its answer p50 ${times.p50.toFixed(0)} / p95 ${times.p95.toFixed(0)} / worst ${times.max.toFixed(0)} ms (${value.uploadMs.length} answered)`
        : '';
      rows.push({
        ...value.row,
        note: `${held}, answered meanwhile: ${answered || 'nothing'}${uploadTimes}; the server process's RSS ${startMb.toFixed(0)} MB before, at most ${peakMb.toFixed(0)} MB meanwhile`,
      });
      await sleep(500);
    }
  } finally {
    crowd.end();
  }
  return rows;
}

export const stopSection: Section = {
  id: 'stop',
  description:
    'POST /stop latency (p50, p99) idle, during a move, a 10 MB CSV upload, CHOMP planning, 200 slow bodies, 1,000 event streams, 16 and 32 uploads and 200 readers; worst event-loop delay beside each',
  async run() {
    const server = await startTestServer({ sim: { obstacles: [OBSTACLE], planning_time_s: 2 } });
    const client = await stopClient();
    const rows: Row[] = [];
    try {
      const url = server.url;
      for (let k = 0; k < 20; k++) await client.stop(url);
      rows.push(await measure(client, server, 'idle', 50, 20, async () => undefined, ''));
      rows.push(
        await measure(
          client,
          server,
          'during a move (move/joints, speed 0.1)',
          20,
          150,
          () =>
            post(url, '/robot/move/joints', { joints: FAR, speed: 0.1 }).then(() =>
              post(url, '/robot/move/joints', { joints: WORK, speed: 1 }),
            ),
          'the move answers success false; the arm is sent home between samples',
        ),
      );
      const csv = largeCsv(10 * 1024 * 1024 - 4096);
      const upload = () => {
        const form = new FormData();
        form.append('file', new Blob([csv]), 'large.csv');
        return fetch(`${url}/trajectory/send_csv`, { method: 'POST', body: form }).then((r) => r.arrayBuffer());
      };
      rows.push(
        await measure(
          client,
          server,
          `during a ${(csv.length / 1024 / 1024).toFixed(1)} MB CSV upload`,
          10,
          120,
          upload,
          'stop sent 120 ms after the upload began',
        ),
      );
      const chomp = () =>
        post(url, '/robot/move/pose', {
          x: 0.3,
          y: -0.5,
          z: 0.2,
          a: 0,
          b: Math.PI,
          c: 0,
          planner: 'chomp',
          speed: 0.3,
        }).then(() => post(url, '/robot/move/joints', { joints: WORK, speed: 1 }));
      rows.push(
        await measure(
          client,
          server,
          'during CHOMP planning (obstacle in the way)',
          10,
          30,
          chomp,
          'stop sent 30 ms into planning (about 120 ms of optimization on its own)',
        ),
      );
      rows.push(...(await crowdRows(client, server, csv)));
      const generator = await childLoadGenerator();
      try {
        const readerRows: [string, number | undefined, string, 'rest' | 'mcp'][] = [
          [
            'under 200 concurrent readers polling at 50 Hz each (GET /robot/joint_states)',
            50,
            'paced: 10,000 req/s offered',
            'rest',
          ],
          [
            'under 200 concurrent readers, closed loop (as fast as answered)',
            undefined,
            'saturating: see the note',
            'rest',
          ],
          [
            'the MCP stop tool, under 200 readers, closed loop',
            undefined,
            'tools/call stop with a JSON answer, in a session opened before',
            'mcp',
          ],
        ];
        for (const [label, connectionRate, note, via] of readerRows) {
          const load = { url: `${url}/robot/joint_states`, connections: 200, seconds: 6 };
          const readers = generator.run(connectionRate ? { ...load, connectionRate } : load);
          await sleep(1000);
          rows.push(await measure(client, server, label, 40, 100, async () => undefined, note, via));
          await readers;
        }
      } finally {
        generator.close();
      }
    } finally {
      client.close();
      await server.close();
    }
    return [stopTable(rows)];
  },
};

/** The table of the stop rows. */
function stopTable(rows: readonly Row[]): Table {
  return {
    title: 'POST /stop latency while the service is busy (client and server in one process; load generator in a child)',
    header: [
      'while',
      'samples',
      'p50 ms',
      'p99 ms',
      'worst ms',
      'worst event-loop delay ms',
      'worst stall: ms, of it running / waiting for a CPU',
      'braking began p50 / p99 ms (stops)',
      'target',
    ],
    rows: rows.map((r) => {
      const s = summary(r.latenciesMs);
      const braking = r.brakingMs.length > 0 ? summary(r.brakingMs) : undefined;
      return [
        r.label,
        String(r.latenciesMs.length),
        s.p50,
        s.p99,
        s.max,
        r.worstLoopDelayMs,
        r.worstStall
          ? `${r.worstStall.wallMs.toFixed(0)}, ${r.worstStall.runningMs.toFixed(0)} / ${r.worstStall.waitingMs.toFixed(0)}`
          : '-',
        braking ? `${braking.p50.toFixed(1)} / ${braking.p99.toFixed(1)} (${r.brakingMs.length})` : '-',
        `p99 < ${TARGET_P99_MS} ms: ${verdict(s.p99 < TARGET_P99_MS && (!braking || braking.p99 < TARGET_P99_MS))}`,
      ];
    }),
    notes: [
      ...rows.filter((r) => r.note).map((r) => `${r.label}: ${r.note}`),
      'braking began: of the stops that found the arm moving, from the request (the clock of the stop client) to the stamp of',
      '  the first joint state whose fastest joint is 5 % slower than before it, or at rest (the 100 Hz states: up to 10 ms late)',
      'worst stall: the longest gap between 5 ms ticks of the event loop of the server, with the time its thread ran and the',
      '  time it waited, runnable, for a CPU (Linux schedstat): running is work of the server, waiting the load of the machine',
      'closed loop: armgate, autocannon and the /stop client are three busy processes on 2 cores, so the figure includes',
      '  the wait for a CPU time slice; the paced row is 200 clients polling as front ends do',
    ],
  };
}

/**
 * The crowd rows alone (`npm run bench -- crowds`; BENCH_CROWDS=events-50hz,held picks rows by crowd kind, and
 * BENCH_CROWDS=uploads:16 one row by kind and count).
 */
export const crowdsSection: Section = {
  id: 'crowds',
  description:
    "the stop section's crowd rows alone: 200 slow bodies, 1,000 event streams (read as bytes come, at 50 Hz at rest and during a move), 16 and 32 uploads, 5,000 held connections, MCP clients sending maximal bodies; then 100 jog WebSockets and 40 Foxglove clients sending under their caps",
  async run() {
    const client = await stopClient();
    try {
      const server = await startTestServer({ sim: { obstacles: [OBSTACLE], planning_time_s: 2 } });
      let rows: Row[];
      try {
        for (let k = 0; k < 20; k++) await client.stop(server.url);
        // The same server without a crowd, in the same minute: on a loaded machine the rows below compare with it.
        const idle = await measure(client, server, 'idle (no crowd)', 40, 40, async () => undefined, '');
        rows = [idle, ...(await crowdRows(client, server, largeCsv(10 * 1024 * 1024 - 4096)))];
      } finally {
        await server.close();
      }
      return [stopTable([...rows, ...(await webSocketCrowdRows(client))])];
    } finally {
      client.close();
    }
  },
};

/**
 * The WebSocket floods' rows, on a server of their own with the Foxglove face on (the rows above are measured as they
 * were), after an idle row of that server: none when BENCH_CROWDS picks none of them.
 */
async function webSocketCrowdRows(client: StopClient): Promise<Row[]> {
  const only = process.env.BENCH_CROWDS?.split(',');
  const picked = WEBSOCKET_CROWDS.filter(
    ([, kind, count]) => !only || only.includes(kind) || only.includes(`${kind}:${count}`),
  );
  if (picked.length === 0) return [];
  const server = await startTestServer({ foxglove: { enabled: true, port: 0 } });
  try {
    for (let k = 0; k < 20; k++) await client.stop(server.url);
    const idle = await measure(
      client,
      server,
      'idle (no crowd; the server with Foxglove on)',
      40,
      40,
      async () => undefined,
      '',
    );
    return [idle, ...(await crowdRows(client, server, '', picked))];
  } finally {
    await server.close();
  }
}
