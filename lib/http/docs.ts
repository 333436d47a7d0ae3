import { Response } from '@whatwg-node/fetch';
import { readdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);

/** Static assets of the docs pages, served from npm packages so the pages work offline. */
export interface DocsAssets {
  readonly files: ReadonlyMap<string, { readonly body: Uint8Array<ArrayBuffer>; readonly type: string }>;
}

const SWAGGER_FILES = ['swagger-ui.css', 'swagger-ui-bundle.js'] as const;

/** The repository's guides (docs/*.md), served as their Markdown source at /docs/guide/NAME.md. */
const GUIDE_DIR = fileURLToPath(new URL('../../docs/', import.meta.url));
export const GUIDE_PREFIX = '/docs/guide/';

/** The guide pages by file name (read once at start-up; none when the folder is absent). */
async function loadGuides(): Promise<Map<string, Uint8Array<ArrayBuffer>>> {
  const names = await readdir(GUIDE_DIR).catch(() => [] as string[]);
  const guides = new Map<string, Uint8Array<ArrayBuffer>>();
  for (const name of names.filter((n) => /^[\w.-]+\.md$/.test(n)).sort())
    guides.set(name, await readFile(path.join(GUIDE_DIR, name)));
  return guides;
}

/** Loads Swagger UI (swagger-ui-dist) and ReDoc (redoc standalone bundle) into memory. */
export async function loadDocsAssets(): Promise<DocsAssets> {
  const swaggerDir = path.dirname(require.resolve('swagger-ui-dist/package.json'));
  const redocDir = path.dirname(require.resolve('redoc/package.json'));
  const files = new Map<string, { body: Uint8Array<ArrayBuffer>; type: string }>();
  for (const name of SWAGGER_FILES) {
    files.set(`/docs/assets/${name}`, { body: await readFile(path.join(swaggerDir, name)), type: contentType(name) });
  }
  // ReDoc's footer loads its logo from a CDN with no option to turn it off: point it at an inline image.
  const redoc = (await readFile(path.join(redocDir, 'bundles', 'redoc.standalone.js'), 'utf8')).replaceAll(
    'https://cdn.redoc.ly/redoc/logo-mini.svg',
    'data:image/svg+xml,%3Csvg xmlns=%22http://www.w3.org/2000/svg%22/%3E',
  );
  files.set('/redoc/assets/redoc.standalone.js', {
    body: new TextEncoder().encode(redoc),
    type: contentType('redoc.standalone.js'),
  });
  files.set('/docs', { body: new TextEncoder().encode(SWAGGER_HTML), type: 'text/html; charset=utf-8' });
  files.set('/redoc', { body: new TextEncoder().encode(REDOC_HTML), type: 'text/html; charset=utf-8' });
  // Plain text, so that a browser shows the Markdown source instead of downloading it.
  for (const [name, body] of await loadGuides())
    files.set(`${GUIDE_PREFIX}${name}`, { body, type: 'text/plain; charset=utf-8' });
  return { files };
}

/**
 * The docs assets, loaded by the first call (the first request for /docs, /redoc or a guide) and kept: about 3 MB that a
 * service nobody opens the docs of never holds. A failed load is tried again by the next call.
 */
export function docsAssetsOnDemand(load: () => Promise<DocsAssets> = loadDocsAssets): () => Promise<DocsAssets> {
  let loading: Promise<DocsAssets> | undefined;
  return () => {
    loading ??= load().catch((e: unknown) => {
      loading = undefined;
      throw e;
    });
    return loading;
  };
}

function contentType(name: string): string {
  return name.endsWith('.css') ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8';
}

/** The response for a docs path, or undefined when the path is not a docs asset. */
export function docsResponse(assets: DocsAssets, pathname: string): Response | undefined {
  const file = assets.files.get(pathname);
  if (!file) return undefined;
  const cache = pathname.includes('/assets/') ? 'public, max-age=86400' : 'no-cache';
  return new Response(file.body, {
    headers: {
      'content-type': file.type,
      'cache-control': cache,
      'content-security-policy': DOCS_CSP,
      'x-content-type-options': 'nosniff',
    },
  });
}

/**
 * The docs pages load nothing from outside the machine (ReDoc's footer would fetch its logo from
 * a CDN): everything comes from this server.
 */
const DOCS_CSP =
  "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; worker-src 'self' blob:; connect-src 'self'";

/** A docs page: the document's head (title, no favicon fetch) with `head` added, and `body`. */
const docsPage = (head: string, body: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>armgate API</title>
<link rel="icon" href="data:,">
${head}</head>
<body>
${body}</body>
</html>
`;

const SWAGGER_HTML = docsPage(
  '<link rel="stylesheet" href="/docs/assets/swagger-ui.css">\n',
  `<div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script>
window.ui = SwaggerUIBundle({
  url: '/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  persistAuthorization: true,
  displayRequestDuration: true,
});
</script>
`,
);

const REDOC_HTML = docsPage(
  '',
  `<redoc spec-url="/openapi.json"></redoc>
<script src="/redoc/assets/redoc.standalone.js"></script>
`,
);
