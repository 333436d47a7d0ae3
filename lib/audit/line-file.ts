/**
 * An append-only file of lines written in groups: whatever is queued when the writer is free goes out in one write and
 * one datasync (at most {@link GROUP_MAX_BYTES} per group), so a burst costs one sync, not one per line. The queue is
 * bounded ({@link QUEUE_MAX_BYTES}): a line beyond it is dropped and counted, and the next group begins with a line
 * saying how many were dropped. The file is rotated before a line would take it past `maxBytes`: `<path>` becomes
 * `<path>.1`, the older ones move up one, {@link ROTATED_KEPT} are kept. A file found ending in part of a line (the
 * process was killed in the middle of a write) is cut back to its last whole line when it is opened, and a line says
 * how many bytes were cut: every line of the file stays whole.
 */
import { type FileHandle, open, rename, stat } from 'node:fs/promises';

/** Rotated files kept beside the current one: `<path>.1` (newest) .. `<path>.<ROTATED_KEPT>`. */
export const ROTATED_KEPT = 5;
/** Most bytes waiting to be written; beyond, lines are dropped and counted. */
export const QUEUE_MAX_BYTES = 4 * 1024 * 1024;
/** Most bytes written (and synced) as one group. */
export const GROUP_MAX_BYTES = 1024 * 1024;

export interface LineFileOptions {
  readonly path: string;
  readonly maxBytes: number;
  /** The line written first when lines were dropped (`dropped`: how many since the last such line). */
  readonly droppedLine: (dropped: number) => string;
  /** The line written first when the file was found ending in part of a line (`bytes`: how many were cut). */
  readonly cutLine: (bytes: number) => string;
  /**
   * Called once per failure to write: the group is lost, its lines counted as dropped (the next group's first line
   * says how many); the writer goes on with the next group.
   */
  readonly onError: (error: unknown) => void;
}

/** One file of lines (see the module comment). */
export class LineFile {
  readonly #options: LineFileOptions;
  #handle: FileHandle | undefined;
  #size = 0;
  #queue: string[] = [];
  #queuedBytes = 0;
  #dropped = 0;
  #writing: Promise<void> | undefined;

  constructor(options: LineFileOptions) {
    this.#options = options;
  }

  /** Bytes waiting to be written (at most {@link QUEUE_MAX_BYTES}). */
  get queuedBytes(): number {
    return this.#queuedBytes;
  }

  /**
   * Opens the file now if it exists, not at the first line: a part line a crash left is cut at once (a failure is
   * `onError`'s). A file that does not exist is made by the first line, as before.
   */
  open(): void {
    if (this.#handle || this.#writing) return;
    this.#writing = exists(this.#options.path)
      .then((found) => (found ? this.#open() : undefined))
      .catch((e: unknown) => {
        this.#handle = undefined;
        this.#options.onError(e);
      })
      .finally(() => {
        this.#writing = this.#queue.length > 0 || this.#dropped > 0 ? this.#drain() : undefined;
      });
  }

  /** Queues a line (ending with a newline); dropped and counted when the queue is full. */
  append(line: string): void {
    const bytes = Buffer.byteLength(line);
    if (this.#queuedBytes + bytes > QUEUE_MAX_BYTES) {
      this.#dropped++;
      return;
    }
    this.#queue.push(line);
    this.#queuedBytes += bytes;
    this.#writing ??= this.#drain();
  }

  /** Resolves once every line queued so far is written and synced (or its group failed). */
  async flush(): Promise<void> {
    while (this.#writing) await this.#writing;
  }

  /** Writes what is queued and closes the file. */
  async close(): Promise<void> {
    await this.flush();
    await this.#handle?.close();
    this.#handle = undefined;
  }

  async #drain(): Promise<void> {
    // After a failed group, a count of lost lines alone is not written again by this drain (no retry loop): the next
    // group, of this drain or of the next line's, begins with it.
    let failed = false;
    try {
      while (this.#queue.length > 0 || (this.#dropped > 0 && !failed)) {
        const group: string[] = [];
        const carried = this.#dropped;
        if (this.#dropped > 0) {
          group.push(this.#options.droppedLine(this.#dropped));
          this.#dropped = 0;
        }
        let bytes = 0;
        while (this.#queue.length > 0 && (group.length === 0 || bytes < GROUP_MAX_BYTES)) {
          const line = this.#queue.shift() as string;
          const size = Buffer.byteLength(line);
          this.#queuedBytes -= size;
          bytes += size;
          group.push(line);
        }
        try {
          await this.#write(group);
        } catch (e) {
          await this.#handle?.close().catch(() => {});
          this.#handle = undefined;
          this.#options.onError(e);
          // The group is lost: its lines (and the count it carried) are counted as dropped, said by the next group.
          this.#dropped += carried + group.length - (carried > 0 ? 1 : 0);
          failed = true;
        }
      }
    } finally {
      this.#writing = undefined;
    }
  }

  /** Writes a group: one write and one datasync per file it goes to (a rotation in between ends a file). */
  async #write(group: readonly string[]): Promise<void> {
    if (!this.#handle) await this.#open();
    let chunk = '';
    let chunkBytes = 0;
    for (const line of group) {
      const bytes = Buffer.byteLength(line);
      if (this.#size + chunkBytes > 0 && this.#size + chunkBytes + bytes > this.#options.maxBytes) {
        await this.#put(chunk, chunkBytes);
        chunk = '';
        chunkBytes = 0;
        await this.#rotate();
      }
      chunk += line;
      chunkBytes += bytes;
    }
    await this.#put(chunk, chunkBytes);
  }

  async #put(text: string, bytes: number): Promise<void> {
    if (bytes === 0) return;
    const handle = this.#handle as FileHandle;
    await handle.appendFile(text);
    await handle.datasync();
    this.#size += bytes;
  }

  async #open(): Promise<void> {
    const handle = await open(this.#options.path, 'a+', 0o600);
    this.#handle = handle;
    const size = (await handle.stat()).size;
    const whole = await wholeLinesEnd(handle, size);
    this.#size = whole;
    if (whole === size) return;
    // A whole line but its newline (the write cut short just before it) is kept: a record is not thrown away.
    if (await endsInWholeRecord(handle, whole, size)) {
      this.#size = size;
      return this.#put('\n', 1);
    }
    await handle.truncate(whole);
    const line = this.#options.cutLine(size - whole);
    await this.#put(line, Buffer.byteLength(line));
  }

  /** `<path>` becomes `<path>.1`, the older ones move up one, the oldest beyond {@link ROTATED_KEPT} is replaced. */
  async #rotate(): Promise<void> {
    await this.#handle?.close();
    this.#handle = undefined;
    const base = this.#options.path;
    for (let k = ROTATED_KEPT - 1; k >= 1; k--) {
      const from = `${base}.${k}`;
      if (await exists(from)) await rename(from, `${base}.${k + 1}`);
    }
    await rename(base, `${base}.1`);
    await this.#open();
  }
}

/** Bytes read at a time looking back for the last newline. */
const TAIL_CHUNK = 4096;

/** Where the file's last whole line ends: `size` when it ends with a newline (or is empty). */
async function wholeLinesEnd(handle: FileHandle, size: number): Promise<number> {
  const chunk = Buffer.alloc(TAIL_CHUNK);
  for (let end = size; end > 0; end -= TAIL_CHUNK) {
    const start = Math.max(0, end - TAIL_CHUNK);
    const { bytesRead } = await handle.read(chunk, 0, end - start, start);
    const newline = chunk.subarray(0, bytesRead).lastIndexOf(10);
    if (newline >= 0) return start + newline + 1;
  }
  return 0;
}

/** Longest part line looked at for a whole record without its newline (a line of the trail is far shorter). */
const RECORD_MAX_BYTES = 64 * 1024;

/** True when the bytes from `from` to `size` are one JSON object: a line of the trail but its newline. */
async function endsInWholeRecord(handle: FileHandle, from: number, size: number): Promise<boolean> {
  if (size - from > RECORD_MAX_BYTES) return false;
  const tail = Buffer.alloc(size - from);
  await handle.read(tail, 0, tail.length, from);
  try {
    const value: unknown = JSON.parse(tail.toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}

async function exists(file: string): Promise<boolean> {
  try {
    await stat(file);
    return true;
  } catch {
    return false;
  }
}
