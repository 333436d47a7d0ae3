/**
 * /stop during Foxglove connection churn (issue 37, round 2): a live server with Foxglove; a child process runs
 * CLIENTS looping clients from 127.0.0.1 that open a Foxglove connection (a right token), send a few messages, close
 * and open again at once (ignoring Retry-After), for SECONDS; meanwhile POST /stop from 127.0.0.2, one after another
 * on a new connection each, 20 ms apart. Prints the stops' p50/p90/max and what the churn got.
 *
 *   node --import tsx scripts/foxglove-churn.ts [seconds=5] [clients=3]
 */
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { startTestServer } from '../tests/support/server.ts';

const SECONDS = Number(process.argv[2] ?? 5);
const CLIENTS = Number(process.argv[3] ?? 3);
const TOKEN = 'churn-admin-token-5d1f0a9c';

const CHURN = `
const { WebSocket } = require('ws');
const [url, clients, ms] = [process.argv[1], Number(process.argv[2]), Number(process.argv[3])];
const end = Date.now() + ms;
const counts = { opened: 0, refused: 0, failed: 0 };
const loop = () => new Promise((done) => {
  const next = () => (Date.now() < end ? setImmediate(go) : done());
  const go = () => {
    const ws = new WebSocket(url, ['foxglove.websocket.v1'], { localAddress: '127.0.0.1' });
    ws.on('open', () => {
      counts.opened++;
      for (let i = 0; i < 5; i++) ws.send('{"op":"subscribe","subscriptions":[{"id":' + i + ',"channelId":1}]}');
      ws.close();
    });
    let refused = false;
    ws.on('unexpected-response', (_q, res) => { refused = true; counts.refused++; res.resume(); ws.terminate(); });
    ws.on('error', () => { if (!refused) counts.failed++; });
    ws.on('close', next);
  };
  go();
});
Promise.all(Array.from({ length: clients }, loop)).then(() => { console.log(JSON.stringify(counts)); });
`;

function stop(base: URL): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = request(
      {
        host: base.hostname,
        port: base.port,
        path: '/stop',
        method: 'POST',
        localAddress: '127.0.0.2',
        agent: false,
        headers: { authorization: `Bearer ${TOKEN}` },
      },
      (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve(performance.now() - started) : reject(res.statusCode)));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;

const server = await startTestServer({
  web: { token: TOKEN },
  foxglove: { enabled: true, port: 0, address: '127.0.0.1' },
});
try {
  const child = spawn(
    process.execPath,
    ['-e', CHURN, `${server.foxglove?.url}/?token=${TOKEN}`, String(CLIENTS), String(SECONDS * 1000)],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
      cwd: process.cwd(),
    },
  );
  let out = '';
  child.stdout.on('data', (d) => {
    out += d;
  });
  const exited = new Promise((r) => child.on('exit', r));
  await new Promise((r) => setTimeout(r, 300));
  const base = new URL(server.url);
  const times: number[] = [];
  const until = performance.now() + (SECONDS - 0.5) * 1000;
  while (performance.now() < until) {
    times.push(await stop(base));
    await new Promise((r) => setTimeout(r, 20));
  }
  await exited;
  times.sort((a, b) => a - b);
  const f = (x: number) => x.toFixed(1);
  console.log(
    JSON.stringify({
      clients: CLIENTS,
      seconds: SECONDS,
      churn: JSON.parse(out.trim() || '{}'),
      stops: times.length,
      p50_ms: f(quantile(times, 0.5)),
      p90_ms: f(quantile(times, 0.9)),
      max_ms: f(times[times.length - 1] ?? NaN),
    }),
  );
} finally {
  await server.close();
}
