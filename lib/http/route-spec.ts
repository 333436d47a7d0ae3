import type * as v from 'valibot';
import type { JointLimits } from '../robot/limits.ts';

/** A schema, or a function that builds it from the active joint limits (bounds in the schema). */
export type SchemaSource = v.GenericSchema | ((limits: JointLimits) => v.GenericSchema);

/** One documented response of a route. */
export interface ResponseSpec {
  readonly description: string;
  readonly schema?: v.GenericSchema;
}

/** What a handler file declares about its endpoint: routing, validation and OpenAPI text. */
export interface RouteSpec {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly operationId: string;
  readonly summary: string;
  readonly description?: string;
  readonly tags: readonly string[];
  /** Query parameters (an object schema of strings). */
  readonly query?: SchemaSource;
  /** Request body and its media type. */
  readonly body?: { readonly contentType: 'application/json' | 'multipart/form-data'; readonly schema: SchemaSource };
  /** Success and endpoint-specific error responses; 401, 405, 413, 422 and 500 are added for all. */
  readonly responses: Readonly<Record<number, ResponseSpec>>;
}

/** A handler file: its route spec and its fetch-API handler. */
export interface HandlerModule {
  readonly route: RouteSpec;
  readonly handler: (request: Request) => Promise<Response>;
}

/** The schema of a source for the given limits. */
export function schemaFor(source: SchemaSource, limits: JointLimits): v.GenericSchema {
  return typeof source === 'function' ? source(limits) : source;
}

/** Caches a limits-dependent schema per limits object, so handlers build it once. */
export function perLimits<S extends v.GenericSchema>(factory: (limits: JointLimits) => S): (limits: JointLimits) => S {
  const cache = new WeakMap<JointLimits, S>();
  return (limits) => {
    let schema = cache.get(limits);
    if (!schema) {
      schema = factory(limits);
      cache.set(limits, schema);
    }
    return schema;
  };
}
