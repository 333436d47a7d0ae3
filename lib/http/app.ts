import { Response } from '@whatwg-node/fetch';
import { type IRequest, Router } from 'itty-router';
import type { ApiError } from './errors.ts';
import { errorResponse, json } from './errors.ts';
import { bearerAuth } from './auth.ts';
import { type DocsAssets, docsResponse } from './docs.ts';
import { logLine } from './log.ts';
import type { HandlerModule } from './route-spec.ts';

/** A fetch handler plus the extra (non-REST) routes it mounts. */
export interface AppOptions {
  readonly handlers: readonly HandlerModule[];
  /** undefined: no authentication. */
  readonly token: string | undefined;
  readonly docs: DocsAssets;
  /** The OpenAPI document served at /openapi.json (already built with the active limits). */
  readonly openApiDocument: unknown;
  /** Further authenticated routes, e.g. the MCP endpoint: path -> handler for any method. */
  readonly mounts?: Readonly<Record<string, (request: Request) => Promise<Response>>>;
  /** Writes one line per request; defaults to stdout. */
  readonly log?: (fields: Record<string, string | number>) => void;
}

/** The path of an absolute URL, without parsing the whole URL (hot path). */
function pathOf(url: string): string {
  const start = url.indexOf('/', url.indexOf('//') + 2);
  if (start < 0) return '/';
  const end = url.search(/[?#]/);
  return url.slice(start, end < 0 ? undefined : end);
}

const PUBLIC_PATH = /^\/(docs|redoc)(\/assets\/[\w.-]+)?$|^\/openapi\.json$/;

/**
 * The HTTP core: Bearer auth, docs pages, the REST handlers by method and path, 404 and 405,
 * and one structured log line per request. Anything a handler throws is a bug: it is logged and
 * answered with a 500 that carries no stack trace.
 */
export function createApp(options: AppOptions): (request: Request) => Promise<Response> {
  const authenticate = bearerAuth(options.token);
  const log = options.log ?? logLine;
  const openApiBody = JSON.stringify(options.openApiDocument);
  const methodsByPath = new Map<string, string[]>();
  const router = Router<IRequest, []>({
    before: [
      (request: IRequest) => {
        if (PUBLIC_PATH.test(pathOf(request.url))) return undefined;
        const failure = authenticate(request as unknown as Request);
        return failure ? errorResponse(failure) : undefined;
      },
    ],
  });

  router.get('/openapi.json', () => new Response(openApiBody, { headers: { 'content-type': 'application/json' } }));
  for (const path of ['/docs', '/redoc', '/docs/assets/:file', '/redoc/assets/:file']) {
    router.get(path, (request: IRequest) => docsResponse(options.docs, new URL(request.url).pathname));
  }
  for (const { route, handler } of options.handlers) {
    router[route.method === 'GET' ? 'get' : 'post'](route.path, (request: IRequest) => handler(request as unknown as Request));
    methodsByPath.set(route.path, [...(methodsByPath.get(route.path) ?? []), route.method]);
  }
  for (const [path, handler] of Object.entries(options.mounts ?? {})) {
    router.all(path, (request: IRequest) => handler(request as unknown as Request));
  }
  router.all('*', (request: IRequest) => {
    const { pathname } = new URL(request.url);
    const allowed = methodsByPath.get(pathname);
    const error: ApiError = allowed
      ? { kind: 'method_not_allowed', detail: `Method ${request.method} not allowed on ${pathname}; use ${allowed.join(' or ')}`, allow: allowed }
      : { kind: 'not_found', detail: `Not Found: ${pathname}` };
    return errorResponse(error);
  });

  return async (request: Request): Promise<Response> => {
    const started = performance.now();
    let response: Response;
    try {
      response = ((await router.fetch(request as unknown as IRequest)) as Response | undefined) ?? errorResponse({ kind: 'not_found', detail: 'Not Found' });
    } catch (e) {
      log({ level: 'error', msg: 'unhandled error', error: e instanceof Error ? (e.stack ?? e.message) : String(e) });
      response = json({ detail: 'Internal server error' }, 500);
    }
    log({ level: 'info', msg: 'request', method: request.method, path: pathOf(request.url), status: response.status, ms: Math.round((performance.now() - started) * 100) / 100 });
    return response;
  };
}
