/** A Server-Sent Events client for tests and benchmarks: fetch with headers, frames parsed as they come. */
import { send, type Target } from './live.ts';

/** One event as received. */
export interface SseEvent {
  readonly id: number | undefined;
  readonly type: string;
  readonly data: unknown;
  /** performance.now() at receipt. */
  readonly atMs: number;
}

/** An open stream: the events so far, waiting for one, closing. */
export interface SseStream {
  readonly status: number;
  readonly events: SseEvent[];
  /** Comment lines received (`: heartbeat`), without the colon. */
  readonly comments: string[];
  /** Resolves when the server ends the stream (or it is closed). */
  readonly ended: Promise<void>;
  /** Resolves with the first event (from `from` on) that matches, or rejects after `timeoutMs`. */
  next(match: (event: SseEvent) => boolean, timeoutMs?: number, from?: number): Promise<SseEvent>;
  close(): void;
}

/**
 * Opens GET `path` on `url` (a live server's base URL, or an app in memory) as an SSE stream (a non-200 answer
 * resolves with no events and the status).
 */
export async function openSse(
  url: Target,
  path: string,
  options: { token?: string; onEvent?: (event: SseEvent) => void } = {},
): Promise<SseStream> {
  const abort = new AbortController();
  const headers: Record<string, string> = { accept: 'text/event-stream' };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const response = await send(url, path, { headers, signal: abort.signal });
  const reader = response.status === 200 ? response.body?.getReader() : undefined;
  const events: SseEvent[] = [];
  const comments: string[] = [];
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const waiter of waiters) waiter();
  };
  let done = false;
  const ended = (async () => {
    if (!reader) {
      await response.body?.cancel();
      return;
    }
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for (;;) {
        const { done: over, value: chunk } = await reader.read();
        if (over) break;
        buffer += decoder.decode(chunk, { stream: true });
        let end = buffer.indexOf('\n\n');
        while (end >= 0) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          let id: number | undefined;
          let type = 'message';
          let data = '';
          for (const line of frame.split('\n')) {
            if (line.startsWith(':')) comments.push(line.slice(1).trim());
            else if (line.startsWith('id: ')) id = Number(line.slice(4));
            else if (line.startsWith('event: ')) type = line.slice(7);
            else if (line.startsWith('data: ')) data += line.slice(6);
          }
          if (data) {
            const event = { id, type, data: JSON.parse(data) as unknown, atMs: performance.now() };
            events.push(event);
            options.onEvent?.(event);
          }
          end = buffer.indexOf('\n\n');
        }
        wake();
      }
    } catch {
      // aborted by close()
    } finally {
      done = true;
      wake();
    }
  })();
  return {
    status: response.status,
    events,
    comments,
    ended,
    next(match, timeoutMs = 10_000, from = 0) {
      return new Promise((resolve, reject) => {
        const check = () => {
          for (let i = from; i < events.length; i++) {
            const event = events[i];
            if (event && match(event)) {
              cleanup();
              resolve(event);
              return;
            }
          }
          if (done) {
            cleanup();
            reject(new Error('the stream ended before a matching event'));
          }
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`no matching event within ${timeoutMs} ms (${events.length} events received)`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    close() {
      abort.abort();
      // In memory the abort reaches the app (it unsubscribes); the reader ends here either way.
      reader?.cancel().catch(() => undefined);
    },
  };
}
