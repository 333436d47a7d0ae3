import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';

/**
 * The JSON Schema validator of a session's Server (its `jsonSchemaValidator` option), built on its first use: the
 * SDK's Server builds an Ajv instance (with its formats) in its constructor, ~0.7 ms of CPU and its memory per session
 * (up to 256 held), for the one check that needs it (the answer to `server.elicitInput`), which armgate never calls
 * (mcp.confirm_motion sends its request itself, lib/mcp/face.ts). The same validator as the SDK's default once built;
 * `create` builds it (in tests, one that counts).
 */
export function lazySchemaValidator(
  create: () => jsonSchemaValidator = () => new AjvJsonSchemaValidator(),
): jsonSchemaValidator {
  let built: jsonSchemaValidator | undefined;
  return {
    getValidator(schema) {
      built ??= create();
      return built.getValidator(schema);
    },
  };
}
