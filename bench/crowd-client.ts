/**
 * The crowds of the stop bench (forked by stop.ts), in a process of their own so that the server's
 * event loop carries only the server's work. On `{ kind, url, count }` it opens the crowd and answers
 * `{ ready: n }` once n of them hold the server (`{ error }` otherwise); `{ kind: 'close' }` ends it and
 * answers `{ closed: true, statuses }`, the count of each HTTP status the crowd was answered meanwhile. Clients come from several loopback addresses (127.0.0.2 upwards), as from
 * several machines, so the per-address cap (web.limits.max_connections_per_client) is not what they meet.
 *
 * - `slow`: POSTs whose body trickles at 1 byte/s (Content-Length 100,000);
 * - `events`: GET /events streams, read as they come (each socket flowing: every byte read as it arrives);
 * - `events-50hz`: GET /events streams read as a browser's page does, 50 times a second: the sockets are paused and
 *   every 20 ms each one's buffered bytes are read (between reads Node takes at most 16 KiB per socket from the kernel);
 * - `held`: connections from one address (127.0.0.200) that send nothing and never read, as the attack of issue 37;
 * - `uploads`: multipart uploads of a 10 MB CSV to /trajectory/send_csv, each sent again when answered
 *   (after the Retry-After of a 503); `{ closed }` also carries each upload's time from sending to its answer;
 * - `jog-sockets`: jog WebSockets (GET /robot/jog), 20 per address, each sending a jog command 90 times a second
 *   (under the route's cap of 100), reading every answer: one jogs, the others are refused 409 (atk2's crowd);
 * - `foxglove-flood`: Foxglove connections (`url` the Foxglove server's), one per address, each sending getParameters
 *   950 times a second (under MAX_CLIENT_MESSAGES_PER_S, 1,000), reading every answer (atk3's crowd).
 * - `mcp-batches`: MCP clients, each in a session of its own, POSTing in a loop (the next when the last is answered)
 *   the largest batch the endpoint reads: as many small tools/call messages as fit in MAX_MCP_BODY_BYTES;
 * - `mcp-keys`: the same with 100 tools/call messages (a batch the SDK takes) whose arguments have thousands of keys
 *   each, filling MAX_MCP_BODY_BYTES (what the SDK's schemas copy key by key);
 * - `mcp-distinct`: the same with one tools/call whose arguments hold as many small objects, each of a key of its own,
 *   as fit (what JSON.parse is slowest on: ~80 ms a MiB).
 * - `rest-distinct`: REST clients POSTing in a loop to /robot/move/joints the largest JSON body REST reads
 *   (MAX_JSON_BODY_BYTES): the joints and a `pad` of as many small objects, each of a key of its own, as fit (refused
 *   422 for the unknown field once parsed).

 * The WebSocket crowds tally `sent`, `answers` and each close code (`close NNNN`) in place of HTTP statuses.
 */
import { connect, type Socket } from 'node:net';
import WebSocket from 'ws';
import { MAX_JSON_BODY_BYTES } from '../lib/body/limits.ts';
import { MAX_MCP_BODY_BYTES } from '../lib/mcp/server.ts';

/** The crowds this child can hold (bench/stop.ts's rows). */
export type CrowdKind =
  | 'slow'
  | 'events'
  | 'events-50hz'
  | 'held'
  | 'uploads'
  | 'jog-sockets'
  | 'foxglove-flood'
  | 'mcp-batches'
  | 'mcp-keys'
  | 'mcp-distinct'
  | 'rest-distinct';

interface Command {
  readonly kind: CrowdKind | 'close';
  readonly url?: string;
  readonly count?: number;
  readonly csv?: string;
}

const PER_ADDRESS = 100;
const sockets = new Set<Socket>();
const timers = new Set<ReturnType<typeof setInterval>>();
let uploading = false;
/** Ends the uploads in flight when the crowd closes: their answers are not the next row's. */
let uploadsAbort = new AbortController();
let statuses: Record<string, number> = {};
let uploadMs: number[] = [];
const webSockets = new Set<WebSocket>();

const tally = (status: number | string) => {
  statuses[status] = (statuses[status] ?? 0) + 1;
};

/** The loopback address the i-th client connects from. */
const fromAddress = (i: number) => `127.0.0.${2 + Math.floor(i / PER_ADDRESS)}`;

/** A raw connection to the server from the i-th client's address; resolves when connected. */
function open(url: URL, i: number, reading: 'flowing' | 'paused' = 'flowing', from = fromAddress(i)): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: url.hostname, port: Number(url.port), localAddress: from }, () => resolve(socket));
    socket.once('error', reject);
    if (reading === 'flowing') socket.on('data', () => undefined);
    else socket.pause();
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
}

async function slowBodies(url: URL, count: number): Promise<number> {
  const opened = await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const socket = await open(url, i);
      socket.once('data', (chunk: Buffer) => tally(chunk.toString('latin1').split(' ')[1] ?? '?'));
      socket.write(
        `POST /robot/move/joints HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{`,
      );
      return socket;
    }),
  );
  const trickle = setInterval(() => {
    for (const socket of opened) if (!socket.destroyed) socket.write(' ');
  }, 1000);
  timers.add(trickle);
  return opened.filter((s) => !s.destroyed).length;
}

async function eventStreams(url: URL, count: number): Promise<number> {
  const started = await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const socket = await open(url, i);
      return new Promise<boolean>((resolve) => {
        socket.once('data', (chunk: Buffer) => resolve(chunk.toString('latin1').startsWith('HTTP/1.1 200')));
        socket.write(`GET /events HTTP/1.1\r\nHost: ${url.host}\r\nAccept: text/event-stream\r\n\r\n`);
      });
    }),
  );
  return started.filter(Boolean).length;
}

/** Streams read 50 times a second: each socket paused, its buffered bytes read every 20 ms. */
async function eventStreamsAt50Hz(url: URL, count: number): Promise<number> {
  const opened = await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const socket = await open(url, i, 'paused');
      socket.write(`GET /events HTTP/1.1\r\nHost: ${url.host}\r\nAccept: text/event-stream\r\n\r\n`);
      return socket;
    }),
  );
  let started = 0;
  const seen = new Set<Socket>();
  const reader = setInterval(() => {
    for (const socket of opened) {
      for (let chunk = socket.read(); chunk !== null; chunk = socket.read())
        if (!seen.has(socket)) {
          seen.add(socket);
          if ((chunk as Buffer).toString('latin1').startsWith('HTTP/1.1 200')) started++;
        }
    }
  }, 20);
  timers.add(reader);
  for (let waited = 0; seen.size < count && waited < 10_000; waited += 50) await sleep(50);
  return started;
}

/** Connections from one address that send nothing and never read. */
async function held(url: URL, count: number): Promise<number> {
  let opened = 0;
  for (let at = 0; at < count; at += 250)
    await Promise.all(
      Array.from({ length: Math.min(250, count - at) }, (_, k) =>
        open(url, at + k, 'paused', '127.0.0.200').then(
          () => opened++,
          () => undefined,
        ),
      ),
    );
  return opened;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function uploads(url: URL, count: number, csv: string): number {
  uploading = true;
  uploadsAbort = new AbortController();
  const { signal } = uploadsAbort;
  const once = async (): Promise<void> => {
    while (uploading && !signal.aborted) {
      const form = new FormData();
      form.append('file', new Blob([csv]), 'large.csv');
      const t0 = performance.now();
      await fetch(`${url.origin}/trajectory/send_csv`, { method: 'POST', body: form, signal })
        .then(async (r) => {
          await r.arrayBuffer();
          if (signal.aborted) return;
          tally(r.status);
          if (r.status !== 503) uploadMs.push(performance.now() - t0);
          // beyond the cap the server answers 503 before reading the body: wait as its Retry-After asks
          const retryS = r.status === 503 ? Number(r.headers.get('retry-after') ?? 1) : 0;
          if (retryS > 0) await new Promise((resolve) => setTimeout(resolve, retryS * 1000));
        })
        .catch(() => {
          if (!signal.aborted) tally('reset');
        });
    }
  };
  for (let i = 0; i < count; i++) void once();
  return count;
}

/**
 * `count` WebSocket clients, client i from `from(i)`, each sending `message` `perS` times a second (paced every 10 ms,
 * at most 50 ms of arrears caught up at once, so that no client passes its per-second cap), reading every answer.
 */
async function webSocketFlood(
  url: string,
  protocol: string,
  count: number,
  perS: number,
  message: string,
  from: (i: number) => string,
): Promise<number> {
  const opened = await Promise.all(
    Array.from(
      { length: count },
      (_, i) =>
        new Promise<WebSocket | undefined>((resolve) => {
          const ws = new WebSocket(url, [protocol], { perMessageDeflate: false, localAddress: from(i) });
          ws.on('open', () => {
            webSockets.add(ws);
            resolve(ws);
          });
          ws.on('message', () => tally('answers'));
          ws.on('close', (code) => {
            tally(`close ${code}`);
            webSockets.delete(ws);
          });
          ws.on('error', () => resolve(undefined));
        }),
    ),
  );
  const clients = opened.filter((ws): ws is WebSocket => ws !== undefined).map((ws) => ({ ws, sent: 0 }));
  const t0 = performance.now();
  const pacer = setInterval(() => {
    const due = Math.floor((perS * (performance.now() - t0)) / 1000);
    for (const client of clients) {
      if (client.ws.readyState !== WebSocket.OPEN) continue;
      if (due - client.sent > perS / 20) client.sent = due - Math.floor(perS / 20);
      for (; client.sent < due; client.sent++) {
        client.ws.send(message);
        tally('sent');
      }
    }
  }, 10);
  timers.add(pacer);
  return clients.length;
}

/** A JSON-RPC batch of `messages(i)` for i = 0, 1, ... while it fits in `bytes` (at most `most` of them). */
function batchOf(bytes: number, most: number, message: (i: number) => string): string {
  const parts: string[] = [];
  let size = 2;
  for (let i = 0; i < most; i++) {
    const m = message(i);
    if (size + m.length + 1 > bytes) break;
    parts.push(m);
    size += m.length + 1;
  }
  return `[${parts.join(',')}]`;
}

type McpKind = 'mcp-batches' | 'mcp-keys' | 'mcp-distinct';

/** The largest body the MCP endpoint reads, of the kind asked (see the top of this file). */
function maximalMcpBody(kind: McpKind): string {
  const bytes = MAX_MCP_BODY_BYTES - 64;
  const call = (id: number, args: unknown) =>
    JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'get_joint_states', arguments: args } });
  if (kind === 'mcp-batches') return batchOf(bytes, Number.POSITIVE_INFINITY, (i) => call(i, {}));
  if (kind === 'mcp-distinct') {
    const head = call(1, { pad: [] }).replace('"pad":[]', '"pad":');
    const pad = batchOf(bytes - head.length, Number.POSITIVE_INFINITY, (i) => `{"a${i}":0}`);
    return head.replace('"pad":', `"pad":${pad}`);
  }
  const keys: Record<string, number> = {};
  const each = Math.floor(bytes / 100) - 100;
  for (let k = 0; JSON.stringify(keys).length < each - 16; k++) keys[`k${k}`] = k;
  return batchOf(bytes, 100, (i) => call(i, keys));
}

/** `count` MCP clients, a session each, POSTing the maximal body of `kind` in a loop until the crowd closes. */
async function mcpBodies(url: URL, count: number, kind: McpKind): Promise<number> {
  const body = maximalMcpBody(kind);
  const json = { 'content-type': 'application/json', accept: 'application/json' };
  uploading = true;
  uploadsAbort = new AbortController();
  const { signal } = uploadsAbort;
  const sessions = await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const init = await fetch(`${url.origin}/mcp/mcp`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 0,
          method: 'initialize',
          params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: `crowd ${i}`, version: '1' } },
        }),
      });
      await init.arrayBuffer();
      const headers = {
        ...json,
        'mcp-session-id': init.headers.get('mcp-session-id') ?? '',
        'mcp-protocol-version': '2025-06-18',
      };
      const note = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' });
      await (await fetch(`${url.origin}/mcp/mcp`, { method: 'POST', headers, body: note })).arrayBuffer();
      return headers;
    }),
  );
  for (const headers of sessions)
    void (async () => {
      while (uploading && !signal.aborted)
        await fetch(`${url.origin}/mcp/mcp`, { method: 'POST', headers, body, signal })
          .then(async (r) => {
            await r.arrayBuffer();
            if (!signal.aborted) tally(r.status);
          })
          .catch(() => {
            if (!signal.aborted) tally('reset');
          });
    })();
  return sessions.length;
}

/** `count` REST clients POSTing the largest REST JSON body of distinct-keyed objects in a loop until the crowd closes. */
function restBodies(url: URL, count: number): number {
  const head = `{"joints":[0.2,0,0,-1.57,0,1.57,0],"pad":`;
  const pad = batchOf(MAX_JSON_BODY_BYTES - 64 - head.length, Number.POSITIVE_INFINITY, (i) => `{"a${i}":0}`);
  const body = `${head}${pad}}`;
  uploading = true;
  uploadsAbort = new AbortController();
  const { signal } = uploadsAbort;
  for (let i = 0; i < count; i++)
    void (async () => {
      while (uploading && !signal.aborted)
        await fetch(`${url.origin}/robot/move/joints`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
          signal,
        })
          .then(async (r) => {
            await r.arrayBuffer();
            if (!signal.aborted) tally(r.status);
          })
          .catch(() => {
            if (!signal.aborted) tally('reset');
          });
    })();
  return count;
}

function closeAll(): void {
  // Their close codes are not the next row's.
  for (const ws of webSockets) {
    ws.removeAllListeners('close');
    ws.terminate();
  }
  webSockets.clear();
  uploading = false;
  uploadsAbort.abort();
  for (const timer of timers) clearInterval(timer);
  timers.clear();
  for (const socket of sockets) socket.destroy();
}

process.on('message', (message: unknown) => {
  const command = message as Command;
  if (command.kind === 'close') {
    closeAll();
    process.send?.({ closed: true, statuses, uploadMs });
    statuses = {};
    uploadMs = [];
    return;
  }
  const url = new URL(command.url ?? '');
  const count = command.count ?? 0;
  const started =
    command.kind === 'slow'
      ? slowBodies(url, count)
      : command.kind === 'events'
        ? eventStreams(url, count)
        : command.kind === 'events-50hz'
          ? eventStreamsAt50Hz(url, count)
          : command.kind === 'held'
            ? held(url, count)
            : command.kind === 'jog-sockets'
              ? webSocketFlood(
                  `ws://${url.host}/robot/jog`,
                  'armgate.jog.v1',
                  count,
                  90,
                  JSON.stringify({ joints: [0.2, 0, 0, 0, 0, 0, 0], ttl_ms: 300 }),
                  (i) => `127.0.0.${2 + Math.floor(i / 20)}`,
                )
              : command.kind === 'foxglove-flood'
                ? webSocketFlood(
                    url.href,
                    'foxglove.websocket.v1',
                    count,
                    950,
                    JSON.stringify({ op: 'getParameters', parameterNames: [], id: 'flood' }),
                    (i) => `127.0.1.${1 + i}`,
                  )
                : command.kind === 'mcp-batches' || command.kind === 'mcp-keys' || command.kind === 'mcp-distinct'
                  ? mcpBodies(url, count, command.kind)
                  : command.kind === 'rest-distinct'
                    ? Promise.resolve(restBodies(url, count))
                    : Promise.resolve(uploads(url, count, command.csv ?? ''));
  started.then(
    (ready) => process.send?.({ ready }),
    (e: Error) => process.send?.({ error: e.message }),
  );
});
process.on('disconnect', () => {
  closeAll();
  process.exit(0);
});
process.send?.({ ready: 0 });
