/**
 * The REST face of an operation: a codec over the call pipeline (lib/core/invoke.ts). A request becomes the
 * operation's input fields (query, path, JSON body or multipart form, strings converted to the schema's numbers and
 * booleans), read only once the pipeline found the caller's role allows the call; the pipeline's result becomes a
 * Response. Nothing about a request is kept beside it.
 */
import { Response as FetchResponse } from '@whatwg-node/fetch';
import type * as v from 'valibot';
import { type ApiError, invalid } from '../core/errors.ts';
import { type Decoded, Deferred, invoke, jsonOf } from '../core/invoke.ts';
import type { AnyOperation, AppState, RestBinding } from '../core/operation.ts';
import type { Principal } from '../core/roles.ts';
import { isOptional, NUMERIC, objectEntries, scalarType } from '../core/schema-shape.ts';
import { err, ok, type Result } from '../result.ts';
import { goneSignal, HTTP_CLIENT_GONE } from '../control/dead-man.ts';
import { parseJson } from '../body/parse-json.ts';
import { parseJsonText, readJsonText } from './body.ts';
import { errorResponse } from './errors.ts';
import { parseMultipart } from './multipart.ts';

/** What the app hands the REST face with each request: who calls and when it arrived, besides the services and robot. */
export interface RestCall extends AppState {
  /** The principal authentication found; absent: the request did not pass authentication and is refused (401). */
  readonly caller: Principal | undefined;
  /** The arbiter's stop count when the request arrived (stamped by the server before anything is awaited). */
  readonly arrivedAtStop?: number | undefined;
}

/** A string from the query or a form as the schema's scalar type wants it; left as is when it does not parse. */
function fromText(text: string, type: string | undefined): unknown {
  if (type === 'number') {
    const t = text.trim();
    return NUMERIC.test(t) ? Number(t) : text;
  }
  if (type === 'boolean') {
    const t = text.trim().toLowerCase();
    if (t === 'true' || t === '1') return true;
    if (t === 'false' || t === '0') return false;
  }
  return text;
}

/** The input fields of a request without a query string (none: shared by every such request). */
const NO_QUERY: Result<Readonly<Record<string, unknown>>, ApiError> = ok(Object.freeze({}));

/**
 * The query string as input fields: only the binding's parameters, each once (`allowed` empty: a route without any,
 * such as a WebSocket's upgrade, lib/http/websocket.ts).
 */
export function queryFields(
  url: string,
  allowed: readonly string[],
  types: Readonly<Record<string, string | undefined>>,
): Result<Readonly<Record<string, unknown>>, ApiError> {
  const start = url.indexOf('?');
  if (start < 0) return NO_QUERY;
  const fields: Record<string, unknown> = {};
  const seen = new Set<string>();
  for (const [key, value] of new URLSearchParams(url.slice(start + 1))) {
    if (!allowed.includes(key))
      return err(
        invalid(
          ['query', key],
          `unknown query parameter '${key.slice(0, 64)}'${allowed.length ? `; known: ${allowed.join(', ')}` : ''}`,
          'extra_forbidden',
        ),
      );
    if (seen.has(key)) return err(invalid(['query', key], `parameter '${key}' given more than once`));
    seen.add(key);
    fields[key] = fromText(value, types[key]);
  }
  return ok(fields);
}

/** The multipart form as input fields: text fields converted by type, JSON files parsed, uploads as bytes. */
async function formFields(
  rest: RestBinding,
  request: Request,
  entries: Readonly<Record<string, v.GenericSchema>>,
  types: Readonly<Record<string, string | undefined>>,
): Promise<Result<{ fields: Record<string, unknown>; filenames: Record<string, string> }, ApiError>> {
  const files = rest.files ?? {};
  const fileParts = Object.keys(files);
  const queryKeys = rest.query ?? [];
  const fieldParts = Object.keys(entries).filter((name) => !fileParts.includes(name) && !queryKeys.includes(name));
  const maxFileBytes = Math.max(...fileParts.map((name) => files[name]?.maxBytes ?? 10 * 1024 * 1024));
  const form = await parseMultipart(request, { fileParts, fieldParts, maxFileBytes });
  if (!form.ok) return form;
  const fields: Record<string, unknown> = {};
  const filenames: Record<string, string> = {};
  for (const [name, file] of Object.entries(form.value.files)) filenames[name] = file.filename;
  for (const name of fileParts) {
    const entry = entries[name];
    if (!(name in form.value.files) && entry && !isOptional(entry))
      return err(
        invalid(
          ['body', name],
          `Field required: upload ${files[name]?.description ?? 'the file'} as the multipart part '${name}'`,
          'missing',
        ),
      );
  }
  for (const [name, value] of Object.entries(form.value.fields)) fields[name] = fromText(value, types[name]);
  for (const [name, file] of Object.entries(form.value.files)) {
    const part = files[name];
    if (part?.maxBytes !== undefined && file.data.byteLength > part.maxBytes)
      return err({ kind: 'payload_too_large', detail: `the ${name} file is larger than ${part.maxBytes} bytes` });
    if (part?.as === 'json') {
      let doc: unknown;
      try {
        // A large file is parsed a slice per turn of the event loop, refused as JSON.parse refuses it.
        doc = await parseJson(new TextDecoder('utf-8', { fatal: true }).decode(file.data));
      } catch (e) {
        return err(
          invalid(['body', name], `the ${name} file is not valid JSON: ${(e as Error).message}`, 'json_invalid'),
        );
      }
      fields[name] = doc;
    } else {
      // The bytes sit in an ArrayBuffer of their own (lib/http/upload-buffer.ts): a worker thread can take it over.
      fields[name] = { filename: file.filename, bytes: file.data };
    }
  }
  return ok({ fields, filenames });
}

/** The path parameters the router matched (`request.params`), as input fields. */
function pathFields(rest: RestBinding, request: Request): Record<string, string> {
  const names = rest.params ?? [];
  if (names.length === 0) return {};
  const matched = (request as Request & { params?: Record<string, string> }).params ?? {};
  const fields: Record<string, string> = {};
  for (const name of names) {
    const value = matched[name];
    if (value === undefined) continue;
    try {
      fields[name] = decodeURIComponent(value);
    } catch {
      fields[name] = value; // a malformed %-escape stays as sent (the schema refuses it)
    }
  }
  return fields;
}

const shapes = new WeakMap<
  v.GenericSchema,
  { entries: Readonly<Record<string, v.GenericSchema>>; types: Record<string, string | undefined> }
>();

/** An input schema's fields and the scalar type of each (what query and form text converts to), worked out once per schema. */
function shapeOf(schema: v.GenericSchema) {
  let shape = shapes.get(schema);
  if (!shape) {
    const entries = objectEntries(schema);
    const types: Record<string, string | undefined> = {};
    for (const [name, entry] of Object.entries(entries)) types[name] = scalarType(entry);
    shape = { entries, types };
    shapes.set(schema, shape);
  }
  return shape;
}

/**
 * The operation's input fields from a REST request (not yet validated: the pipeline does it with `schema`, the input
 * schema under the active limits, which also says the fields' types).
 */
async function restInput(
  op: AnyOperation,
  rest: RestBinding,
  request: Request,
  schema: v.GenericSchema | undefined,
): Promise<Result<Decoded, ApiError>> {
  if (op.rawJson) {
    const text = await readJsonText(request);
    return text.ok ? ok({ fields: { text: text.value } }) : text;
  }
  if (!schema || !rest.body) return bodylessInput(op, rest, request, schema);
  const { entries, types } = shapeOf(schema);
  // The query first: a wrong parameter is refused before the body is read.
  const query = queryFields(request.url, rest.query ?? [], types);
  if (!query.ok) return query;
  if (rest.body === 'json') {
    const text = await readJsonText(request);
    if (!text.ok) return text;
    const doc = await parseJsonText(text.value);
    if (!doc.ok) return doc;
    if (typeof doc.value !== 'object' || doc.value === null || Array.isArray(doc.value))
      return err(invalid(['body'], 'the body must be a JSON object', 'object_type'));
    // Numbers sent as strings ("0.5") are converted by the pipeline, on every face (lib/core/invoke.ts).
    const fields = doc.value as Record<string, unknown>;
    const twice = givenTwice(rest, fields);
    if (twice) return twice;
    return ok({ fields: { ...fields, ...query.value, ...pathFields(rest, request) } });
  }
  const form = await formFields(rest, request, entries, types);
  if (!form.ok) return form;
  const twice = givenTwice(rest, form.value.fields);
  if (twice) return twice;
  const fields = { ...form.value.fields, ...query.value, ...pathFields(rest, request) };
  return ok({ fields, filenames: form.value.filenames });
}

/** A field of the path is the path's: the body may not say it again (differently, or at all): the 422, if it does. */
function givenTwice(rest: RestBinding, fields: Record<string, unknown>): Result<never, ApiError> | undefined {
  const twice = (rest.params ?? []).find((name) => Object.hasOwn(fields, name));
  return twice === undefined
    ? undefined
    : err(invalid(['body', twice], `'${twice}' is given in the path; leave it out of the body`, 'extra_forbidden'));
}

/** The input of an operation whose binding reads no body (query and path only): known without waiting for anything. */
function bodylessInput(
  op: AnyOperation,
  rest: RestBinding,
  request: Request,
  schema: v.GenericSchema | undefined,
): Result<Decoded, ApiError> {
  if (!schema) {
    // No input: a query parameter is unknown (422), as for any operation; a stop stops whatever it was sent with.
    if (op.effect === 'stop') return NO_FIELDS;
    const query = queryFields(request.url, [], {});
    return query.ok ? NO_FIELDS : query;
  }
  const query = queryFields(request.url, rest.query ?? [], shapeOf(schema).types);
  return query.ok ? ok({ fields: { ...query.value, ...pathFields(rest, request) } }) : query;
}

const NO_FIELDS: Result<Decoded, ApiError> = ok({ fields: {} });

/** A 200 JSON response from already-serialized text (the fetch ponyfill's Response, as lib/http/errors.ts's json). */
function jsonText(body: string): Response {
  return new FetchResponse(body, { status: 200, headers: { 'content-type': 'application/json' } });
}

/** A handler of the REST face: a fetch-API handler given the call's facts with each request (as itty-router's args). */
export type RestHandler = (request: Request, call: RestCall) => Promise<Response>;

/**
 * The REST face of an operation: a standalone fetch-API handler. The request's input (JSON body, query or multipart
 * form) is read once the pipeline allows the call; the pipeline validates it (422 with the field path), runs it and
 * answers its output, 200 as JSON, or the error with its status. Each distinct output object is serialized once
 * (lib/core/invoke.ts's jsonOf: a state read many times between updates costs one JSON.stringify).
 */
export function restHandler(op: AnyOperation): RestHandler {
  const rest = op.rest;
  if (!rest) throw new Error(`operation ${op.name} has no REST binding`);
  const calledAs = `${rest.method} ${rest.path}`;
  const queryKeys = rest.query ?? [];
  const pathKeys = rest.params ?? [];
  /** Where a field of the input was, for a 422: the query, the path or the body. */
  const locate = (field: string | undefined) =>
    field !== undefined && queryKeys.includes(field)
      ? 'query'
      : field !== undefined && pathKeys.includes(field)
        ? 'path'
        : 'body';
  // A binding without a body has its input at once (no promise on a read's way).
  const bodyless = !op.rawJson && !rest.body;
  const encode = (result: Result<unknown, ApiError>): Response => {
    if (!result.ok) return errorResponse(result.error);
    const value = result.value;
    return jsonText(typeof value === 'object' && value !== null ? jsonOf(value) : JSON.stringify(value));
  };
  return (request, call) =>
    invoke(op, new RequestInput(op, rest, request, bodyless), {
      services: call.services,
      ros: call.ros,
      caller: call.caller,
      face: 'rest',
      calledAs,
      arrivedAtStop: call.arrivedAtStop,
      // Aborted when the client disconnects: made only when an operation looks (a motion's dead-man, a solve).
      signal: () => goneSignal(request.signal, HTTP_CLIENT_GONE),
      locate,
    }).then(encode);
}

/** The input of a request, read once the pipeline allows the call: the query and path, and the body if it has one. */
class RequestInput extends Deferred {
  readonly #op: AnyOperation;
  readonly #rest: RestBinding;
  readonly #request: Request;
  /** The binding reads no body (query and path only): the input is known at once (no promise on a read's way). */
  readonly #bodyless: boolean;

  constructor(op: AnyOperation, rest: RestBinding, request: Request, bodyless: boolean) {
    super();
    this.#op = op;
    this.#rest = rest;
    this.#request = request;
    this.#bodyless = bodyless;
  }

  read(schema: v.GenericSchema | undefined) {
    return this.#bodyless
      ? bodylessInput(this.#op, this.#rest, this.#request, schema)
      : restInput(this.#op, this.#rest, this.#request, schema);
  }
}
