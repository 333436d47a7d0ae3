/**
 * The REST face of an operation: a fetch-API handler derived from the operation's data. It builds the call's whole
 * context itself from what the app hands it with the request (the caller authentication found, the arrival stamp, the
 * services and the ROS context): nothing about a request is kept beside it.
 */
import * as v from 'valibot';
import { recordCall } from '../core/audit.ts';
import { type ApiError, invalid, locatedIssues } from '../core/errors.ts';
import {
  type AnyOperation,
  type AppState,
  inputSchemaOf,
  type OpContext,
  type RestBinding,
  renderError,
  renderTexts,
} from '../core/operation.ts';
import { type Caller, type Principal, refusal } from '../core/roles.ts';
import { coerceScalarStrings, isOptional, NUMERIC, objectEntries, scalarType } from '../core/schema-shape.ts';
import { err, ok, type Result } from '../result.ts';
import { goneSignal, HTTP_CLIENT_GONE } from '../motion/dead-man.ts';
import { parseJsonText, readJsonText } from './body.ts';
import { errorResponse, jsonText } from './errors.ts';
import { parseMultipart } from './multipart.ts';

const NO_PROGRESS = () => {};

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

/** The query string as input fields: only the binding's parameters, each once. */
function queryFields(
  url: string,
  allowed: readonly string[],
  types: Readonly<Record<string, string | undefined>>,
): Result<Record<string, unknown>, ApiError> {
  const start = url.indexOf('?');
  const fields: Record<string, unknown> = {};
  if (start < 0) return ok(fields);
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
        doc = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(file.data));
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

/** The validated input with the binding's defaults for the fields it leaves out. */
function withDefaults(rest: RestBinding, input: unknown): unknown {
  if (!rest.defaults || typeof input !== 'object' || input === null) return input;
  const filled: Record<string, unknown> = { ...(input as Record<string, unknown>) };
  for (const [name, value] of Object.entries(rest.defaults)) if (filled[name] === undefined) filled[name] = value;
  return filled;
}

/** A REST request's input and, for a multipart form, its files' names by part. */
interface RestInput {
  readonly value: unknown;
  readonly filenames?: Readonly<Record<string, string>>;
}

/** The operation's input from a REST request, validated with its schema (bounds of the active joint limits). */
async function restInput(
  op: AnyOperation,
  rest: RestBinding,
  request: Request,
  call: RestCall,
): Promise<Result<RestInput, ApiError>> {
  if (op.rawJson) {
    const text = await readJsonText(request);
    return text.ok ? ok({ value: { text: text.value } }) : text;
  }
  const schema = inputSchemaOf(op, call.ros.limits);
  if (!schema || !rest.body) return bodylessInput(op, rest, request, schema);
  const { entries, types } = shapeOf(schema);
  // The query first: a wrong parameter is refused before the body is read.
  const query = queryFields(request.url, rest.query ?? [], types);
  if (!query.ok) return query;
  if (rest.body === 'json') {
    const text = await readJsonText(request);
    if (!text.ok) return text;
    const doc = parseJsonText(text.value);
    if (!doc.ok) return doc;
    if (typeof doc.value !== 'object' || doc.value === null || Array.isArray(doc.value))
      return err(invalid(['body'], 'the body must be a JSON object', 'object_type'));
    // Numbers and booleans sent as strings ("0.5"), as FastAPI took them; unknown keys stay a 422.
    return validated(
      rest,
      schema,
      request,
      coerceScalarStrings(schema, doc.value) as Record<string, unknown>,
      query.value,
    );
  }
  const form = await formFields(rest, request, entries, types);
  if (!form.ok) return form;
  return validated(rest, schema, request, form.value.fields, query.value, form.value.filenames);
}

/** The input of an operation whose binding reads no body (query and path only): known without waiting for anything. */
function bodylessInput(
  op: AnyOperation,
  rest: RestBinding,
  request: Request,
  schema: v.GenericSchema | undefined,
): Result<RestInput, ApiError> {
  if (!schema) {
    // No input: a query parameter is unknown (422), as for any operation; a stop stops whatever it was sent with.
    if (op.effect === 'stop') return ok({ value: {} });
    const query = queryFields(request.url, [], {});
    return query.ok ? ok({ value: {} }) : query;
  }
  const query = queryFields(request.url, rest.query ?? [], shapeOf(schema).types);
  return query.ok ? validated(rest, schema, request, {}, query.value) : query;
}

/** The body's fields with the query's and the path's, validated with the schema (422 naming where each field was). */
function validated(
  rest: RestBinding,
  schema: v.GenericSchema,
  request: Request,
  fields: Record<string, unknown>,
  query: Record<string, unknown>,
  filenames?: Record<string, string>,
): Result<RestInput, ApiError> {
  const queryKeys = rest.query ?? [];
  // A field of the path is the path's: the body may not say it again (differently, or at all).
  const twice = (rest.params ?? []).find((name) => Object.hasOwn(fields, name));
  if (twice !== undefined)
    return err(
      invalid(['body', twice], `'${twice}' is given in the path; leave it out of the body`, 'extra_forbidden'),
    );
  const input = { ...fields, ...query, ...pathFields(rest, request) };
  const parsed = v.safeParse(schema, input);
  if (parsed.success) {
    const value = withDefaults(rest, parsed.output);
    return ok(filenames && Object.keys(filenames).length > 0 ? { value, filenames } : { value });
  }
  const pathKeys = rest.params ?? [];
  return err(
    locatedIssues(parsed.issues, (field) =>
      field !== undefined && queryKeys.includes(field)
        ? 'query'
        : field !== undefined && pathKeys.includes(field)
          ? 'path'
          : 'body',
    ),
  );
}

/** A REST call's context: its signal made only when an operation looks (a motion's dead-man, a solve). */
class RestContext implements OpContext {
  readonly progress = NO_PROGRESS;
  readonly arrivedAtStop: number | undefined;
  readonly caller: Caller;
  readonly calledAs: string;
  readonly services: RestCall['services'];
  readonly ros: RestCall['ros'];
  readonly filenames?: Readonly<Record<string, string>>;
  readonly #request: Request;
  #signal: AbortSignal | undefined;

  constructor(
    request: Request,
    call: RestCall,
    caller: Caller,
    calledAs: string,
    filenames: Readonly<Record<string, string>> | undefined,
  ) {
    this.#request = request;
    this.arrivedAtStop = call.arrivedAtStop;
    this.caller = caller;
    this.calledAs = calledAs;
    this.services = call.services;
    this.ros = call.ros;
    if (filenames) this.filenames = filenames;
  }

  /** Aborted when the client disconnects. */
  get signal(): AbortSignal {
    this.#signal ??= goneSignal(this.#request.signal, HTTP_CLIENT_GONE);
    return this.#signal;
  }
}

/** The REST caller of each principal, made once (principals are the tokens' own objects, or the anonymous one). */
const restCallers = new WeakMap<Principal, Caller>();
function restCaller(principal: Principal): Caller {
  let caller = restCallers.get(principal);
  if (caller === undefined) {
    caller = { ...principal, face: 'rest' };
    restCallers.set(principal, caller);
  }
  return caller;
}

/** A handler of the REST face: a fetch-API handler given the call's facts with each request (as itty-router's args). */
export type RestHandler = (request: Request, call: RestCall) => Promise<Response>;

/**
 * The REST face of an operation: a standalone fetch-API handler. It reads the input from the
 * JSON body, the query or the multipart form (strings converted to the schema's numbers and
 * booleans), validates it with the operation's schema (422 with the field path), runs it and
 * answers 200 with its output as JSON, or the error's status. Each distinct output object is
 * serialized once (a state read many times between updates costs one JSON.stringify).
 */
export function restHandler(op: AnyOperation): RestHandler {
  const rest = op.rest;
  if (!rest) throw new Error(`operation ${op.name} has no REST binding`);
  const serialized = new WeakMap<object, string>();
  const named = `${rest.method} ${rest.path}`;
  return async (request, call) => {
    // A request that did not pass authentication has no caller: refused before anything is read, never run.
    if (!call.caller) return errorResponse(refusal(op, undefined, named) as ApiError);
    const started = performance.now();
    const caller = restCaller(call.caller);
    // The caller's role is checked before anything is read; a binding without a body has its input at once.
    const refused = refusal(op, caller, named);
    const input = refused
      ? err(refused)
      : op.rawJson || rest.body
        ? await restInput(op, rest, request, call)
        : bodylessInput(op, rest, request, inputSchemaOf(op, call.ros.limits));
    const result = input.ok
      ? await op.run(input.value.value, new RestContext(request, call, caller, named, input.value.filenames))
      : input;
    recordCall(call.services.audit, op, caller, started, input.ok ? input.value.value : undefined, result);
    if (!result.ok) return errorResponse(renderError(result.error, 'rest'));
    const value = result.value as unknown;
    if (typeof value !== 'object' || value === null) return jsonText(JSON.stringify(value));
    let body = serialized.get(value);
    if (body === undefined) {
      // Texts of the output (a plan's message, a trajectory's warning) name other operations as REST does.
      body = JSON.stringify(renderTexts(value, 'rest'));
      serialized.set(value, body);
    }
    return jsonText(body);
  };
}
