import * as v from 'valibot';
import { foreignCharset } from '../body/charset.ts';
import { err, ok, type Result } from '../result.ts';
import { type ApiError, fromValibot, invalid } from '../core/errors.ts';
import { readBoundedText } from '../body/bounded.ts';
import { MAX_JSON_BODY_BYTES } from '../body/limits.ts';
import { parseJson } from '../body/parse-json.ts';

/**
 * Reads the request body as text, refusing more than `limitBytes` (413) without buffering it (see
 * {@link readBoundedText}: the declared Content-Length first, then the bytes as they stream in).
 */
export async function readBodyText(request: Request, limitBytes: number): Promise<Result<string, ApiError>> {
  const text = await readBoundedText(request, limitBytes);
  if (text === undefined)
    return err({ kind: 'payload_too_large', detail: `request body is larger than ${limitBytes} bytes` });
  return ok(text);
}

/**
 * A request body that did not arrive at the minimum rate (web.limits): its readers fail with this error, and the
 * request is answered 408 (lib/server/slow-bodies.ts cuts it).
 */
export class BodyTimeoutError extends Error {
  readonly code = 'ERR_BODY_TOO_SLOW';
}

/** The status logged for a request whose client went away before its answer (nginx's "client closed request"). */
export const CLIENT_CLOSED_STATUS = 499;

/**
 * True when `error` is the client going away: the connection closed while its body was read (Node's 'aborted',
 * ECONNRESET) or the request's signal ended. Not a server fault: it is logged at info level, never as a 500.
 */
export function isClientAbort(error: unknown, request: Request): boolean {
  if (error instanceof BodyTimeoutError) return false;
  if (request.signal?.aborted) return true;
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'ECONNRESET' || code === 'ABORT_ERR' || (error instanceof Error && error.message === 'aborted');
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
  const charset = foreignCharset(type);
  if (charset) return err({ kind: 'unsupported_media_type', detail: charset });
  return readBodyText(request, MAX_JSON_BODY_BYTES);
}

/**
 * A JSON body's document; an empty or malformed body is a 422 located at 'body'. A large body is parsed a slice per
 * turn of the event loop (lib/body/parse-json.ts: a stop sent meanwhile waits for one slice), refused as JSON.parse
 * refuses it.
 */
export async function parseJsonText(text: string): Promise<Result<unknown, ApiError>> {
  if (text.trim() === '') return err(invalid(['body'], 'Field required: a JSON body is needed', 'missing'));
  try {
    return ok(await parseJson(text));
  } catch (e) {
    return err(invalid(['body'], `JSON decode error: ${(e as Error).message}`, 'json_invalid'));
  }
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
  const doc = await parseJsonText(text.value);
  if (!doc.ok) return doc;
  const parsed = v.safeParse(schema, doc.value);
  return parsed.success ? ok(parsed.output) : err(fromValibot('body', parsed.issues, schema));
}
