/** The CORS answers of the app (lib/http/routes.ts) for a front end admission admitted (lib/admission/front-door.ts). */
import { Response } from '@whatwg-node/fetch';
import { CORS_ALLOW_HEADERS, CORS_ALLOW_METHODS, CORS_EXPOSE_HEADERS } from '../admission/front-door.ts';

/** The answer to a CORS preflight from an admitted front end. */
export function preflightResponse(origin: string): Response {
  return new Response(null, {
    status: 204,
    headers: {
      'access-control-allow-origin': origin,
      'access-control-allow-methods': CORS_ALLOW_METHODS,
      'access-control-allow-headers': CORS_ALLOW_HEADERS,
      'access-control-max-age': '600',
      vary: 'Origin',
    },
  });
}

/** Adds the CORS headers for an admitted front end's origin to a response. */
export function withCors(response: Response, origin: string): Response {
  response.headers.set('access-control-allow-origin', origin);
  response.headers.set('access-control-expose-headers', CORS_EXPOSE_HEADERS);
  response.headers.append('vary', 'Origin');
  return response;
}
