/**
 * The HTTP side of the MCP endpoint's messages: what a client accepts, relaying an SSE answer, a batch's JSON answer.
 */
import { Response as PonyfillResponse } from '@whatwg-node/fetch';

/** An SSE comment sent first on every stream, so the status and headers leave at once. */
const STREAM_OPEN = new TextEncoder().encode(': armgate\n\n');

/** True for a plain object (not null, not an array). */
export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** True for `application/json` with any parameters, as the SDK transport requires of a POST. */
export function isJsonType(contentType: string | null): boolean {
  if (contentType === null) return false;
  const semi = contentType.indexOf(';');
  return (semi < 0 ? contentType : contentType.slice(0, semi)).trim().toLowerCase() === 'application/json';
}

/**
 * The SDK transport's JSON answer to a batch as an array: it answers a batch holding one request with that request's
 * answer alone, and JSON-RPC answers a batch with an array whatever its length.
 */
export async function batchAnswer(response: Response): Promise<Response> {
  if (response.status !== 200 || !isJsonType(response.headers.get('content-type'))) return response;
  const text = await response.text();
  return new PonyfillResponse(text.startsWith('{') ? `[${text}]` : text, { status: 200, headers: response.headers });
}

/**
 * What the client takes in answer to a POST: either form ('both', the SDK client's Accept), only a
 * stream, only JSON (also for no Accept or a wildcard), or nothing this endpoint sends.
 */
export type Accepts = 'both' | 'stream' | 'json' | 'none';

/** The Accept header of the SDK's client. */
const ACCEPT_SDK = 'application/json, text/event-stream';

export function accepts(accept: string | null): Accepts {
  // What the SDK's client and most others send, as they send it: known without scanning.
  if (accept === ACCEPT_SDK) return 'both';
  if (accept === null || accept === 'application/json' || accept.trim() === '') return 'json';
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
