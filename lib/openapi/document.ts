import type { JsonSchema } from '@valibot/to-json-schema';
import type * as v from 'valibot';
import type { HandlerModule, RouteSpec } from '../http/route-spec.ts';
import { schemaFor } from '../http/route-spec.ts';
import { ErrorDetailSchema, ValidationErrorSchema } from '../http/schemas.ts';
import type { JointLimits } from '../robot/limits.ts';
import { jsonSchema } from './json-schema.ts';

export { jsonSchema };

/** Text of the document's info block. */
export const API_INFO = {
  title: 'armgate',
  version: '0.1.0',
  description:
    'HTTP front end to a 7-axis robot arm (KUKA LBR iiwa 7 R800) behind a ROS 2 + MoveIt stack or the embedded simulator. ' +
    'Motion commands are synchronous; there is no command queue. The stop command cancels software operations only: it does not ' +
    "replace the robot's safety system or emergency stop. When the server has a token, authorize with the bare token (without 'Bearer').",
} as const;

function queryParameters(route: RouteSpec, limits: JointLimits): unknown[] {
  if (!route.query) return [];
  const schema = jsonSchema(schemaFor(route.query, limits)) as {
    properties?: Record<string, JsonSchema>;
    required?: string[];
  };
  return Object.entries(schema.properties ?? {}).map(([name, param]) => {
    const { description, ...rest } = param as JsonSchema & { description?: string };
    return {
      name,
      in: 'query',
      required: schema.required?.includes(name) ?? false,
      ...(description ? { description } : {}),
      schema: rest,
    };
  });
}

function operation(route: RouteSpec, limits: JointLimits, secured: boolean): Record<string, unknown> {
  const responses: Record<string, unknown> = {};
  for (const [status, response] of Object.entries(route.responses)) {
    responses[status] = {
      description: response.description,
      ...(response.schema ? { content: { 'application/json': { schema: jsonSchema(response.schema) } } } : {}),
    };
  }
  const error = (description: string, schema: v.GenericSchema) => ({
    description,
    content: { 'application/json': { schema: jsonSchema(schema) } },
  });
  if (secured) responses['401'] = error('Missing or wrong Bearer token.', ErrorDetailSchema);
  responses['403'] = error(
    'The Host is not one this server serves, or a state-changing request came from a foreign Origin.',
    ErrorDetailSchema,
  );
  if (route.body) responses['415'] = error(`The body is not ${route.body.contentType}.`, ErrorDetailSchema);
  if (route.body || route.query)
    responses['422'] = error('Invalid request: the field path is in loc.', ValidationErrorSchema);
  if (route.body) responses['413'] = error('Request body too large.', ErrorDetailSchema);
  return {
    operationId: route.operationId,
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    tags: [...route.tags],
    ...(secured ? { security: [{ bearerAuth: [] }] } : {}),
    parameters: queryParameters(route, limits),
    ...(route.body
      ? {
          requestBody: {
            required: true,
            content: { [route.body.contentType]: { schema: jsonSchema(schemaFor(route.body.schema, limits)) } },
          },
        }
      : {}),
    responses,
  };
}

/**
 * Assembles the OpenAPI 3.1 document from the handler files, with the joint bounds of `limits`.
 * The same function writes openapi/openapi.json (supplied limits) and serves /openapi.json
 * (active limits).
 */
export function buildOpenApiDocument(
  handlers: readonly HandlerModule[],
  limits: JointLimits,
  extraPaths: Record<string, unknown> = {},
): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const { route } of handlers) {
    const entry = paths[route.path] ?? {};
    entry[route.method.toLowerCase()] = operation(route, limits, true);
    paths[route.path] = entry;
  }
  return {
    openapi: '3.1.0',
    info: API_INFO,
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
