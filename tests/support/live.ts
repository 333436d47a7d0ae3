/** Small helpers for end-to-end tests against a live armgate server. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { type Dirent, readdirSync, readFileSync, type Stats, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { JOINTS, MAX_VEL, WORK } from './arm.ts';

/** The arm's joint names, named position and limits come from the fixture module (tests/support/arm.ts). */
export { JOINTS as JOINT_NAMES, MAX_VEL, WORK };
/** A log line: an ISO 8601 UTC timestamp with milliseconds, a space, the text. */
export const LOG_LINE = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z) (.*)$/s;

export interface JointStates {
  readonly name: string[];
  readonly position: number[];
  readonly velocity: number[];
  readonly effort: number[];
}

export interface Issue {
  readonly loc: (string | number)[];
  readonly msg: string;
  readonly type: string;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** An app answered in memory (lib/server/start.ts's Armgate: `request(path, init)`), no socket. */
export interface InMemory {
  request(input: string, init?: RequestInit): Promise<Response>;
}

/** Where a suite sends its requests: a live server's base URL, or an app in memory. */
export type Target = string | InMemory;

/** Sends `path` (with fetch's init) to the target: over a socket to a URL, or in memory to an app. */
export function send(target: Target, path: string, init?: RequestInit): Promise<Response> {
  return typeof target === 'string' ? fetch(`${target}${path}`, init) : target.request(path, init);
}

/** GET `path` and parse the JSON body, asserting the status. */
export async function getJson<T>(url: Target, path: string, status = 200): Promise<T> {
  const res = await send(url, path);
  const text = await res.text();
  assert.equal(res.status, status, `GET ${path}: ${text}`);
  return JSON.parse(text) as T;
}

/** POST a JSON body (or a form, or raw JSON text, both sent as application/json) and return the status and the parsed body. */
export async function post<T = unknown>(
  url: Target,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: T }> {
  const init: RequestInit = { method: 'POST' };
  if (body instanceof FormData) init.body = body;
  else if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    init.headers = { 'content-type': 'application/json' };
  }
  const res = await send(url, path, init);
  const text = await res.text();
  return { status: res.status, body: (text === '' ? undefined : JSON.parse(text)) as T };
}

/** The 422 issues of a response body, asserting the shape. */
export function issuesOf(body: unknown): Issue[] {
  const detail = (body as { detail?: unknown }).detail;
  assert.ok(Array.isArray(detail) && detail.length > 0, `expected a 422 body with issues, got ${JSON.stringify(body)}`);
  for (const issue of detail as Issue[]) {
    assert.ok(Array.isArray(issue.loc), JSON.stringify(issue));
    assert.equal(typeof issue.msg, 'string');
    assert.equal(typeof issue.type, 'string');
  }
  return detail as Issue[];
}

/** Issues as `loc.joined msg` lines, for pattern matching. */
export function describeIssues(issues: readonly Issue[]): string {
  return issues.map((i) => `${i.loc.join('.')} ${i.msg}`).join('\n');
}

export const jointStates = (url: Target) => getJson<JointStates>(url, '/robot/joint_states');
export const positions = async (url: Target) => (await jointStates(url)).position;

/** Largest absolute difference between two joint vectors. */
export function maxDiff(a: readonly number[], b: readonly number[]): number {
  return Math.max(...a.map((q, i) => Math.abs(q - (b[i] ?? Number.NaN))));
}

/** Polls `get` every `everyMs` until `ok` holds; fails with the last value after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  get: () => Promise<T>,
  ok: (value: T) => boolean,
  timeoutMs = 15_000,
  everyMs = 20,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await get();
    if (ok(value)) return value;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}; last: ${JSON.stringify(value)}`);
    await sleep(everyMs);
  }
}

/** Waits until every joint velocity is 0. */
export function atRest(url: Target, timeoutMs = 5000): Promise<JointStates> {
  return waitFor(
    'the arm at rest',
    () => jointStates(url),
    (s) => s.velocity.every((v) => v === 0),
    timeoutMs,
    10,
  );
}

/** The latest n lines of a log endpoint (with the timestamp). */
export async function logLines(
  url: Target,
  path: '/trajectory/logs' | '/sequences/logs',
  n: number,
): Promise<string[]> {
  return (await getJson<{ lines: string[] }>(url, `${path}?n=${n}`)).lines;
}

/** True when a process (pid > 0) or process group (pid < 0) exists; ESRCH means gone. */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw e;
  }
}

/**
 * The members of process group `pgid` that are still alive, as "pid state command" (from /proc;
 * zombies, dead and waiting for init to collect them, are not alive).
 */
export function liveGroupMembers(pgid: number): string[] {
  const live: string[] = [];
  for (const pid of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue;
    }
    const command = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const [state, , group] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(group) === pgid && state !== 'Z' && state !== 'X') live.push(`${pid} ${state} ${command}`);
  }
  return live;
}

/** Asserts that a process is gone (kill(pid, 0) throws ESRCH) and no member of its process group is alive. */
export function assertProcessGone(pid: number): void {
  assert.throws(() => process.kill(pid, 0), { code: 'ESRCH' }, `process ${pid} still exists`);
  assert.deepEqual(liveGroupMembers(pid), [], `process group ${pid} still has live members`);
}

/**
 * Samples GET /robot/joint_states back to back (about every `everyMs`) until `stop()` says so,
 * recording for each sample the wall-clock times its request was sent and answered.
 */
export async function sampleJointStates(
  url: Target,
  stop: () => boolean,
  everyMs = 10,
  /** The array the samples go into as they come (a test can count them while sampling). */
  samples: { sentMs: number; doneMs: number; state: JointStates }[] = [],
): Promise<{ sentMs: number; doneMs: number; state: JointStates }[]> {
  while (!stop()) {
    const sentMs = performance.now();
    const state = await jointStates(url);
    samples.push({ sentMs, doneMs: performance.now(), state });
    await sleep(everyMs);
  }
  return samples;
}

/**
 * Asserts that no joint moved faster than `vmax[j] * speedScale * timeScale` (rad per real second)
 * between consecutive samples: the state of a sample is at most one publishing period plus a margin
 * older than its request, so the simulated time between two samples is bounded by the span from
 * the first request sent to the second answered plus `slackMs`. A jump breaks this at once.
 */
export function assertNoJump(
  samples: readonly { sentMs: number; doneMs: number; state: JointStates }[],
  speedScale: number,
  timeScale: number,
  slackMs = 40,
): void {
  for (let k = 1; k < samples.length; k++) {
    const a = samples[k - 1];
    const b = samples[k];
    if (!a || !b) continue;
    const spanS = (b.doneMs - a.sentMs + slackMs) / 1000;
    for (let j = 0; j < 7; j++) {
      const step = Math.abs((b.state.position[j] ?? 0) - (a.state.position[j] ?? 0));
      const bound = (MAX_VEL[j] ?? 0) * speedScale * timeScale * spanS * 1.5 + 1e-6;
      assert.ok(
        step <= bound,
        `joint${j + 1} moved ${step.toFixed(5)} rad in ${(spanS * 1000).toFixed(0)} ms (bound ${bound.toFixed(5)}): a jump`,
      );
    }
  }
}

/**
 * Files in os.tmpdir() and its folders one level down that contain `marker` (the configuration must never touch the
 * disk). Only files whose status changed at or after `sinceMs` (epoch ms, taken before the run began; less a second
 * for the file system's coarse clock) are read: writing a file changes its ctime, which nothing can set back, so a
 * file unchanged since then cannot hold a marker made after it. The other suites' files in a shared /tmp (a GB of
 * bags here) are skipped unread.
 */
export async function tempFilesWith(marker: string, sinceMs: number): Promise<string[]> {
  const changedAfterMs = sinceMs - 1000;
  const found: string[] = [];
  for (const file of recentSmallTempFiles(changedAfterMs) ?? scanTempFiles(changedAfterMs)) {
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      // Removed (or made unreadable) since it was listed: it holds nothing now.
    }
    if (text.includes(marker)) found.push(file);
  }
  return found;
}

/** A configuration is small; bags and the like of other suites are skipped unread. */
const TEMP_FILE_MAX_BYTES = 1024 * 1024;

/**
 * The files tempFilesWith reads, by find(1): regular files in os.tmpdir() and its folders one level down (links not
 * followed), at most TEMP_FILE_MAX_BYTES, whose status changed after `changedAfterMs`. One process: a shared /tmp holds
 * tens of thousands of other suites' files, and find's stat calls cost ~0.1 s where node's took ~0.4 s a call.
 * Undefined where there is no find (then scanTempFiles).
 */
function recentSmallTempFiles(changedAfterMs: number): string[] | undefined {
  const args = ['-H', tmpdir(), '-mindepth', '1', '-maxdepth', '2', '-type', 'f'];
  args.push('-size', `-${TEMP_FILE_MAX_BYTES + 1}c`, '-newerct', `@${(changedAfterMs / 1000).toFixed(3)}`, '-print0');
  // A folder it may not read makes find exit 1 after listing the rest: what it listed is kept.
  const run = spawnSync('find', args, {
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  if (run.error || run.status === null || run.status > 1) return undefined;
  return run.stdout.split('\0').filter((file) => file.length > 0);
}

/** The same files as recentSmallTempFiles, listed and stat-ed in this process. */
function scanTempFiles(changedAfterMs: number): string[] {
  const files: string[] = [];
  // Synchronous calls: a promise per file (each tracked by the test runner's hooks) took ~2.5 s of CPU a call.
  const lookAll = (dir: string, entries: Dirent[]) => {
    for (const e of entries) {
      if (!e.isFile()) continue;
      const file = path.join(dir, e.name);
      let stats: Stats | undefined;
      try {
        stats = statSync(file);
      } catch {
        // Removed since it was listed.
      }
      if (stats && stats.size <= TEMP_FILE_MAX_BYTES && stats.ctimeMs >= changedAfterMs) files.push(file);
    }
  };
  const list = (dir: string): Dirent[] => {
    try {
      return readdirSync(dir, { withFileTypes: true });
    } catch {
      return [];
    }
  };
  const top = list(tmpdir());
  lookAll(tmpdir(), top);
  for (const e of top) {
    if (!e.isDirectory()) continue;
    const full = path.join(tmpdir(), e.name);
    lookAll(full, list(full));
  }
  return files;
}
