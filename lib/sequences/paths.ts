import { mkdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { err, ok, type Result } from '../result.ts';
import { confineUnder } from '../settings/resolve.ts';

/**
 * Resolves a requested bag folder under `root`: relative paths only, no `..` escape, no symlink
 * escape of the parent, and not an existing file or non-empty folder (a bag is never overwritten).
 * Creates the root when missing.
 */
export async function confineRequest(root: string, requested: string): Promise<Result<string, string>> {
  if (path.isAbsolute(requested)) {
    const inside = confineUnder(root, path.relative(path.resolve(root), requested));
    if (!inside.ok || !path.resolve(requested).startsWith(path.resolve(root) + path.sep)) return err(`'${requested}' is outside sequences.bag_root (${path.resolve(root)}); give a path relative to it`);
  }
  if (!/^[A-Za-z0-9_./ -]+$/.test(requested)) return err('may contain only letters, digits, space, _ . - and /');
  const confined = confineUnder(root, requested);
  if (!confined.ok) return err(`${confined.error}: bag_path must stay inside sequences.bag_root`);
  await mkdir(root, { recursive: true });
  const existing = await stat(confined.value).catch(() => undefined);
  if (existing) return err(`'${requested}' already exists under sequences.bag_root; choose a new name (bags are never overwritten)`);
  return ok(confined.value);
}
