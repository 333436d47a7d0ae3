/**
 * A crowd of raw connections held in a child process of its own (tests of the connection caps), so that the server's
 * process carries only the server's work and its own descriptors. The child opens connections as told and never reads
 * what the server sends; it closes nothing until told to end.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { nodeEntry } from './node-entry.ts';

/** What each connection of a crowd sends: nothing, or the head of a POST whose body never comes (busy). */
export type CrowdSends = 'nothing' | 'unfinished-body';

export interface CrowdOrder {
  readonly port: number;
  readonly count: number;
  /** The client addresses, taken in turn (any 127.x.y.z is a different client address on Linux). */
  readonly from: readonly string[];
  readonly sends: CrowdSends;
}

/** The child's counts: connections opened, and of them those the server has closed (or reset). */
export interface CrowdCounts {
  readonly opened: number;
  readonly closedByServer: number;
  readonly failed: number;
}

export interface ConnectionCrowd {
  open(order: CrowdOrder): Promise<CrowdCounts>;
  counts(): Promise<CrowdCounts>;
  end(): Promise<void>;
}

/** Forks the crowd child (tests/support/connection-crowd-child.ts). */
export async function connectionCrowd(): Promise<ConnectionCrowd> {
  const entry = nodeEntry(fileURLToPath(new URL('./connection-crowd-child.ts', import.meta.url)));
  const child: ChildProcess = fork(entry.file, {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    execArgv: [...entry.execArgv],
  });
  await new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve());
    child.once('exit', (code) => reject(new Error(`crowd child exited (code ${code})`)));
  });
  const ask = (command: object) =>
    new Promise<CrowdCounts>((resolve) => {
      child.once('message', (m) => resolve(m as CrowdCounts));
      child.send(command);
    });
  return {
    open: (order) => ask({ kind: 'open', ...order }),
    counts: () => ask({ kind: 'counts' }),
    end: () =>
      new Promise<void>((resolve) => {
        child.removeAllListeners('exit');
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill();
      }),
  };
}
