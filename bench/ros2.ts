/**
 * The ros2 backend over real DDS beside the simulator, in the same run: armgate started as users start
 * it (server.ts, its own process) once on `backend: ros2` against the test stack of tests/ros/stack (real
 * ROS 2 nodes on the core that `npm run ros2:build` built) and once on the simulator. When the core is
 * not built the section says so in one row and measures nothing.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { settingsYaml } from '../tests/support/server.ts';
import { childLoadGenerator } from './http-joint-states.ts';
import type { Section } from './section.ts';
import { median, quantile } from './stats.ts';
import type { Table } from './table.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const CONNECTIONS = 32;
const LOAD_S = 4;
const ROUNDS = 3;
const MOVES = 15;
// A p99 needs about 100 samples: of 20 it is the largest one (each stop costs about 0.6 s of a move and a rest).
const STOPS = 100;
// ARMGATE_ROS2_DOMAIN_BASE (as scripts/ros2/test.sh reads it): the bench's own ROS domain, apart from other runs on the machine.
const DOMAIN = process.env.ARMGATE_ROS2_DOMAIN_BASE ?? '139';

/** The environment of the built core (scripts/ros2/env.sh), or why there is none. */
export function ros2Env(): { env: NodeJS.ProcessEnv } | { missing: string } {
  try {
    const out = execFileSync(
      'bash',
      ['-c', '. scripts/ros2/env.sh >/dev/null && node -e "require(\'rclnodejs\')" && env -0'],
      {
        cwd: ROOT,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const env: NodeJS.ProcessEnv = {};
    for (const entry of out.split('\0')) {
      const eq = entry.indexOf('=');
      if (eq > 0) env[entry.slice(0, eq)] = entry.slice(eq + 1);
    }
    return { env: { ...env, ROS_DOMAIN_ID: DOMAIN, ROS_AUTOMATIC_DISCOVERY_RANGE: 'LOCALHOST', ARMGATE_TOKEN: '' } };
  } catch (e) {
    const stderr = String((e as { stderr?: unknown }).stderr ?? '');
    // env.sh says what is missing in a line of its own; a failed require names the module in its Error line.
    const said = stderr.split('\n').find((line) => /^(ros2:|Error)/.test(line.trim()));
    return { missing: said?.trim() ?? 'the ROS 2 core or rclnodejs is not built' };
  }
}

interface Proc {
  readonly child: ChildProcess;
  stop(): Promise<void>;
}

/** Spawns a node process and resolves once a line of its stdout matches `ready` (its match). */
async function spawnUntil(
  args: string[],
  env: NodeJS.ProcessEnv,
  ready: RegExp,
): Promise<Proc & { match: RegExpExecArray }> {
  const child = spawn(process.execPath, ['--import', 'tsx', ...args], {
    cwd: ROOT,
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const match = await new Promise<RegExpExecArray>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${args[0]} did not start in 60 s: ${stderr}`)), 60_000);
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      const m = ready.exec(line);
      if (m) {
        clearTimeout(timer);
        resolve(m);
      }
    });
    void exited.then(() => reject(new Error(`${args[0]} exited: ${stderr}`)));
  });
  return {
    child,
    match,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

async function startArmgate(
  env: NodeJS.ProcessEnv,
  backend: 'sim' | 'ros2',
  dir: string,
): Promise<Proc & { url: string }> {
  const file = path.join(dir, `${backend}.yaml`);
  await writeFile(file, settingsYaml({ robot: { backend }, sequences: { bag_root: path.join(dir, 'bags') } }));
  // The request log goes to a file, as under a service manager.
  const proc = await spawnUntil(['server.ts', '--settings', file, '--port', '0'], env, /^listening on (http:\S+)$/);
  return { ...proc, url: proc.match[1] ?? '' };
}

async function post(url: string, route: string, body: unknown): Promise<{ status: number; json: unknown }> {
  const res = await fetch(`${url}${route}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() };
}

async function jointPositions(url: string): Promise<number[]> {
  const res = await fetch(`${url}/robot/joint_states`);
  return ((await res.json()) as { position: number[] }).position;
}

/** POST /robot/move/joints to where the arm is: the cost of a move besides the motion itself, ms. */
async function moveOverhead(url: string): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < MOVES; i++) {
    const here = await jointPositions(url);
    const t0 = performance.now();
    const r = await post(url, '/robot/move/joints', { joints: here, speed: 1 });
    samples.push(performance.now() - t0);
    if (r.status !== 200) throw new Error(`move to the current position: ${r.status} ${JSON.stringify(r.json)}`);
  }
  return samples;
}

/** One joint state of /events: its stamp (wall ms) and its fastest joint (rad/s). */
interface Sample {
  readonly stampMs: number;
  readonly speed: number;
}

/** Every joint state of /events?rate_hz=200 while it is open (the stack publishes 100 Hz: all of them). */
function jointStream(url: string): { samples: Sample[]; close(): void } {
  const abort = new AbortController();
  const samples: Sample[] = [];
  void (async () => {
    const res = await fetch(`${url}/events?rate_hz=200`, {
      headers: { accept: 'text/event-stream' },
      signal: abort.signal,
    });
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (!/^event: joint_state$/m.test(frame)) continue;
        const data = /^data: (.*)$/m.exec(frame)?.[1];
        if (!data) continue;
        const state = JSON.parse(data) as { stamp?: number; velocity?: number[] };
        if (state.stamp === undefined) continue;
        samples.push({ stampMs: state.stamp * 1000, speed: Math.max(0, ...(state.velocity ?? []).map(Math.abs)) });
      }
    }
  })().catch(() => undefined);
  return { samples, close: () => abort.abort() };
}

/**
 * From `sentMs` (wall clock) to the stamp of the first joint state that shows the brake: the fastest joint
 * slower than it was in the last state before the stop (by 5 %), or at rest. Undefined when none does.
 */
function brakeMs(samples: readonly Sample[], sentMs: number): number | undefined {
  let before: Sample | undefined;
  // Only wall-clock stamps (ms since 1970) can be compared with this clock.
  for (const s of samples.filter((x) => x.stampMs > 1e12)) {
    if (s.stampMs <= sentMs) before = s;
    else if (before && (s.speed < before.speed * 0.95 || s.speed < 1e-3)) return s.stampMs - sentMs;
  }
  return undefined;
}

/**
 * /stop sent 0.4 s into a slow move: the time it takes to answer, and from its request to the stack's
 * /joint_states showing the brake (by their stamps, the stack's wall clock), ms each.
 */
async function stopDuringMove(url: string): Promise<{ answer: number[]; brake: number[] }> {
  const answer: number[] = [];
  const brake: number[] = [];
  const far = [0.4, 0.2, 0, -1.3, 0, 1.4, 0.2];
  const work = [0, 0, 0, -1.57, 0, 1.57, 0];
  const stream = jointStream(url);
  try {
    for (let i = 0; i < STOPS; i++) {
      const move = post(url, '/robot/move/joints', { joints: i % 2 === 0 ? far : work, speed: 0.1 });
      await new Promise((r) => setTimeout(r, 400));
      const sentMs = Date.now();
      const t0 = performance.now();
      const stopped = await post(url, '/stop', {});
      answer.push(performance.now() - t0);
      if (stopped.status !== 200) throw new Error(`/stop: ${stopped.status}`);
      await move;
      await new Promise((r) => setTimeout(r, 200));
      const ms = brakeMs(stream.samples, sentMs);
      if (ms !== undefined) brake.push(ms);
    }
  } finally {
    stream.close();
  }
  return { answer, brake };
}

/** From the stack's joint-state stamp to the event on /events, ms (same machine clock). */
async function eventLatency(url: string, count = 300): Promise<number[]> {
  const abort = new AbortController();
  const res = await fetch(`${url}/events`, { headers: { accept: 'text/event-stream' }, signal: abort.signal });
  const samples: number[] = [];
  const t0 = performance.now();
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
      const now = Date.now();
      buffer += decoder.decode(chunk, { stream: true });
      let end = buffer.indexOf('\n\n');
      while (end >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        end = buffer.indexOf('\n\n');
        if (!/^event: joint_state$/m.test(frame)) continue;
        const data = /^data: (.*)$/m.exec(frame)?.[1];
        const stampS = data ? (JSON.parse(data) as { stamp?: number }).stamp : undefined;
        // Only wall-clock stamps (seconds since 1970) can be compared with this clock.
        if (stampS !== undefined && stampS > 1e9) samples.push(now - stampS * 1000);
      }
      if (samples.length >= count || performance.now() - t0 > 10_000) break;
    }
  } finally {
    abort.abort();
  }
  return samples;
}

/**
 * Where the last stops' time went, by armgate's own trajectory log (ms from the stop's start): the hold point
 * published, the planner's stop answered, the stop answered.
 */
async function stopPhases(url: string): Promise<{ hold: number[]; planner: number[]; answered: number[] }> {
  const res = await fetch(`${url}/trajectory/logs?n=300`);
  const { lines } = (await res.json()) as { lines: string[] };
  const phases = { hold: [] as number[], planner: [] as number[], answered: [] as number[] };
  for (const line of lines) {
    const m = /stop: timings ms: hold published ([\d.]+), planner's stop answered ([\d.]+), answered ([\d.]+)/.exec(
      line,
    );
    if (!m) continue;
    phases.hold.push(Number(m[1]));
    phases.planner.push(Number(m[2]));
    phases.answered.push(Number(m[3]));
  }
  return phases;
}

const fmt = (xs: readonly number[]) => `${median(xs).toFixed(2)} / ${quantile(xs, 0.99).toFixed(2)}`;

export const ros2Section: Section = {
  id: 'ros2',
  description: 'the ros2 backend over real DDS (the test stack) beside the simulator',
  async run(): Promise<readonly Table[]> {
    const found = ros2Env();
    if ('missing' in found)
      return [
        {
          title: 'ros2: not run',
          header: ['why'],
          rows: [[`${found.missing} (build it with: npm run ros2:build)`]],
        },
      ];
    const env = found.env;
    const dir = await mkdtemp(path.join(tmpdir(), 'armgate-bench-ros2-'));
    const procs: Proc[] = [];
    const generator = await childLoadGenerator();
    try {
      const stack = await spawnUntil(['tests/ros/stack/main.ts'], env, /"event":"ready"/);
      procs.push(stack);
      const ros2 = await startArmgate(env, 'ros2', dir);
      procs.push(ros2);
      const sim = await startArmgate({ ...process.env, ARMGATE_TOKEN: '' }, 'sim', dir);
      procs.push(sim);
      for (const url of [ros2.url, sim.url]) await post(url, '/robot/move/named', { name: 'work', speed: 1 });

      const rates: Record<string, { rps: number[]; p50: number[] }> = {
        ros2: { rps: [], p50: [] },
        sim: { rps: [], p50: [] },
      };
      for (const url of [ros2.url, sim.url])
        await generator.run({ url: `${url}/robot/joint_states`, connections: CONNECTIONS, seconds: 1 });
      for (let round = 0; round < ROUNDS; round++)
        for (const [name, url] of [
          ['ros2', ros2.url],
          ['sim', sim.url],
        ] as const) {
          const r = await generator.run({
            url: `${url}/robot/joint_states`,
            connections: CONNECTIONS,
            seconds: LOAD_S,
          });
          if (r.failures > 0) throw new Error(`${name}: ${r.failures} failed requests under load`);
          rates[name]?.rps.push(r.requestsPerS);
          rates[name]?.p50.push(r.p50Ms);
        }
      const moves = { ros2: await moveOverhead(ros2.url), sim: await moveOverhead(sim.url) };
      const stops = { ros2: await stopDuringMove(ros2.url), sim: await stopDuringMove(sim.url) };
      const phases = { ros2: await stopPhases(ros2.url), sim: await stopPhases(sim.url) };
      const events = { ros2: await eventLatency(ros2.url), sim: await eventLatency(sim.url) };
      const row = (name: 'ros2' | 'sim') => [
        name === 'ros2' ? 'ros2 (ros2_control + test stack over Cyclone DDS)' : 'sim (embedded simulator)',
        Math.round(median(rates[name]?.rps ?? [])),
        median(rates[name]?.p50 ?? []),
        fmt(moves[name]),
        fmt(stops[name].answer),
        phases[name].answered.length > 0
          ? `${fmt(phases[name].hold)}; ${fmt(phases[name].planner)}; ${fmt(phases[name].answered)}`
          : 'not logged',
        stops[name].brake.length > 0
          ? `${fmt(stops[name].brake)} (${stops[name].brake.length})`
          : events[name].length > 0
            ? 'no brake seen'
            : 'not wall-clock stamps',
        events[name].length > 0 ? fmt(events[name]) : 'not wall-clock stamps',
      ];
      return [
        {
          title: `ros2 backend over real DDS beside the simulator (GET /robot/joint_states at ${CONNECTIONS} connections, medians of ${ROUNDS} rounds of ${LOAD_S} s; the rest p50 / p99 in ms)`,
          header: [
            'backend',
            'joint_states req/s',
            'p50 ms',
            `move to here (${MOVES})`,
            `/stop during a move (${STOPS})`,
            'inside the stop: hold published; planner stopped; answered',
            '/stop -> /joint_states brakes',
            'stamp -> /events',
          ],
          rows: [row('ros2'), row('sim')],
          notes: [
            'move to here: POST /robot/move/joints to the current position (no motion): what a move costs besides moving.',
            "inside the stop: armgate's own timings of each stop (its trajectory log), ms from the stop's start to the hold point published on the controller's topic, to the planner's stop service (cobot/stop) answered, and to the answer (the goals' cancels go out with cobot/stop; their confirmations are not waited for).",
            "/stop -> /joint_states brakes: from the stop's request to the stamp of the first joint state whose fastest joint is slower than before the stop (or at rest), the stack's /joint_states read through /events?rate_hz=200 (its count in brackets).",
            "stamp -> /events: from the joint state's header stamp (the stack's clock, or the simulator's) to its event on /events.",
            "Both servers are server.ts in their own process, as npm start runs it; the stack is tests/ros/stack: ros2_control's real joint_trajectory_controller and joint_state_broadcaster (ros2_control_node, mock hardware at 100 Hz), the cobot server and move_group's services.",
          ],
        },
      ];
    } finally {
      generator.close();
      for (const p of procs.reverse()) await p.stop();
      await rm(dir, { recursive: true, force: true });
    }
  },
};
