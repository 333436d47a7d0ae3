/**
 * The client side of the Foxglove bench (forked by foxglove.ts), so that the server's CPU is the server's own. On
 * `{ url, clients, seconds }`: opens `clients` WebSocket connections with the subprotocol foxglove.websocket.v1 (plain
 * `ws`, no decoding: this process must keep up with 50 clients), subscribes each to every advertised channel, and
 * counts the message frames each receives over `seconds` (after a 1 s settle). Answers `{ counts, seconds }` (or
 * `{ error }`); `{ close: true }` closes the connections; ends when the parent disconnects.
 */
import WebSocket from 'ws';

interface Job {
  readonly url: string;
  readonly clients: number;
  readonly seconds: number;
  readonly close?: boolean;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

let open: { ws: WebSocket; count: number }[] = [];

/** Client `index` connects from an address of its own (127.0.1.N): upgrades are rate-limited per address. */
function connect(url: string, index: number): Promise<{ ws: WebSocket; count: number }> {
  return new Promise((resolve, reject) => {
    const localAddress = `127.0.${1 + (index >> 8)}.${1 + (index & 255)}`;
    const ws = new WebSocket(url, ['foxglove.websocket.v1'], { perMessageDeflate: false, localAddress });
    const client = { ws, count: 0 };
    ws.on('error', reject);
    ws.on('message', (data, isBinary) => {
      if (isBinary) {
        client.count++;
        return;
      }
      const message = JSON.parse(data.toString()) as { op: string; channels?: { id: number }[] };
      if (message.op !== 'advertise') return;
      const subscriptions = (message.channels ?? []).map((c) => ({ id: c.id, channelId: c.id }));
      ws.send(JSON.stringify({ op: 'subscribe', subscriptions }));
      resolve(client);
    });
  });
}

process.on('message', async (job: Job) => {
  try {
    if (job.close) {
      for (const c of open) c.ws.terminate();
      open = [];
      process.send?.({});
      return;
    }
    open = await Promise.all(Array.from({ length: job.clients }, (_, i) => connect(job.url, i)));
    await sleep(1000);
    for (const c of open) c.count = 0;
    const t0 = performance.now();
    await sleep(job.seconds * 1000);
    const seconds = (performance.now() - t0) / 1000;
    process.send?.({ counts: open.map((c) => c.count), seconds });
  } catch (e) {
    process.send?.({ error: e instanceof Error ? e.message : String(e) });
  }
});
process.on('disconnect', () => process.exit(0));
process.send?.({ ready: true });
