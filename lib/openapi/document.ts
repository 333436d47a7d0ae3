import type { JsonSchema } from '@valibot/to-json-schema';
import type * as v from 'valibot';
import type { ApiError } from '../core/errors.ts';
import { statusOf } from '../http/errors.ts';
import {
  type AnyOperation,
  hasRest,
  inputSchemaOf,
  type RestOperation,
  renderText,
  renderTexts,
} from '../core/operation.ts';
import { isOptional, objectEntries } from '../core/schema-shape.ts';
import { ErrorDetailSchema, ValidationErrorSchema } from '../http/schemas.ts';
import type { JointLimits } from '../robot/limits.ts';
import { jsonSchema } from './json-schema.ts';

export { jsonSchema };

/** OpenAPI 3.1 is JSON Schema 2020-12: tuples keep each position's bounds in prefixItems. */
const OPENAPI_SCHEMA = { prefixItems: true } as const;

/** The guides in the repository's docs/ folder, one subject each, as served at /docs/guide (README.md links the same pages). */
const DOCS_PAGES = [
  "The guides (the repository's `docs/` folder, served here as Markdown text):",
  ...[
    ['api.md', 'more examples and the decisions where the contract is silent'],
    ['mcp.md', 'MCP and agents'],
    ['safe-deployment.md', 'roles per token, plan then execute, the safety envelope, the audit trail'],
    ['events-and-live-page.md', 'GET /events and the live page'],
    ['settings.md', 'the settings reference'],
    ['simulator.md', 'the simulator and planners'],
    ['trajectories.md', 'trajectory checking'],
    ['ros2.md', 'deploying on ROS 2'],
    ['iiwa-web.md', 'coming from iiwa_web'],
    ['benchmarks.md', 'benchmarks'],
    ['development.md', 'development'],
    ['contract.md', 'the contract (Robot Control Service specification)'],
  ].map(([page, subject]) => `- [docs/${page}](/docs/guide/${page}): ${subject}`),
].join('\n');

/** Text of the document's info block. */
export const API_INFO = {
  title: 'armgate',
  version: '0.1.0',
  description:
    'HTTP front end to a 7-axis robot arm (KUKA LBR iiwa 7 R800) behind a ROS 2 + MoveIt stack or the embedded simulator. ' +
    'Motion commands are synchronous; there is no command queue. The stop command cancels software operations only: it does not ' +
    "replace the robot's safety system or emergency stop. When the server has a token, authorize with the bare token (without 'Bearer').\n\n" +
    DOCS_PAGES,
} as const;

/** The operation's input entries that a REST binding reads from the query, and the rest (body fields). */
function splitEntries(op: RestOperation, limits: JointLimits) {
  const schema = inputSchemaOf(op, limits);
  const entries = schema ? objectEntries(schema) : {};
  const queryKeys = op.rest.query ?? [];
  const pathKeys = op.rest.params ?? [];
  const query = Object.entries(entries).filter(([name]) => queryKeys.includes(name) || pathKeys.includes(name));
  const body = Object.entries(entries).filter(([name]) => !queryKeys.includes(name) && !pathKeys.includes(name));
  return { schema, query, body };
}

function queryParameters(op: RestOperation, limits: JointLimits): unknown[] {
  return splitEntries(op, limits).query.map(([name, entry]) => {
    const { description, ...rest } = jsonSchema(entry, OPENAPI_SCHEMA) as JsonSchema & { description?: string };
    const inPath = (op.rest.params ?? []).includes(name);
    // A path parameter's example fills the docs page's Try-it-out, so that the request it pre-fills works as sent.
    const example = inPath && Array.isArray(rest.examples) ? { example: rest.examples[0] } : {};
    return {
      name,
      in: inPath ? 'path' : 'query',
      required: inPath || !isOptional(entry),
      ...(description ? { description } : {}),
      ...example,
      schema: rest,
    };
  });
}

/** An object schema without the named properties (in `properties` and `required`). */
function withoutFields(schema: JsonSchema, names: readonly string[]): JsonSchema {
  if (names.length === 0 || typeof schema.properties !== 'object') return schema;
  const properties = Object.fromEntries(Object.entries(schema.properties).filter(([name]) => !names.includes(name)));
  const required = (schema.required ?? []).filter((name) => !names.includes(name));
  const { required: _r, ...rest } = schema;
  return { ...rest, properties, ...(required.length > 0 ? { required } : {}) };
}

/** The request body of an operation: its input schema as JSON, or a form whose file parts are binary. */
function requestBody(op: RestOperation, limits: JointLimits): Record<string, unknown> | undefined {
  const { schema, body } = splitEntries(op, limits);
  if (!schema || !op.rest.body) return undefined;
  // Fields read from the path or the query are parameters, not the body's.
  const elsewhere = [...(op.rest.params ?? []), ...(op.rest.query ?? [])];
  const example = op.rest.example ? { example: op.rest.example } : {};
  if (op.rest.body === 'json')
    return {
      required: true,
      content: {
        'application/json': { schema: withoutFields(jsonSchema(schema, OPENAPI_SCHEMA), elsewhere), ...example },
      },
    };
  const files = op.rest.files ?? {};
  const properties: Record<string, unknown> = {};
  for (const [name, entry] of body) {
    const file = files[name];
    properties[name] = file
      ? { type: 'string', format: 'binary', description: renderText(file.description, 'rest') }
      : jsonSchema(entry, OPENAPI_SCHEMA);
  }
  const required = body.filter(([, entry]) => !isOptional(entry)).map(([name]) => name);
  const form = { type: 'object', properties, ...(required.length ? { required } : {}), additionalProperties: false };
  return { required: true, content: { 'multipart/form-data': { schema: form, ...example } } };
}

function operation(op: RestOperation, limits: JointLimits, secured: boolean): Record<string, unknown> {
  const responses: Record<string, unknown> = {
    200: {
      description: op.rest.ok,
      content: { 'application/json': { schema: jsonSchema(op.output, OPENAPI_SCHEMA) } },
    },
  };
  const error = (description: string, schema: v.GenericSchema) => ({
    description: renderText(description, 'rest'),
    content: { 'application/json': { schema: jsonSchema(schema, OPENAPI_SCHEMA) } },
  });
  for (const [kind, description] of Object.entries(op.errors) as [ApiError['kind'], string][]) {
    responses[String(statusOf({ kind, detail: '' } as ApiError))] = error(description, ErrorDetailSchema);
  }
  if (secured) responses['401'] = error('Missing or wrong Bearer token.', ErrorDetailSchema);
  responses['403'] = error(
    "The token's role may not call this operation (the detail names the role needed), the Host is not one this server " +
      'serves, or a state-changing request came from a foreign Origin.',
    ErrorDetailSchema,
  );
  const body = requestBody(op, limits);
  const mediaType = op.rest.body === 'multipart' ? 'multipart/form-data' : 'application/json';
  if (body) responses['415'] = error(`The body is not ${mediaType}.`, ErrorDetailSchema);
  if (op.input) responses['422'] = error('Invalid request: the field path is in loc.', ValidationErrorSchema);
  if (body) responses['413'] = error('Request body too large.', ErrorDetailSchema);
  return {
    operationId: op.rest.operationId,
    summary: op.summary,
    description: renderText(op.description, 'rest'),
    tags: [...op.rest.tags],
    ...(secured ? { security: [{ bearerAuth: [] }] } : {}),
    parameters: queryParameters(op, limits),
    ...(body ? { requestBody: body } : {}),
    responses,
  };
}

/**
 * Assembles the OpenAPI 3.1 document from the operations start-up hands it (those with a route), with the joint bounds
 * of `limits`.
 * The same function writes openapi/openapi.json (supplied limits) and serves /openapi.json
 * (active limits).
 */
export function buildOpenApiDocument(
  operations: readonly AnyOperation[],
  limits: JointLimits,
  extraPaths: Record<string, unknown> = {},
): Record<string, unknown> {
  return renderTexts(assemble(operations, limits, extraPaths), 'rest');
}

/** The document before its texts are rendered (every `{op:name}` said as `METHOD /path` by the caller). */
function assemble(
  operations: readonly AnyOperation[],
  limits: JointLimits,
  extraPaths: Record<string, unknown>,
): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of operations.filter(hasRest)) {
    const entry = paths[op.rest.path] ?? {};
    entry[op.rest.method.toLowerCase()] = operation(op, limits, true);
    paths[op.rest.path] = entry;
  }
  return {
    openapi: '3.1.0',
    info: API_INFO,
    // Relative: the server that serves the document (and the docs page's Try-it-out) is the one to call.
    servers: [{ url: '/', description: 'The armgate server that serves this document.' }],
    tags: [
      { name: 'robot', description: 'Robot state and motion.' },
      { name: 'trajectory', description: 'Joint trajectories for the joint trajectory controller.' },
      { name: 'sequences', description: 'Motion sequences run by a separate runner process.' },
      { name: 'stop', description: 'The common stop.' },
    ],
    paths: { ...paths, ...extraPaths },
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description: "The server's web.token. Enter the bare token; the page adds 'Bearer'.",
        },
      },
    },
  };
}
