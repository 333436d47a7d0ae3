/**
 * Memory under work (issue 23): armgate as npm start serves it (the compiled server in its own process, its request
 * log on a file) takes 100,000 mixed requests from this process: reads (GET /robot/joint_states and /robot/pose),
 * moves (POST /robot/move/joints to where the arm is, one at a time), MCP calls (tools/call get_joint_states in one
 * session, plain JSON) and 1,000 connects to GET /events (each reads its first event, then goes). Its RSS is read
 * after the first 10,000 and after all 100,000, each time after a pause of PAUSE_MS with no request in flight; the
 * target is no growth: within 20 MB.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { npmStartServer } from './http-joint-states.ts';
import type { Section } from './section.ts';
import { type Table, verdict } from './table.ts';

const TOTAL = Number(process.env.BENCH_MEMORY_TOTAL ?? 100_000);
const FIRST = Number(process.env.BENCH_MEMORY_FIRST ?? 10_000);
const CONCURRENCY = 8;
const PAUSE_MS = 2000;
const TARGET_GROWTH_MB = 20;
const VERSION = '2025-06-18';

/** What request `index` is: of every 100, 1 events connect, 4 moves, 5 MCP calls, 90 reads. */
type Kind = 'events' | 'move' | 'mcp' | 'read';
function kindOf(index: number): Kind {
  const slot = index % 100;
  if (slot === 0) return 'events';
  if (slot % 25 === 1) return 'move';
  if (slot >= 2 && slot <= 6) return 'mcp';
  return 'read';
}

function status(pid: number): { rssMb: number; hwmMb: number } {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB$`, 'm').exec(text)?.[1]);
  return { rssMb: kb('VmRSS') / 1024, hwmMb: kb('VmHWM') / 1024 };
}

/** V8's heap as a diagnostic report (`--report-on-signal`) shows it: committed and used MB of the young and old generations. */
interface HeapSpaces {
  readonly newCommittedMb: number;
  readonly newUsedMb: number;
  readonly oldCommittedMb: number;
  readonly oldUsedMb: number;
}

/** Asks the server for a diagnostic report (SIGUSR2) and reads its heap spaces from the report file it writes into `dir`. */
async function heapSpaces(pid: number, dir: string): Promise<HeapSpaces | undefined> {
  const before = new Set(await readdir(dir));
  process.kill(pid, 'SIGUSR2');
  for (let waited = 0; waited < 5000; waited += 50) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    const file = (await readdir(dir)).find((name) => !before.has(name) && name.endsWith('.json'));
    if (file === undefined) continue;
    try {
      const spaces = JSON.parse(readFileSync(path.join(dir, file), 'utf8')).javascriptHeap.heapSpaces;
      const mb = (n: number) => n / 1024 / 1024;
      return {
        newCommittedMb: mb(spaces.new_space.committedMemory),
        newUsedMb: mb(spaces.new_space.used),
        oldCommittedMb: mb(spaces.old_space.committedMemory),
        oldUsedMb: mb(spaces.old_space.used),
      };
    } catch {
      // Still being written.
    }
  }
  return undefined;
}

const spacesText = (h: HeapSpaces | undefined) =>
  h === undefined
    ? 'no report'
    : `old space ${h.oldCommittedMb.toFixed(1)} MB committed, ${h.oldUsedMb.toFixed(1)} used; new space ${h.newCommittedMb.toFixed(1)} committed, ${h.newUsedMb.toFixed(1)} used`;

export const memorySection: Section = {
  id: 'memory',
  description:
    'RSS of npm start after 10,000 and after 100,000 mixed requests (reads, moves, MCP calls, /events connects)',
  async run() {
    // BENCH_MEMORY_SNAPSHOTS=DIR: the server writes a heap snapshot into DIR at each reading (after a full GC).
    const snapshots = process.env.BENCH_MEMORY_SNAPSHOTS;
    // BENCH_MEMORY_NODE_ARGS: node options for the server (space-separated), to compare settings in the same machine.
    const nodeArgs = (process.env.BENCH_MEMORY_NODE_ARGS ?? '').split(' ').filter(Boolean);
    // Without snapshots, each reading is followed by a diagnostic report of the server's heap spaces (SIGUSR2 too).
    const reports = snapshots ? undefined : await mkdtemp(path.join(tmpdir(), 'armgate-bench-memory-'));
    const server = await npmStartServer([
      ...nodeArgs,
      ...(snapshots ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${snapshots}`] : []),
      ...(reports ? ['--report-on-signal', '--report-signal=SIGUSR2', `--report-directory=${reports}`] : []),
    ]);
    const snapshot = async () => {
      if (!snapshots) return;
      process.kill(server.pid, 'SIGUSR2');
      await new Promise((resolve) => setTimeout(resolve, 8000));
    };
    try {
      const url = server.url;
      const idle = status(server.pid);
      const init = await fetch(`${url}/mcp/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 0,
          method: 'initialize',
          params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
        }),
      });
      await init.text();
      const mcpHeaders = {
        'content-type': 'application/json',
        accept: 'application/json',
        'mcp-session-id': init.headers.get('mcp-session-id') ?? '',
        'mcp-protocol-version': VERSION,
      };
      let moving: Promise<unknown> = Promise.resolve();
      const counts: Record<Kind, number> = { events: 0, move: 0, mcp: 0, read: 0 };
      const failures: string[] = [];
      const expect = async (what: string, res: Response) => {
        if (res.status !== 200 && failures.length < 5) failures.push(`${what}: ${res.status} ${await res.text()}`);
        else await res.arrayBuffer();
      };
      const one = async (index: number) => {
        const kind = kindOf(index);
        counts[kind]++;
        if (kind === 'read') {
          const path = index % 2 === 0 ? '/robot/joint_states' : '/robot/pose';
          return expect(path, await fetch(`${url}${path}`));
        }
        if (kind === 'mcp') {
          const body = JSON.stringify({
            jsonrpc: '2.0',
            id: index,
            method: 'tools/call',
            params: { name: 'get_joint_states', arguments: {} },
          });
          return expect('MCP tools/call', await fetch(`${url}/mcp/mcp`, { method: 'POST', headers: mcpHeaders, body }));
        }
        if (kind === 'move') {
          // One move at a time (a second would be refused with 409 while the first runs).
          const move = moving.then(async () => {
            const here = ((await (await fetch(`${url}/robot/joint_states`)).json()) as { position: number[] }).position;
            const res = await fetch(`${url}/robot/move/joints`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ joints: here, speed: 1 }),
            });
            await expect('move to here', res);
          });
          moving = move.catch(() => {});
          return move;
        }
        const abort = new AbortController();
        const res = await fetch(`${url}/events`, { headers: { accept: 'text/event-stream' }, signal: abort.signal });
        if (res.status !== 200) return expect('/events', res);
        const reader = (res.body as ReadableStream<Uint8Array>).getReader();
        const decoder = new TextDecoder();
        let text = '';
        while (!text.includes('\n\n')) {
          const { done, value } = await reader.read();
          if (done) break;
          text += decoder.decode(value, { stream: true });
        }
        abort.abort();
        await reader.cancel().catch(() => {});
      };
      let next = 0;
      const runUntil = async (end: number) => {
        const loop = async () => {
          while (next < end && failures.length === 0) await one(next++);
        };
        await Promise.all(Array.from({ length: CONCURRENCY }, loop));
        if (failures.length > 0) throw new Error(`requests failed under work: ${failures.join('; ')}`);
      };
      const settle = () => new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
      const t0 = performance.now();
      await runUntil(FIRST);
      await settle();
      const first = status(server.pid);
      const firstSpaces = reports ? await heapSpaces(server.pid, reports) : undefined;
      await snapshot();
      await runUntil(TOTAL);
      const seconds = (performance.now() - t0) / 1000;
      await settle();
      const last = status(server.pid);
      const lastSpaces = reports ? await heapSpaces(server.pid, reports) : undefined;
      await snapshot();
      const growth = last.rssMb - first.rssMb;
      const table: Table = {
        title: `Memory under work: npm start's RSS after ${FIRST.toLocaleString('en')} and after ${TOTAL.toLocaleString('en')} mixed requests (${CONCURRENCY} concurrent clients, each read ${PAUSE_MS / 1000} s after a pause)`,
        header: ['when', 'RSS MB', 'peak RSS so far MB'],
        rows: [
          ['idle, before any request', idle.rssMb, idle.hwmMb],
          [`after the first ${FIRST.toLocaleString('en')}`, first.rssMb, first.hwmMb],
          [`after all ${TOTAL.toLocaleString('en')}`, last.rssMb, last.hwmMb],
        ],
        notes: [
          `growth from ${FIRST.toLocaleString('en')} to ${TOTAL.toLocaleString('en')}: ${growth.toFixed(1)} MB; target within ${TARGET_GROWTH_MB} MB: ${verdict(Math.abs(growth) <= TARGET_GROWTH_MB)}`,
          ...(reports
            ? [
                `V8's heap after the first ${FIRST.toLocaleString('en')}: ${spacesText(firstSpaces)}`,
                `V8's heap after all ${TOTAL.toLocaleString('en')}: ${spacesText(lastSpaces)} (diagnostic reports, read after the RSS)`,
              ]
            : []),
          `requests: ${counts.read} reads, ${counts.move} moves (to where the arm is), ${counts.mcp} MCP tools/call, ${counts.events} /events connects, in ${seconds.toFixed(0)} s; ${await server.requestLines()} request lines in the log file`,
        ],
      };
      return [table];
    } finally {
      await server.close();
      if (reports) await rm(reports, { recursive: true, force: true });
    }
  },
};
