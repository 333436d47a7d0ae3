import { type JsonSchema, toJsonSchema } from '@valibot/to-json-schema';
import type * as v from 'valibot';

interface PipeWithMetadata {
  readonly pipe?: readonly {
    readonly type: string;
    readonly metadata?: { readonly openapi?: JsonSchema };
    readonly description?: string;
  }[];
}

/** Query parameters carry their documented schema in `v.metadata({openapi})` (their runtime form is a string converted by the pipe). */
function overrideSchema(context: { readonly valibotSchema: unknown }): JsonSchema | undefined {
  const pipe = (context.valibotSchema as PipeWithMetadata).pipe;
  const documented = pipe?.find((item) => item.type === 'metadata' && item.metadata?.openapi)?.metadata?.openapi;
  if (!documented) return undefined;
  const description = pipe?.find((item) => item.type === 'description')?.description;
  return description ? { ...documented, description } : documented;
}

/** JSON Schema (2020-12) of a valibot schema, with documented types of text-encoded fields. */
export function jsonSchema(schema: v.GenericSchema): JsonSchema {
  const { $schema: _ignored, ...rest } = toJsonSchema(schema, {
    target: 'draft-2020-12',
    errorMode: 'ignore',
    overrideSchema,
  }) as JsonSchema & {
    $schema?: string;
  };
  return rest;
}
