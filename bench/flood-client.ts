/**
 * The unauthenticated crowds of the attack bench (forked by attack.ts), in a process of their own. On a command it runs
 * for `seconds` and answers `{ statuses, retryAfter, sent }` (the count of each HTTP status answered, and of the 429s
 * that carried a Retry-After):
 * - `flood`: `connections` raw connections, each keeping 16 requests in flight (pipelined), of POSTs with no token to
 *   `path` (the audit flood of issue 37: one refusal per request);
 * - `guess`: one keep-alive connection sending GET /robot/joint_states with a new wrong token each time, one after
 *   another as answers come (token guessing).
 * Ends when the parent disconnects.
 */
import { connect } from 'node:net';

interface Command {
  readonly kind: 'flood' | 'guess';
  readonly url: string;
  readonly seconds: number;
  readonly connections?: number;
  readonly path?: string;
}

const PIPELINE = 16;

function flood(url: URL, connections: number, path: string, seconds: number) {
  const statuses: Record<string, number> = {};
  let sent = 0;
  const request = `POST ${path} HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`;
  const until = performance.now() + seconds * 1000;
  const one = () =>
    new Promise<void>((resolve) => {
      const socket = connect({ host: url.hostname, port: Number(url.port) });
      let inFlight = 0;
      let tail = '';
      const send = () => {
        while (inFlight < PIPELINE && performance.now() < until) {
          socket.write(request);
          inFlight++;
          sent++;
        }
        if (inFlight === 0) socket.end();
      };
      socket.on('connect', send);
      socket.setEncoding('latin1');
      socket.on('data', (chunk: string) => {
        const text = tail + chunk;
        const found = text.match(/HTTP\/1\.1 \d{3}/g) ?? [];
        for (const line of found) statuses[line.slice(9)] = (statuses[line.slice(9)] ?? 0) + 1;
        inFlight -= found.length;
        tail = text.slice(-16);
        send();
      });
      socket.on('error', () => undefined);
      socket.on('close', () => resolve());
    });
  return Promise.all(Array.from({ length: connections }, one)).then(() => ({ statuses, retryAfter: 0, sent }));
}

async function guess(url: URL, seconds: number) {
  const statuses: Record<string, number> = {};
  let retryAfter = 0;
  let sent = 0;
  const until = performance.now() + seconds * 1000;
  while (performance.now() < until) {
    const res = await fetch(`${url.origin}/robot/joint_states`, {
      headers: { authorization: `Bearer wrong-${sent++}-${Math.random().toString(36).slice(2)}` },
    });
    await res.arrayBuffer();
    statuses[res.status] = (statuses[res.status] ?? 0) + 1;
    if (res.status === 429 && res.headers.get('retry-after')) retryAfter++;
  }
  return { statuses, retryAfter, sent };
}

process.on('message', (message: unknown) => {
  const command = message as Command;
  const url = new URL(command.url);
  const run =
    command.kind === 'flood'
      ? flood(url, command.connections ?? 3, command.path ?? '/', command.seconds)
      : guess(url, command.seconds);
  run.then(
    (result) => process.send?.(result),
    (e: Error) => process.send?.({ error: e.message }),
  );
});
process.on('disconnect', () => process.exit(0));
process.send?.({ ready: true });
