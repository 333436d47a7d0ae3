/**
 * What the crowd sections (events.ts, foxglove.ts) share: their clients in a child process (one job at a time), a
 * mover that keeps the arm going between two poses, the /stop samples from stop.ts's client, and a run measured by
 * the server's CPU and worst event-loop delay.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { TestServer } from '../tests/support/server.ts';
import { summary } from './stats.ts';
import type { stopClient } from './stop.ts';

/** Two poses the mover goes between. */
const A = [0.6, 0.4, 0, -1.2, 0.2, 1.2, 0.3];
const B = [-0.6, 0.2, 0.2, -1.5, -0.2, 1.4, -0.3];

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The child process with the clients: one job at a time; its answer rejects when it carries an error. */
export interface Clients<R extends { readonly error?: string }> {
  run(job: Record<string, unknown>): Promise<R>;
  close(): void;
}

/** Forks `module` (a client script beside this file, run under tsx) and waits for its first message. */
export async function forkClients<R extends { readonly error?: string }>(
  module: URL,
  name: string,
): Promise<Clients<R>> {
  const child: ChildProcess = fork(module, {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  await new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve());
    child.once('exit', (code) => reject(new Error(`${name} exited (code ${code})`)));
  });
  return {
    run(job) {
      return new Promise((resolve, reject) => {
        child.once('message', (m: R) => (m.error ? reject(new Error(m.error)) : resolve(m)));
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
export function keepMoving(server: TestServer): { done: () => Promise<void> } {
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

/** `samples` stops 200 ms apart after one unmeasured (the stop client's first request in its fresh process). */
export async function stopSamples(
  stopper: Awaited<ReturnType<typeof stopClient>>,
  url: string,
  samples: number,
): Promise<ReturnType<typeof summary>> {
  await stopper.stop(url);
  await sleep(200);
  const ms: number[] = [];
  for (let k = 0; k < samples; k++) {
    ms.push(await stopper.stop(url));
    await sleep(200);
  }
  return summary(ms);
}

/** Runs a job while measuring the server's CPU (% of one core) and worst event-loop delay. */
export async function measured<R>(run: () => Promise<R>): Promise<{ result: R; cpuPct: number; loopMs: number }> {
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const result = await run();
  const cpu = process.cpuUsage(cpu0);
  const elapsedMs = performance.now() - t0;
  loop.disable();
  return { result, cpuPct: ((cpu.user + cpu.system) / 1000 / elapsedMs) * 100, loopMs: loop.max / 1e6 };
}
