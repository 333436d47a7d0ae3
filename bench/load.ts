/** One autocannon run with per-response latencies at full resolution. */
import autocannon from 'autocannon';
import { summary } from './stats.ts';

/** What a load run is asked to do. */
export interface LoadRequest {
  readonly url: string;
  readonly connections: number;
  /** Requests per second per connection (a client polling at that rate); absent: as fast as answers come. */
  readonly connectionRate?: number;
  readonly seconds: number;
}

/** What it measured. Latencies in ms with sub-millisecond resolution (see `runLoad`). */
export interface LoadResult {
  readonly requestsPerS: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly responses: number;
  /** Connection errors, timeouts and non-2xx answers: any of these invalidates the run. */
  readonly failures: number;
  /** CPU time of the process that ran autocannon, in % of the run's wall time (100 = one core). */
  readonly cpuPct: number;
}

/**
 * GET `url` over `connections` keep-alive connections for `seconds` (no pipelining). Requests/s is
 * autocannon's (mean of its per-second counts). Latencies come from autocannon's per-response
 * event: its own histogram records whole milliseconds, too coarse for a sub-millisecond target.
 */
export function runLoad(request: LoadRequest): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    let latencies = new Float64Array(1 << 18);
    let count = 0;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const instance = autocannon(
      {
        url: request.url,
        connections: request.connections,
        duration: request.seconds,
        ...(request.connectionRate ? { connectionRate: request.connectionRate } : {}),
      },
      (error, result) => {
        if (error) {
          reject(error);
          return;
        }
        const cpu = process.cpuUsage(cpu0);
        const wallUs = (performance.now() - t0) * 1000;
        const s = summary(latencies.subarray(0, count));
        resolve({
          requestsPerS: result.requests.average,
          p50Ms: s.p50,
          p99Ms: s.p99,
          responses: count,
          failures: result.errors + result.timeouts + result.non2xx,
          cpuPct: (100 * (cpu.user + cpu.system)) / wallUs,
        });
      },
    );
    instance.on('response', (_client, _status, _bytes, responseTimeMs) => {
      if (count === latencies.length) {
        const grown = new Float64Array(2 * latencies.length);
        grown.set(latencies);
        latencies = grown;
      }
      latencies[count++] = responseTimeMs;
    });
  });
}
