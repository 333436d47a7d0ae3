import * as v from 'valibot';
import { err, ok, type Result } from '../result.ts';
import { type ApiError, fromValibot, invalid } from './errors.ts';
import { MAX_JSON_BODY_BYTES } from './limits.ts';

/**
 * Reads the request body as text, refusing more than `limitBytes` (413) without buffering it:
 * the declared Content-Length is checked first, then the bytes as they stream in.
 */
export async function readBodyText(request: Request, limitBytes: number): Promise<Result<string, ApiError>> {
  const tooLarge: ApiError = { kind: 'payload_too_large', detail: `request body is larger than ${limitBytes} bytes` };
  const declared = Number(request.headers.get('content-length') ?? '0');
  if (declared > limitBytes) return err(tooLarge);
  if (!request.body) return ok('');
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limitBytes) {
      await reader.cancel();
      return err(tooLarge);
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return ok(new TextDecoder('utf-8', { fatal: false }).decode(bytes));
}

/** True for `application/json` and `application/<x>+json`, with any parameters (`; charset=utf-8`). */
export function isJsonMediaType(contentType: string | null): boolean {
  const essence = (contentType ?? '').split(';', 1)[0]?.trim().toLowerCase() ?? '';
  return essence === 'application/json' || /^application\/[\w.!#$&^-]+\+json$/.test(essence);
}

/** A request's Content-Type as an error message quotes it: printable characters, at most 80. */
export function describeContentType(type: string | null): string {
  return type === null || type === ''
    ? 'no Content-Type'
    : `Content-Type '${type.slice(0, 80).replace(/[^\x20-\x7e]/g, '?')}'`;
}

/**
 * The text of a JSON request body (at most 1 MiB). A body that is not declared as JSON gives 415
 * before it is read (a browser can send text/plain across origins without asking first); an
 * oversized body 413.
 */
export async function readJsonText(request: Request): Promise<Result<string, ApiError>> {
  const type = request.headers.get('content-type');
  if (!isJsonMediaType(type)) {
    const detail =
      `expected a JSON body sent with Content-Type: application/json (got ${describeContentType(type)}); ` +
      "with curl add -H 'Content-Type: application/json' or use --json";
    return err({ kind: 'unsupported_media_type', detail });
  }
  return readBodyText(request, MAX_JSON_BODY_BYTES);
}

/**
 * Parses a JSON request body (see {@link readJsonText}: 415, 413) against `schema`. Malformed
 * JSON, a missing body and schema violations give 422 with the field path.
 */
export async function parseJsonBody<S extends v.GenericSchema>(
  request: Request,
  schema: S,
): Promise<Result<v.InferOutput<S>, ApiError>> {
  const text = await readJsonText(request);
  if (!text.ok) return text;
  if (text.value.trim() === '') return err(invalid(['body'], 'Field required: a JSON body is needed', 'missing'));
  let doc: unknown;
  try {
    doc = JSON.parse(text.value);
  } catch (e) {
    return err(invalid(['body'], `JSON decode error: ${(e as Error).message}`, 'json_invalid'));
  }
  const parsed = v.safeParse(schema, doc);
  return parsed.success ? ok(parsed.output) : err(fromValibot('body', parsed.issues));
}

/**
 * Parses the query string against `schema`. Each parameter may appear once; values arrive as
 * strings, so numeric schemas should convert them (see `queryInt`).
 */
export function parseQuery<S extends v.GenericSchema>(request: Request, schema: S): Result<v.InferOutput<S>, ApiError> {
  const params = new URL(request.url).searchParams;
  const query: Record<string, string> = {};
  for (const [key, value] of params) {
    if (key in query) return err(invalid(['query', key], `parameter '${key}' given more than once`));
    query[key] = value;
  }
  const parsed = v.safeParse(schema, query);
  return parsed.success ? ok(parsed.output) : err(fromValibot('query', parsed.issues));
}
