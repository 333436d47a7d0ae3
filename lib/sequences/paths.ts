import { execFile } from 'node:child_process';
import { lstat, mkdir, realpath } from 'node:fs/promises';
import path from 'node:path';
import { err, ok, type Result } from '../result.ts';
import { confineUnder } from '../settings/resolve.ts';

/** True when `target` is `root` or inside it (both absolute, normalized). */
function within(root: string, target: string): boolean {
  const rel = path.relative(root, target);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** lstat, or undefined when nothing is there (or a parent is not a folder). */
async function lstatOrNone(file: string): Promise<Awaited<ReturnType<typeof lstat>> | undefined> {
  try {
    return await lstat(file);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw e;
  }
}

/**
 * Where `target` (absolute, not existing) really leads: the real path (symbolic links resolved) of
 * its deepest existing ancestor joined with the rest. Fails when an ancestor is a broken link.
 */
async function realTarget(target: string): Promise<Result<string, string>> {
  let ancestor = path.dirname(target);
  while ((await lstatOrNone(ancestor)) === undefined) ancestor = path.dirname(ancestor);
  try {
    return ok(path.join(await realpath(ancestor), path.relative(ancestor, target)));
  } catch (e) {
    return err(
      `${ancestor} cannot be resolved (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}): a symbolic link that leads nowhere?`,
    );
  }
}

/** The characters a bag path may hold, as the refusal says them. */
const BAG_PATH_CHARS = 'a bag path may contain only A-Z, a-z, 0-9, space, _ . - and /';

/** A character as a message shows it: quoted when visible, else its code point (U+0009). */
function shownChar(char: string): string {
  const code = char.codePointAt(0) ?? 0;
  const invisible = code < 0x21 || (code >= 0x7f && code <= 0xa0) || /\p{Cf}|\p{Zl}|\p{Zp}/u.test(char);
  return invisible ? `U+${code.toString(16).toUpperCase().padStart(4, '0')}` : `'${char}'`;
}

/**
 * Resolves a requested bag folder under `root`: relative paths only, no `..` escape, no symbolic
 * link escape (the real path of the deepest existing ancestor, links resolved, must be inside the
 * real path of the root; the folder itself must not be a link), and not an existing file or folder
 * (a bag is never overwritten). Creates the root when missing. Returns the lexical path under
 * `root`.
 */
export async function confineRequest(root: string, requested: string): Promise<Result<string, string>> {
  if (path.isAbsolute(requested)) {
    const inside = confineUnder(root, path.relative(path.resolve(root), requested));
    if (!inside.ok || !path.resolve(requested).startsWith(path.resolve(root) + path.sep))
      return err(`'${requested}' is outside sequences.bag_root (${path.resolve(root)}); give a path relative to it`);
  }
  if (!/^[A-Za-z0-9_./ -]+$/.test(requested)) {
    const foreign = /[^A-Za-z0-9_./ -]/u.exec(requested)?.[0];
    return err(`${foreign === undefined ? 'an empty path' : shownChar(foreign)} is not allowed: ${BAG_PATH_CHARS}`);
  }
  const confined = confineUnder(root, requested);
  if (!confined.ok) return err(`${confined.error}: bag_path must stay inside sequences.bag_root`);
  try {
    return await confineReal(root, requested, confined.value);
  } catch (e) {
    return err(
      `cannot check '${requested}' under sequences.bag_root: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
}

/** The file system checks of {@link confineRequest} for `target`, the lexical path of `requested` under `root`. */
async function confineReal(root: string, requested: string, target: string): Promise<Result<string, string>> {
  await mkdir(root, { recursive: true });
  const realRoot = await realpath(root);
  const limits = await fileSystemLimits(realRoot);
  // Names first: a name the file system cannot hold fails every later look (ENAMETOOLONG), and the runner's too.
  const named = nameProblem(path.resolve(target), limits);
  if (named) return err(`'${shorten(requested)}': ${named}`);
  const existing = await lstatOrNone(target);
  if (existing?.isSymbolicLink())
    return err(
      `'${requested}' is a symbolic link under sequences.bag_root; a bag is written only into a new folder, not through a link`,
    );
  if (existing)
    return err(
      `'${requested}' already exists under sequences.bag_root; choose a new name (bags are never overwritten)`,
    );
  const real = await realTarget(target);
  if (!real.ok) return err(`'${requested}': ${real.error}`);
  if (!within(realRoot, real.value) || real.value === realRoot) {
    return err(
      `'${requested}' leads through a symbolic link to ${real.value}, outside sequences.bag_root (${realRoot}); bags are written only inside bag_root`,
    );
  }
  // Through links the real path may be longer than the path asked for.
  const tooLong = nameProblem(real.value, limits);
  if (tooLong) return err(`'${shorten(requested)}': ${tooLong}`);
  return ok(target);
}

const shorten = (requested: string) => (requested.length > 60 ? `${requested.slice(0, 60)}...` : requested);

/** The longest file name (bytes) and path (bytes, with its terminating NUL) a file system takes. */
export interface NameLimits {
  readonly nameMax: number;
  readonly pathMax: number;
}

/** Linux's usual limits, taken when the file system's own cannot be read. */
const USUAL_LIMITS: NameLimits = { nameMax: 255, pathMax: 4096 };

/** The files a recorder writes into a bag folder named `base`: rosbag2's MCAP file and metadata (see lib/bag/writer.ts). */
export function recorderFileNames(base: string): string[] {
  return [`${base}_0.mcap`, 'metadata.yaml', '.metadata.yaml.partial'];
}

/**
 * Why a bag folder at `folder` (absolute, real) cannot hold the recorder's files on a file system with `limits`: a
 * component of the path, or a file name the recorder will write, longer than NAME_MAX, or a file's whole path longer
 * than PATH_MAX. Undefined when everything fits.
 */
export function nameProblem(folder: string, limits: NameLimits): string | undefined {
  const bytes = (s: string) => Buffer.byteLength(s);
  for (const part of folder.split(path.sep)) {
    if (bytes(part) > limits.nameMax)
      return `the folder name '${part.slice(0, 40)}...' is ${bytes(part)} bytes; this file system takes names of at most ${limits.nameMax} bytes (NAME_MAX)`;
  }
  for (const name of recorderFileNames(path.basename(folder))) {
    if (bytes(name) > limits.nameMax)
      return `the recorder would write the file '${name.slice(0, 40)}...' (${bytes(name)} bytes); this file system takes names of at most ${limits.nameMax} bytes (NAME_MAX): choose a shorter name`;
    const full = path.join(folder, name);
    if (bytes(full) + 1 > limits.pathMax)
      return `the recorder would write ${bytes(full)} bytes of path (${name}); this file system takes paths of at most ${limits.pathMax - 1} bytes (PATH_MAX): choose a shorter path`;
  }
  return undefined;
}

const limitsByRoot = new Map<string, Promise<NameLimits>>();

/** NAME_MAX and PATH_MAX of the file system holding `dir` (getconf, read once per folder), else the usual ones. */
export function fileSystemLimits(dir: string): Promise<NameLimits> {
  let known = limitsByRoot.get(dir);
  if (!known) {
    const read = (name: string, fallback: number) =>
      new Promise<number>((resolve) =>
        execFile('getconf', [name, dir], { timeout: 2000 }, (error, stdout) => {
          const n = Number(String(stdout).trim());
          resolve(!error && Number.isSafeInteger(n) && n > 0 ? n : fallback);
        }),
      );
    known = Promise.all([read('NAME_MAX', USUAL_LIMITS.nameMax), read('PATH_MAX', USUAL_LIMITS.pathMax)]).then(
      ([nameMax, pathMax]) => ({ nameMax, pathMax }),
    );
    limitsByRoot.set(dir, known);
  }
  return known;
}

/**
 * Creates the bag folder `folder` and checks, once it exists, that its real path is inside the real
 * path of `root`: what {@link confineRequest} checked when the request came may have changed since
 * (a link planted in between). The runner calls it before it writes anything.
 */
export async function createConfinedFolder(root: string, folder: string): Promise<Result<string, string>> {
  try {
    const realRoot = await realpath(root);
    const outside = (real: string) =>
      err(
        `the bag folder ${folder} resolves to ${real}, outside sequences.bag_root (${realRoot}); nothing was written`,
      );
    // Before creating anything (the deepest existing part, links resolved), and again once it exists.
    const planned = await realTarget(folder);
    if (!planned.ok) return err(`the bag folder ${folder}: ${planned.error}`);
    if (!within(realRoot, planned.value) || planned.value === realRoot) return outside(planned.value);
    await mkdir(folder, { recursive: true });
    const real = await realpath(folder);
    if (!within(realRoot, real) || real === realRoot) return outside(real);
    return ok(real);
  } catch (e) {
    return err(`cannot create the bag folder ${folder}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}
