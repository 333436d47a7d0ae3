/**
 * Replacing a file whole, so that a reader (or a restart after a crash) finds either the old file or the new one,
 * never a part: the text goes to a new file beside it, is flushed to the disk (fsync), renamed over the old one, and
 * the folder is flushed so the rename itself lasts. A failure at any step leaves the old file as it was.
 */
import { randomBytes } from 'node:crypto';
import { open, rename, unlink } from 'node:fs/promises';
import path from 'node:path';

/** The file-system steps of a replacement (tests inject a rename that fails). */
export interface AtomicFs {
  readonly rename: (from: string, to: string) => Promise<void>;
}

const NODE_FS: AtomicFs = { rename };

/** Writes `text` to `file` atomically (see the module comment); throws with the step that failed. */
export async function replaceFile(file: string, text: string, fs: AtomicFs = NODE_FS): Promise<void> {
  const dir = path.dirname(file);
  const temp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const handle = await open(temp, 'wx', 0o644);
  try {
    try {
      await handle.writeFile(text, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.rename(temp, file);
  } catch (e) {
    await unlink(temp).catch(() => undefined);
    throw e;
  }
  // The rename is in the folder's entries: flushed so that it survives a power cut. Not every platform can open a
  // folder for that (Windows): there the rename is as durable as the platform makes it.
  const folder = await open(dir, 'r').catch(() => undefined);
  if (folder) {
    try {
      await folder.sync().catch(() => undefined);
    } finally {
      await folder.close();
    }
  }
}
