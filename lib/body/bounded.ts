/**
 * A request body as text, bounded: what both faces read (the REST face's JSON bodies, the MCP endpoint's POSTs).
 */

/**
 * The body as text, or undefined when it is larger than `limitBytes`, never buffering more than that. A declared
 * Content-Length is checked first and the body then read at once (Node's parser delivers no more than it declares); a
 * chunked body is read piece by piece and dropped as soon as it passes the limit. UTF-8, a byte order mark dropped,
 * bad bytes replaced.
 *
 * Read at once rather than through the stream's reader where it can be: the reader (an async iterator over Node's
 * request) left ~2.5 KB per request to V8's old generation, which only a full collection frees (issue 23, memory
 * under work).
 */
export async function readBoundedText(request: Request, limitBytes: number): Promise<string | undefined> {
  const declared = request.headers.get('content-length');
  if (declared !== null) return Number(declared) > limitBytes ? undefined : utf8(await request.arrayBuffer());
  if (!request.body) return '';
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limitBytes) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return utf8(bytes);
}

/** One decoder for every body: decoding a whole buffer at once (not streaming) keeps no state between calls. */
const decoder = new TextDecoder('utf-8', { fatal: false });
const utf8 = (bytes: ArrayBuffer | Uint8Array) => decoder.decode(bytes);
