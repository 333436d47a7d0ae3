/**
 * The client side of the events bench (forked by events.ts), so that the server's CPU is the
 * server's own. On `{ url, token?, clients, seconds, rateHz, mode }`:
 * - `sse`: opens `clients` streams of GET /events?rate_hz=..., counts joint_state events per
 *   client over `seconds` (after a 1 s settle), and samples the latency from each event's stamp
 *   (the simulator's step, epoch time) to its receipt here;
 * - `poll`: `clients` loops of GET /robot/joint_states at `rateHz` each, counting answers;
 * - `stop`: sends POST /stop `samples` times (200 ms apart) and times each (events.ts times /stop
 *   from stop.ts's client instead, a process with nothing else to do).
 * Answers `{ counts, latenciesMs, seconds }` (or `{ stopMs }`, or `{ error }`); ends when the parent disconnects.
 */
import http from 'node:http';

interface Job {
  readonly url: string;
  readonly token?: string;
  readonly clients: number;
  readonly seconds: number;
  readonly rateHz: number;
  readonly mode: 'sse' | 'poll' | 'stop';
  readonly samples?: number;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
/** Epoch milliseconds with sub-millisecond resolution. */
const epochMs = () => performance.timeOrigin + performance.now();

/**
 * One lean SSE reader over node:http: frames are found by their blank line and a joint state's
 * stamp read with indexOf, without parsing its JSON, so this process keeps up with 100 streams.
 */
function leanStream(job: Job, onStamp: (stampS: number) => void): Promise<() => void> {
  return new Promise((resolve, reject) => {
    const request = http.get(
      `${job.url}/events?rate_hz=${job.rateHz}`,
      { headers: job.token ? { authorization: `Bearer ${job.token}` } : {}, agent: false },
      (response) => {
        if (response.statusCode !== 200) {
          reject(new Error(`GET /events answered ${response.statusCode}`));
          response.resume();
          return;
        }
        response.setEncoding('utf8');
        let buffer = '';
        response.on('data', (chunk: string) => {
          buffer += chunk;
          let end = buffer.indexOf('\n\n');
          while (end >= 0) {
            const at = buffer.indexOf('event: joint_state\ndata: {"stamp":');
            if (at >= 0 && at < end) {
              const from = at + 34;
              onStamp(Number(buffer.slice(from, buffer.indexOf(',', from))));
            }
            buffer = buffer.slice(end + 2);
            end = buffer.indexOf('\n\n');
          }
        });
        response.on('error', () => undefined);
        resolve(() => request.destroy());
      },
    );
    request.on('error', reject);
  });
}

const closers: (() => void)[] = [];

async function sse(job: Job): Promise<{ counts: number[]; latenciesMs: number[]; seconds: number }> {
  const counts = new Array<number>(job.clients).fill(0);
  const latenciesMs: number[] = [];
  let measuring = false;
  for (let c = 0; c < job.clients; c++) {
    closers.push(
      await leanStream(job, (stampS) => {
        if (!measuring) return;
        counts[c] = (counts[c] ?? 0) + 1;
        // Every client's latency, capped at 200,000 samples.
        if (latenciesMs.length < 200_000) latenciesMs.push(epochMs() - stampS * 1000);
      }),
    );
  }
  await sleep(1000);
  measuring = true;
  const t0 = performance.now();
  await sleep(job.seconds * 1000);
  measuring = false;
  return { counts, latenciesMs, seconds: (performance.now() - t0) / 1000 };
}

async function poll(job: Job): Promise<{ counts: number[]; latenciesMs: number[]; seconds: number }> {
  const counts = new Array<number>(job.clients).fill(0);
  const headers: Record<string, string> = job.token ? { authorization: `Bearer ${job.token}` } : {};
  const periodMs = 1000 / job.rateHz;
  const t0 = performance.now();
  const until = t0 + job.seconds * 1000;
  await Promise.all(
    counts.map(async (_, c) => {
      let next = performance.now() + Math.random() * periodMs;
      while (performance.now() < until) {
        const wait = next - performance.now();
        if (wait > 0) await sleep(wait);
        next += periodMs;
        const res = await fetch(`${job.url}/robot/joint_states`, { headers });
        await res.arrayBuffer();
        if (res.status === 200) counts[c] = (counts[c] ?? 0) + 1;
      }
    }),
  );
  return { counts, latenciesMs: [], seconds: (performance.now() - t0) / 1000 };
}

async function stops(job: Job): Promise<{ stopMs: number[] }> {
  const headers: Record<string, string> = job.token ? { authorization: `Bearer ${job.token}` } : {};
  const stopMs: number[] = [];
  for (let k = 0; k < (job.samples ?? 20); k++) {
    const t0 = performance.now();
    const res = await fetch(`${job.url}/stop`, { method: 'POST', headers });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`/stop answered ${res.status}`);
    stopMs.push(performance.now() - t0);
    await sleep(200);
  }
  return { stopMs };
}

process.on('message', (message: unknown) => {
  const job = message as Job | { close: true };
  if ('close' in job) {
    for (const close of closers.splice(0)) close();
    process.send?.({ closed: true });
    return;
  }
  const run = job.mode === 'sse' ? sse(job) : job.mode === 'poll' ? poll(job) : stops(job);
  run.then(
    (result) => process.send?.(result),
    (e: unknown) => process.send?.({ error: e instanceof Error ? e.message : String(e) }),
  );
});
process.on('disconnect', () => {
  for (const close of closers.splice(0)) close();
  process.exit(0);
});
process.send?.({ ready: true });
