import * as v from 'valibot';
import { parseJsonText, readJsonText } from '../http/body.ts';
import { type ApiError, errorResponse, invalid, jsonText, type ValidationIssue } from '../http/errors.ts';
import { parseMultipart } from '../http/multipart.ts';
import { err, ok, type Result } from '../result.ts';
import { ros } from '../ros/context.ts';
import { audit } from '../audit/trail.ts';
import type { Services } from '../app/services.ts';
import { type Caller, refusal, requestPrincipal } from './access.ts';
import { type AnyOperation, type OpContext, renderText, type ToolNames } from './operation.ts';
import { coerceScalarStrings, isOptional, NUMERIC, objectEntries, scalarType } from './schema-shape.ts';

const NEVER_ABORTED = new AbortController().signal;
const NO_PROGRESS = () => {};

/** The arbiter's stop count at each request's arrival, stamped by the server before anything is awaited. */
const arrivals = new WeakMap<Request, number>();

/** The names of a multipart request's uploaded files, by part, for the operation's context. */
const filenamesOf = new WeakMap<Request, Map<string, string>>();

/** Remembers the stop count at a request's arrival (the server calls this first, synchronously). */
export function stampArrival(request: Request, stops: number): void {
  arrivals.set(request, stops);
}

/** The stop count stamped at a request's arrival; undefined for a request the server did not stamp. */
export function arrivalOf(request: Request): number | undefined {
  return arrivals.get(request);
}

/** An error with its texts' `{op:...}` references said as the given face says them. */
export function renderError(error: ApiError, face: 'rest' | 'mcp', toolNames?: ToolNames): ApiError {
  if (error.kind === 'validation') {
    const [first, ...rest] = error.issues.map((issue) => ({ ...issue, msg: renderText(issue.msg, face, toolNames) }));
    return { kind: 'validation', issues: [first as ValidationIssue, ...rest] };
  }
  return { ...error, detail: renderText(error.detail, face, toolNames) };
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
  op: AnyOperation,
  request: Request,
  entries: Readonly<Record<string, v.GenericSchema>>,
  types: Readonly<Record<string, string | undefined>>,
): Promise<Result<Record<string, unknown>, ApiError>> {
  const files = op.rest.files ?? {};
  const fileParts = Object.keys(files);
  const queryKeys = op.rest.query ?? [];
  const fieldParts = Object.keys(entries).filter((name) => !fileParts.includes(name) && !queryKeys.includes(name));
  const maxFileBytes = Math.max(...fileParts.map((name) => files[name]?.maxBytes ?? 10 * 1024 * 1024));
  const form = await parseMultipart(request, { fileParts, fieldParts, maxFileBytes });
  if (!form.ok) return form;
  const fields: Record<string, unknown> = {};
  const names = filenamesOf.get(request);
  for (const [name, file] of Object.entries(form.value.files)) names?.set(name, file.filename);
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
      // A copy of its own (the upload may sit in a shared pool) that a worker thread can take over.
      fields[name] = { filename: file.filename, bytes: new Uint8Array(file.data) };
    }
  }
  return ok(fields);
}

/** Validation issues located as the REST face says: 'query' or 'body', then the field path. */
export function locatedIssues(
  issues: readonly [v.BaseIssue<unknown>, ...v.BaseIssue<unknown>[]],
  rootOf: (field: string | undefined) => string,
): ApiError {
  const located = issues.map((issue): ValidationIssue => {
    const path = (issue.path ?? []).map((item) => (typeof item.key === 'number' ? item.key : String(item.key)));
    const missing = issue.kind === 'schema' && issue.input === undefined && path.length > 0;
    return {
      loc: [rootOf(typeof path[0] === 'string' ? path[0] : undefined), ...path],
      msg: missing ? 'Field required' : issue.message,
      type: missing ? 'missing' : issue.type,
    };
  });
  return { kind: 'validation', issues: located as [ValidationIssue, ...ValidationIssue[]] };
}

/** The path parameters the router matched (`request.params`), as input fields. */
function pathFields(op: AnyOperation, request: Request): Record<string, string> {
  const names = op.rest.params ?? [];
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

/** The operation's input schema (with the active joint limits when it depends on them). */
export function inputSchemaOf(op: AnyOperation): v.GenericSchema | undefined {
  if (!op.input) return undefined;
  return typeof op.input === 'function' ? op.input(ros().limits) : op.input;
}

/** The operation's input from a REST request, validated with its schema. */
async function restInput(op: AnyOperation, request: Request): Promise<Result<unknown, ApiError>> {
  const rest = op.rest;
  if (op.rawJson) {
    const text = await readJsonText(request);
    return text.ok ? ok({ text: text.value }) : text;
  }
  const schema = inputSchemaOf(op);
  if (!schema) return ok({});
  const { entries, types } = shapeOf(schema);
  const queryKeys = rest.query ?? [];
  const query = queryFields(request.url, queryKeys, types);
  if (!query.ok) return query;
  let fields: Record<string, unknown> = {};
  if (rest.body === 'json') {
    const text = await readJsonText(request);
    if (!text.ok) return text;
    const doc = parseJsonText(text.value);
    if (!doc.ok) return doc;
    if (typeof doc.value !== 'object' || doc.value === null || Array.isArray(doc.value))
      return err(invalid(['body'], 'the body must be a JSON object', 'object_type'));
    // Numbers and booleans sent as strings ("0.5"), as FastAPI took them; unknown keys stay a 422.
    fields = coerceScalarStrings(schema, doc.value) as Record<string, unknown>;
  } else if (rest.body === 'multipart') {
    const form = await formFields(op, request, entries, types);
    if (!form.ok) return form;
    fields = form.value;
  }
  const input = { ...fields, ...query.value, ...pathFields(op, request) };
  const parsed = v.safeParse(schema, input);
  if (parsed.success) return ok(parsed.output);
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

/** A handler of the REST face: a fetch-API handler given the app's services with each request (as itty-router's args). */
export type RestHandler = (request: Request, services: Services) => Promise<Response>;

/**
 * The REST face of an operation: a standalone fetch-API handler. It reads the input from the
 * JSON body, the query or the multipart form (strings converted to the schema's numbers and
 * booleans), validates it with the operation's schema (422 with the field path), runs it and
 * answers 200 with its output as JSON, or the error's status. Each distinct output object is
 * serialized once (a state read many times between updates costs one JSON.stringify).
 */
export function restHandler(op: AnyOperation): RestHandler {
  const serialized = new WeakMap<object, string>();
  const named = `${op.rest.method} ${op.rest.path}`;
  /** The call's input (once validated) and result; the caller's role is checked before anything is read. */
  const call = async (
    request: Request,
    caller: Caller,
    services: Services,
  ): Promise<{ input?: unknown; result: Result<unknown, ApiError> }> => {
    const refused = refusal(op, caller, named);
    if (refused) return { result: err(refused) };
    const filenames = new Map<string, string>();
    if (op.rest.body === 'multipart') filenamesOf.set(request, filenames);
    const input = await restInput(op, request);
    if (!input.ok) return { result: input };
    const ctx: OpContext = {
      face: 'rest',
      signal: NEVER_ABORTED,
      progress: NO_PROGRESS,
      arrivedAtStop: arrivalOf(request),
      caller,
      services,
      ...(filenames.size > 0 ? { filenames: Object.fromEntries(filenames) } : {}),
    };
    return { input: input.value, result: await op.run(input.value, ctx) };
  };
  return async (request, services) => {
    const started = performance.now();
    const caller: Caller = { ...requestPrincipal(request), face: 'rest' };
    const { input, result } = await call(request, caller, services);
    audit(services.audit, op, caller, started, input, result);
    if (!result.ok) return errorResponse(renderError(result.error, 'rest'));
    const value = result.value as unknown;
    if (typeof value !== 'object' || value === null) return jsonText(JSON.stringify(value));
    let body = serialized.get(value);
    if (body === undefined) {
      body = JSON.stringify(value);
      serialized.set(value, body);
    }
    return jsonText(body);
  };
}
