import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Response } from '@whatwg-node/fetch';
import { errorResponse } from '../http/errors.ts';
import type { Result } from '../result.ts';
import type { InterfaceUnavailable } from '../ros/context.ts';
import { resolveFileRef } from '../settings/resolve.ts';

const require = createRequire(import.meta.url);
const STATIC_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'static');

/** The page's own files under `/ui/` (from lib/ui/static): its modules and its style sheet. */
const OWN_FILES = ['app.js', 'envelope.js', 'hold.js', 'held.js', 'jog-panel.js', 'positions.js', 'app.css'] as const;

/**
 * The live page's shell: served without a token, like /docs (the page asks for the token and
 * sends it with every data request). `/` is the page; `/ui/<file>` its own scripts and style ({@link OWN_FILES});
 * `/ui/vendor/three/...` and `/ui/vendor/urdf-loader/...` the ES modules of the npm packages (no CDN).
 */
export const UI_PUBLIC_PATH = new RegExp(
  `^/$|^/ui/(${OWN_FILES.map((f) => f.replace('.', '\\.')).join('|')})$|^/ui/vendor/(three|urdf-loader)/[\\w./-]+\\.js$`,
);

let resolvedVendors: Record<string, { readonly dir: string; readonly allowed: readonly string[] }> | undefined;

/** Where each vendor package's browser modules are, and which of its folders may be served (resolved at start-up). */
function vendorDirs(): Record<string, { readonly dir: string; readonly allowed: readonly string[] }> {
  // three's main file is build/three.cjs; urdf-loader's is src/URDFLoader.js (neither exports its package.json).
  // Resolved once per process (a module's place does not change while it runs), not for every app.
  resolvedVendors ??= {
    three: { dir: path.resolve(path.dirname(require.resolve('three')), '..'), allowed: ['build/', 'examples/jsm/'] },
    'urdf-loader': { dir: path.dirname(require.resolve('urdf-loader')), allowed: [''] },
  };
  return resolvedVendors;
}

/** Mesh files a URDF may name that the page's loader reads (urdf-loader parses STL and COLLADA). */
const MESH_TYPES: Record<string, string> = {
  '.stl': 'model/stl',
  '.dae': 'model/vnd.collada+xml',
};

/**
 * The page's Content-Security-Policy: everything from this server (the import map is an inline
 * script); data only from this server.
 */
const UI_CSP =
  "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'self'; worker-src 'self' blob:";

interface Asset {
  readonly body: Uint8Array<ArrayBuffer>;
  readonly type: string;
}

function typeOf(name: string): string {
  if (name.endsWith('.html')) return 'text/html; charset=utf-8';
  if (name.endsWith('.css')) return 'text/css; charset=utf-8';
  return 'text/javascript; charset=utf-8';
}

function assetResponse(asset: Asset, cache: string): Response {
  return new Response(asset.body, {
    headers: { 'content-type': asset.type, 'cache-control': cache, 'content-security-policy': UI_CSP },
  });
}

/** The live page's routes: the public shell and modules, and the authenticated robot description and meshes. */
export interface UiRoutes {
  /** `/`, the page's own files under `/ui/` and the vendor modules (public; {@link UI_PUBLIC_PATH}). */
  readonly shell: (request: Request) => Promise<Response>;
  /** GET /ui/robot.urdf: the URDF the service uses (authenticated, like every data route). */
  readonly robotDescription: (request: Request) => Promise<Response>;
  /** GET /ui/package/<package>/<path>: a mesh a `package://` reference of the URDF names (authenticated). */
  readonly packageFile: (request: Request) => Promise<Response>;
}

const notFound = (pathname: string) => errorResponse({ kind: 'not_found', detail: `Not Found: ${pathname}` });
const onlyGet = (request: Request, pathname: string) =>
  request.method === 'GET'
    ? undefined
    : errorResponse({
        kind: 'method_not_allowed',
        detail: `Method ${request.method} not allowed on ${pathname}; use GET`,
        allow: ['GET'],
      });

/**
 * Loads the page's own files into memory and builds its routes. Vendor modules are read on first
 * request and kept (a fixed set of files of two installed packages). The robot description is
 * the stack's (`stackDescription`, ros2: the robot_description parameter) when it answers, else
 * `robotDescriptionXml`, the endpoints file's robot_description (the simulator's model); the
 * header `x-armgate-model-source` says which.
 */
export async function uiRoutes(
  robotDescriptionXml: string,
  stackDescription?: () => Promise<Result<string, InterfaceUnavailable>>,
): Promise<UiRoutes> {
  const own = new Map<string, Asset>();
  for (const [route, file] of [['/', 'index.html'], ...OWN_FILES.map((f) => [`/ui/${f}`, f] as const)] as const) {
    own.set(route, { body: await readFile(path.join(STATIC_DIR, file)), type: typeOf(file) });
  }
  const vendors = vendorDirs();
  const vendorCache = new Map<string, Promise<Asset | undefined>>();
  const vendorAsset = (pathname: string): Promise<Asset | undefined> => {
    let cached = vendorCache.get(pathname);
    if (!cached) {
      cached = readVendor(vendors, pathname);
      vendorCache.set(pathname, cached);
    }
    return cached;
  };
  const xmlType = 'application/xml; charset=utf-8';
  const urdf: Asset = { body: new TextEncoder().encode(robotDescriptionXml), type: xmlType };
  /** The stack's own URDF when it publishes one, else the file's; a failed read is retried after a minute. */
  let fromStack: { readonly asset: Asset } | { readonly failedAtMs: number; readonly why: string } | undefined;
  const description = async (): Promise<{ asset: Asset; source: string }> => {
    if (!stackDescription) return { asset: urdf, source: 'endpoints file' };
    if (fromStack === undefined || ('failedAtMs' in fromStack && performance.now() - fromStack.failedAtMs > 60_000)) {
      const read = await stackDescription();
      fromStack = read.ok
        ? { asset: { body: new TextEncoder().encode(read.value), type: xmlType } }
        : { failedAtMs: performance.now(), why: read.error.message };
    }
    return 'asset' in fromStack
      ? { asset: fromStack.asset, source: 'robot_description parameter' }
      : { asset: urdf, source: `endpoints file (${fromStack.why.slice(0, 200)})` };
  };

  return {
    async shell(request) {
      const pathname = new URL(request.url).pathname;
      const wrongMethod = onlyGet(request, pathname);
      if (wrongMethod) return wrongMethod;
      const page = own.get(pathname);
      if (page) return assetResponse(page, 'no-cache');
      const vendor = await vendorAsset(pathname);
      return vendor ? assetResponse(vendor, 'public, max-age=86400') : notFound(pathname);
    },
    async robotDescription(request) {
      const wrongMethod = onlyGet(request, '/ui/robot.urdf');
      if (wrongMethod) return wrongMethod;
      const { asset, source } = await description();
      const response = assetResponse(asset, 'no-cache');
      response.headers.set('x-armgate-model-source', source.replace(/[^\x20-\x7e]/g, ' '));
      return response;
    },
    async packageFile(request) {
      const pathname = new URL(request.url).pathname;
      const wrongMethod = onlyGet(request, pathname);
      if (wrongMethod) return wrongMethod;
      const rest = decodeURIComponent(pathname.slice('/ui/package/'.length));
      const type = MESH_TYPES[path.extname(rest).toLowerCase()];
      if (!type || !/^[\w.-]+\/[\w./-]+$/.test(rest)) return notFound(pathname);
      const file = await resolveFileRef(`package://${rest}`, STATIC_DIR);
      if (!file.ok) return notFound(pathname);
      return new Response(await readFile(file.value), {
        headers: { 'content-type': type, 'cache-control': 'no-cache' },
      });
    },
  };
}

/** A vendor module by its URL path, confined to the package's allowed folders; undefined when not there. */
async function readVendor(vendors: ReturnType<typeof vendorDirs>, pathname: string): Promise<Asset | undefined> {
  const match = /^\/ui\/vendor\/(three|urdf-loader)\/([\w./-]+\.js)$/.exec(pathname);
  if (!match) return undefined;
  const [, name = '', rel = ''] = match;
  const vendor = vendors[name];
  const normalized = path.posix.normalize(rel);
  if (!vendor || normalized.startsWith('..') || !vendor.allowed.some((dir) => normalized.startsWith(dir)))
    return undefined;
  try {
    return { body: await readFile(path.join(vendor.dir, normalized)), type: typeOf(normalized) };
  } catch {
    return undefined;
  }
}
