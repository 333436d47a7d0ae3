/**
 * fetchAsset: the files a robot description names as `package://<package>/<path>` (meshes, textures, the URDF
 * itself), from the robot packages armgate resolves (AMENT_PREFIX_PATH, then its bundled share/), as the live page's
 * /ui/package/ route serves them. Anything else is refused with a reason: another scheme, a path that climbs out of
 * its package, a file type that is not an asset, a file that is not there or is too large.
 */
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { err, ok, type Result } from '../result.ts';
import { resolveFileRef } from '../settings/resolve.ts';

/** The file types served: meshes and textures three.js / Foxglove read, and robot descriptions. */
const ASSET_TYPES: ReadonlySet<string> = new Set([
  '.stl',
  '.dae',
  '.obj',
  '.glb',
  '.gltf',
  '.png',
  '.jpg',
  '.jpeg',
  '.urdf',
]);
/** The largest asset served (bytes). */
export const MAX_ASSET_BYTES = 64 * 1024 * 1024;
const MAX_URI = 1024;

/** A `package://` URI's file, or why it is not served (a sentence naming the URI, bounded). */
export async function fetchAsset(uri: unknown): Promise<Result<Uint8Array, string>> {
  if (typeof uri !== 'string') return err('uri must be a string');
  const shown = uri.length > 200 ? `${uri.slice(0, 200)}...` : uri;
  if (uri.length > MAX_URI) return err(`uri longer than ${MAX_URI} characters`);
  const match = /^package:\/\/([A-Za-z0-9_][A-Za-z0-9_.-]*)\/([^\0\\]+)$/.exec(uri);
  if (!match) return err(`'${shown}' is not served: only package://<package>/<path> URIs are`);
  const [, pkg = '', rel = ''] = match;
  if (rel.split('/').some((part) => part === '..' || part === '.' || part === '') || /%/.test(rel))
    return err(`'${shown}' is not served: the path must stay inside its package (no '..', '.', '//' or %-escapes)`);
  const ext = path.extname(rel).toLowerCase();
  if (!ASSET_TYPES.has(ext))
    return err(`'${shown}' is not served: not a mesh, texture or URDF (${[...ASSET_TYPES].join(' ')})`);
  const file = await resolveFileRef(`package://${pkg}/${rel}`, '/nonexistent');
  // The resolver's message lists the folders it looked in: not told to a client.
  if (!file.ok) return err(`'${shown}' is not found in package '${pkg}'`);
  try {
    const info = await stat(file.value);
    if (!info.isFile()) return err(`'${shown}' is not a file`);
    if (info.size > MAX_ASSET_BYTES) return err(`'${shown}' is larger than ${MAX_ASSET_BYTES} bytes`);
    return ok(await readFile(file.value));
  } catch {
    return err(`'${shown}' could not be read`);
  }
}
