import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import autocannon from 'autocannon';
import { startTestServer } from '../tests/support/server.ts';

export interface LoadResult {
  readonly requestsPerS: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

function load(url: string, seconds: number): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    autocannon({ url, connections: 32, duration: seconds }, (error, result) => {
      if (error) reject(error);
      else resolve({ requestsPerS: result.requests.average, p50Ms: result.latency.p50, p99Ms: result.latency.p99 });
    });
  });
}

const median = (values: readonly number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;

/**
 * GET /robot/joint_states under 32 connections (autocannon, in this process) beside a bare
 * node:http server answering the same bytes: the runtime's ceiling. Alternating rounds; medians.
 * armgate's request log is captured in memory here (not printed).
 */
export async function jointStatesLoad(rounds = 3, seconds = 4): Promise<{ armgate: LoadResult; bare: LoadResult }> {
  const server = await startTestServer();
  const sample = await fetch(`${server.url}/robot/joint_states`);
  const bytes = Buffer.from(await sample.arrayBuffer());
  const bare = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': bytes.length });
    res.end(bytes);
  });
  await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
  const bareUrl = `http://127.0.0.1:${(bare.address() as AddressInfo).port}/robot/joint_states`;
  try {
    await load(`${server.url}/robot/joint_states`, 1);
    await load(bareUrl, 1);
    const a: LoadResult[] = [];
    const b: LoadResult[] = [];
    for (let r = 0; r < rounds; r++) {
      a.push(await load(`${server.url}/robot/joint_states`, seconds));
      b.push(await load(bareUrl, seconds));
      server.logs.length = 0;
    }
    const pick = (xs: LoadResult[]): LoadResult => ({ requestsPerS: median(xs.map((x) => x.requestsPerS)), p50Ms: median(xs.map((x) => x.p50Ms)), p99Ms: median(xs.map((x) => x.p99Ms)) });
    return { armgate: pick(a), bare: pick(b) };
  } finally {
    bare.closeAllConnections();
    await new Promise<void>((resolve) => bare.close(() => resolve()));
    await server.close();
  }
}
