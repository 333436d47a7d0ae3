import { access } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { err, ok, type Result } from '../result.ts';

/** armgate's own install prefix: its bundled packages live in `<root>/share/<package>/`. */
export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

const PACKAGE_REF = /^(?:pkg|package):\/\/([A-Za-z0-9_][A-Za-z0-9_.-]*)\/(.+)$/;

/**
 * Resolves a file reference from a settings or endpoints file to an absolute path.
 * `pkg://<package>/<path>` and `package://...` go through each prefix of AMENT_PREFIX_PATH
 * (`<prefix>/share/<package>/<path>`), then through armgate's bundled packages; a plain
 * relative path resolves against `baseDir`. Paths that climb out of their package are refused.
 */
export async function resolveFileRef(
  ref: string,
  baseDir: string,
  amentPrefixPath: string | undefined = process.env.AMENT_PREFIX_PATH,
): Promise<Result<string, string>> {
  if (ref.includes('\0')) return err('contains a NUL byte');
  const match = PACKAGE_REF.exec(ref);
  if (!match) {
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(ref))
      return err(`unsupported scheme in '${ref}' (use pkg://, package:// or a path)`);
    const resolved = path.resolve(baseDir, ref);
    return (await isReadable(resolved)) ? ok(resolved) : err(`cannot read '${resolved}'`);
  }
  const [, pkg = '', rel = ''] = match;
  const normalized = path.posix.normalize(rel);
  if (normalized.startsWith('..') || path.posix.isAbsolute(normalized)) {
    return err(`'${ref}' climbs out of package '${pkg}'`);
  }
  const prefixes = (amentPrefixPath ?? '').split(':').filter((p) => p.length > 0);
  prefixes.push(PROJECT_ROOT);
  const tried: string[] = [];
  for (const prefix of prefixes) {
    const candidate = path.join(prefix, 'share', pkg, normalized);
    tried.push(candidate);
    if (await isReadable(candidate)) return ok(candidate);
  }
  return err(`cannot find '${ref}' (looked in ${tried.join(', ')})`);
}

async function isReadable(file: string): Promise<boolean> {
  try {
    await access(file);
    return true;
  } catch {
    return false;
  }
}

/**
 * Resolves `requested` under `root` and refuses anything that escapes it (absolute paths
 * elsewhere, `..` segments). Pure: no file system access.
 */
export function confineUnder(root: string, requested: string): Result<string, string> {
  if (requested.includes('\0')) return err('contains a NUL byte');
  const rootAbs = path.resolve(root);
  const target = path.resolve(rootAbs, requested);
  const rel = path.relative(rootAbs, target);
  if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) {
    return err(`'${requested}' is not inside ${rootAbs}`);
  }
  return ok(target);
}
