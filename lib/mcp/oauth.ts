/** OAuth discovery: armgate takes a static Bearer token, and says so where OAuth clients look for metadata. */
import { Response as PonyfillResponse } from '@whatwg-node/fetch';

/** Well-known OAuth and OpenID discovery paths (RFC 8414, RFC 9728, OIDC), at the root or under /mcp/mcp. */
export const OAUTH_DISCOVERY_PATH =
  /^(?:\/mcp\/mcp)?\/\.well-known\/(?:oauth-authorization-server|oauth-protected-resource|openid-configuration)(?:\/.*)?$/;

/**
 * The answer to an OAuth discovery request: 404 (no metadata, so clients do not start an OAuth
 * flow) with a body saying the server takes a static Bearer token. Mount it without
 * authentication: a 401 here makes clients such as mcp-remote try OAuth registration.
 */
export function oauthDiscoveryResponse(): Response {
  return new PonyfillResponse(
    JSON.stringify({
      error: 'not_found',
      detail:
        'armgate does not use OAuth: send the static token as "Authorization: Bearer <token>" (web.token or ARMGATE_TOKEN); when no token is set, no header is needed',
    }),
    { status: 404, headers: { 'content-type': 'application/json', 'cache-control': 'no-store' } },
  );
}
