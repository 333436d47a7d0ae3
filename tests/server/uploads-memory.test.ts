/**
 * The memory of uploads is given back (issue 37, uploads): 16 uploads of 10 MiB at once, three times over, leave the
 * server's RSS where it was once they are answered. Each upload's buffer was a 10 MiB allocation that glibc served
 * from its heap once the first one freed had raised its mmap threshold, and kept when freed: RSS climbed by about
 * 160 MB and stayed (the bench's long-lived server reached 825 MB). The server runs in a child process of its own
 * (tests/support/upload-server-child.ts) so that the RSS read is the server's alone.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { nodeEntry } from '../support/node-entry.ts';

const MiB = 1024 * 1024;
/** A CSV of about `bytes`, every position of joint 1 out of range (99 rad): a check would refuse it; nothing moves. */
function badCsv(bytes: number): string {
  const lines = ['t,joint1,joint2,joint3,joint4,joint5,joint6,joint7'];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const line = `${(i * 0.01).toFixed(6)},99.000000000000,0.000000000000,0.000000000000,-1.570000000000,0,1.57,0`;
    lines.push(line);
    size += line.length + 1;
  }
  return `${lines.join('\n')}\n`;
}

/**
 * A multipart/form-data body of one file field `file`, as fetch encodes a FormData of it, built once: its bytes and
 * Content-Type. Sent 48 times, it spared encoding the 10 MiB text into a Blob and streaming it through the multipart
 * encoder at each upload (about a second of this process's CPU); the server reads the same form.
 */
function multipartFile(filename: string, content: string): { body: Uint8Array<ArrayBuffer>; type: string } {
  const boundary = `----armgate-upload-${'7'.repeat(16)}`;
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`;
  const body = new TextEncoder().encode(`${head}${content}\r\n--${boundary}--\r\n`);
  return { body, type: `multipart/form-data; boundary=${boundary}` };
}

/**
 * Every request on a connection of its own, closed after its answer: none is sent on a kept-alive connection that has
 * idled out meanwhile. Building a 10 MiB CSV holds this process's event loop (seconds, on a loaded machine) while the
 * server ends an idle connection (after its 5 s keep-alive timeout): the next request went out on it before the close
 * was read and failed "other side closed" without reaching the server (undici retries no POST).
 */
const CLOSE = { connection: 'close' } as const;

describe('uploads give their memory back', () => {
  let child: ChildProcess;
  let url: string;
  const ask = <T>(message: string) =>
    new Promise<T>((resolve) => {
      child.once('message', (m) => resolve(m as T));
      child.send(message);
    });
  before(async () => {
    const entry = nodeEntry(fileURLToPath(new URL('../support/upload-server-child.ts', import.meta.url)));
    child = fork(entry.file, {
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      execArgv: ['--expose-gc', ...entry.execArgv],
    });
    url = await new Promise<string>((resolve, reject) => {
      child.once('message', (m) => resolve((m as { url: string }).url));
      child.once('exit', (code) => reject(new Error(`the server child exited (code ${code})`)));
    });
  });
  after(async () => {
    child.removeAllListeners('exit');
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.send('close');
      await exited;
    }
  });

  it('16 uploads of 10 MiB at once, three times: the RSS once they are answered is within 64 MiB of before', async () => {
    // The baseline is a server that has checked one small file: the checker's thread has run (and ended when idle, as
    // it will after the rounds), so its one-off cost is not counted as the uploads'.
    const small = new FormData();
    small.append('file', new Blob([badCsv(4096)]), 'small.csv');
    const checked = await fetch(`${url}/trajectory/send_csv`, { method: 'POST', body: small, headers: CLOSE });
    assert.equal(checked.status, 422, await checked.text());
    const before = await ask<NodeJS.MemoryUsage>('memory');
    const large = multipartFile('large.csv', badCsv(10 * MiB - 4096));
    const statuses: number[] = [];
    for (let round = 0; round < 3; round++) {
      // A stop every 100 ms while they come in: each upload a stop came after is 409 once its body is in (not checked).
      let stopping = true;
      const stops = (async () => {
        while (stopping) {
          await (await fetch(`${url}/stop`, { method: 'POST', headers: CLOSE })).arrayBuffer();
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      })();
      const answers = await Promise.all(
        Array.from({ length: 16 }, async () => {
          const headers = { ...CLOSE, 'content-type': large.type };
          const res = await fetch(`${url}/trajectory/send_csv`, { method: 'POST', body: large.body, headers });
          await res.arrayBuffer();
          return res.status;
        }),
      );
      stopping = false;
      await stops;
      statuses.push(...answers);
    }
    assert.equal(statuses.length, 48);
    assert.ok(
      statuses.every((status) => status === 409 || status === 422),
      `every upload refused, nothing moved: ${statuses.join(' ')}`,
    );
    const afterwards = await ask<NodeJS.MemoryUsage>('memory');
    const grownMiB = (afterwards.rss - before.rss) / MiB;
    const mib = (m: NodeJS.MemoryUsage) =>
      Object.entries(m)
        .map(([k, v]) => `${k} ${(v / MiB).toFixed(0)}`)
        .join(', ');
    assert.ok(
      grownMiB < 64,
      `RSS ${(before.rss / MiB).toFixed(0)} -> ${(afterwards.rss / MiB).toFixed(0)} MiB (before: ${mib(before)}; after: ${mib(afterwards)})`,
    );
  });
});
