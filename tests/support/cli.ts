/** The command line server (`server.ts`) as a child process, for tests of start-up and signals. */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { PROJECT_ROOT } from './settings-file.ts';

export interface CliRun {
  readonly child: ChildProcess;
  readonly out: () => string;
  readonly err: () => string;
  readonly exited: Promise<number | null>;
}

/**
 * Starts the server as `npm start` runs it (`node scripts/start.mjs ARGS`: server.ts compiled, the
 * bundle checked against the sources) with no token unless `env` gives one; stdout and stderr are collected.
 */
export function runServerCli(args: string[], env: Record<string, string> = {}): CliRun {
  const child = spawn(process.execPath, [path.join(PROJECT_ROOT, 'scripts', 'start.mjs'), ...args], {
    cwd: PROJECT_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ARMGATE_TOKEN: '', ...env },
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    err += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, out: () => out, err: () => err, exited };
}

/**
 * The URL of the server's one `listening on URL` line; throws if it exits first or hangs. The wait only guards a hang:
 * how fast the server starts is a figure of `npm run bench -- startup` (beside a bare node:http start in the same
 * run), not of this line; three CLI starts side by side on a loaded 2-core machine took over 20 s.
 */
export async function listeningUrl(r: CliRun, timeoutMs = 120_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const m = /^listening on (http:\/\/[^\s]+)$/m.exec(r.out());
    if (m?.[1]) return m[1];
    if (r.child.exitCode !== null) throw new Error(`exited early: ${r.err()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('no listening line');
}
