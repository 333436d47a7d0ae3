/**
 * The HTTP side of the MCP endpoint's messages: reading a bounded body, what a client accepts, relaying or collecting
 * an SSE answer, and a JSON answer serialized once per result.
 */
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** An SSE comment sent first on every stream, so the status and headers leave at once. */
const STREAM_OPEN = new TextEncoder().encode(': armgate\n\n');

/** True for a plain object (not null, not an array). */
export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The JSON of results already answered (a tool result object is reused while the output it shows is the same). */
const resultJson = new WeakMap<object, string>();

/** The JSON text of an answer, its result serialized once however many requests it answers. */
export function answerJson(message: JSONRPCMessage): string {
  if (!('result' in message) || typeof message.result !== 'object' || message.result === null)
    return JSON.stringify(message);
  let result = resultJson.get(message.result);
  if (result === undefined) {
    result = JSON.stringify(message.result);
    resultJson.set(message.result, result);
  }
  return `{"jsonrpc":"2.0","id":${JSON.stringify(message.id)},"result":${result}}`;
}

/** True for `application/json` with any parameters, as the SDK transport requires of a POST. */
export function isJsonType(contentType: string | null): boolean {
  if (contentType === null) return false;
  const semi = contentType.indexOf(';');
  return (semi < 0 ? contentType : contentType.slice(0, semi)).trim().toLowerCase() === 'application/json';
}

/**
 * What the client takes in answer to a POST: either form ('both', the SDK client's Accept), only a
 * stream, only JSON (also for no Accept or a wildcard), or nothing this endpoint sends.
 */
export type Accepts = 'both' | 'stream' | 'json' | 'none';

export function accepts(accept: string | null): Accepts {
  if (accept === null || accept.trim() === '') return 'json';
  const types = accept.toLowerCase();
  const json = types.includes('application/json') || types.includes('*/*') || types.includes('application/*');
  if (types.includes('text/event-stream')) return json ? 'both' : 'stream';
  return json ? 'json' : 'none';
}

/**
 * Passes an SDK SSE body through after an opening comment (so headers leave at once); `onEnd`
 * runs once when it ends either way. `stop()` ends it early (after a cancellation).
 */
export function relayStream(
  body: ReadableStream<Uint8Array>,
  onEnd: () => void,
): { stream: ReadableStream<Uint8Array>; stop: () => void } {
  const reader = body.getReader();
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    onEnd();
  };
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(STREAM_OPEN);
    },
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          end();
          controller.close();
        } else controller.enqueue(value);
      } catch (e) {
        end();
        controller.error(e);
      }
    },
    cancel(reason) {
      end();
      return reader.cancel(reason);
    },
  });
  return { stream, stop: () => void reader.cancel().catch(() => undefined) };
}

/** The JSON-RPC responses in an SDK SSE body (notifications are dropped: a JSON-only client cannot take them). */
export async function collectResponses(body: ReadableStream<Uint8Array>, stopped: Promise<void>): Promise<unknown[]> {
  const reader = body.getReader();
  void stopped.then(() => reader.cancel().catch(() => undefined));
  const decoder = new TextDecoder();
  let text = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  const responses: unknown[] = [];
  for (const event of text.split('\n\n')) {
    const data = event
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(line.startsWith('data: ') ? 6 : 5))
      .join('\n');
    if (!data) continue;
    const message = JSON.parse(data) as unknown;
    if (isRecord(message) && 'id' in message && ('result' in message || 'error' in message)) responses.push(message);
  }
  return responses;
}
