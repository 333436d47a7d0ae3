/**
 * The large upload buffers, kept for the next uploads while uploads keep coming (issue 37, uploads). A 10 MiB upload's
 * buffer is mapped on its own (lib/http/upload-buffer.ts: 32 MiB + 4 KiB, so that glibc gives it back to the system
 * once freed); a new one for every upload cost the event loop twice:
 * - V8 counts each new ArrayBuffer's length against its young generation's external memory, and past 32 MiB there it
 *   scavenges at every ArrayBuffer allocated (every socket chunk) until the buffer is promoted: 16 uploads in a loop
 *   ran 60-70 scavenges of 10-38 ms each for "external memory pressure" in a few seconds;
 * - each page of a fresh mapping faults on its first write, as the chunks are copied in (about 11 ms per 10 MiB).
 * A buffer taken from here was promoted and written before: neither happens again. The buffers come back when the
 * upload is done with ({@link giveBackUploadBuffer}: the CSV handler once its call ends, the trajectory checker's
 * thread with its answer, the multipart reader when it refuses a file); a buffer never given back is collected as
 * before. At most {@link POOL_MAX} are kept, and all are let go once no upload has taken or given back one for
 * {@link POOL_IDLE_MS}: collected then, their memory goes back to the system (tests/server/uploads-memory.test.ts).
 */

/** More than glibc's DEFAULT_MMAP_THRESHOLD_MAX (32 MiB): such a block is always mmapped and never raises the threshold. */
export const ALWAYS_MAPPED = 32 * 1024 * 1024 + 4096;

/** Most buffers kept: web.limits.max_uploads by default (uploads received at once, each holding one). */
export const POOL_MAX = 16;

/** Buffers kept are let go after this long without an upload taking or giving back one (ms). */
export const POOL_IDLE_MS = 500;

const kept: ArrayBuffer[] = [];
let lastUseMs = 0;
let idleTimer: ReturnType<typeof setTimeout> | undefined;

/** Lets the buffers kept go once the pool has been idle for {@link POOL_IDLE_MS}; checks again until then. */
function watchIdle(): void {
  lastUseMs = performance.now();
  if (idleTimer || kept.length === 0) return;
  const check = () => {
    const idleMs = performance.now() - lastUseMs;
    if (kept.length > 0 && idleMs < POOL_IDLE_MS) {
      idleTimer = setTimeout(check, POOL_IDLE_MS - idleMs);
      idleTimer.unref();
      return;
    }
    idleTimer = undefined;
    kept.length = 0;
  };
  idleTimer = setTimeout(check, POOL_IDLE_MS);
  idleTimer.unref();
}

/** A mapped buffer of {@link ALWAYS_MAPPED} bytes, not zeroed: one kept if there is one, else a new one. */
export function takeUploadBuffer(): ArrayBuffer {
  const buffer = kept.pop() ?? (Buffer.allocUnsafeSlow(ALWAYS_MAPPED).buffer as ArrayBuffer);
  watchIdle();
  return buffer;
}

/**
 * Gives back a buffer {@link takeUploadBuffer} gave (a view of it, or the buffer as a worker thread sent it back): kept
 * for the next upload. Nothing else may hold it afterwards. Anything else (a smaller buffer, one handed to a worker
 * and so detached here) is left to the collector.
 */
export function giveBackUploadBuffer(bytes: ArrayBuffer | Uint8Array): void {
  const buffer = bytes instanceof Uint8Array ? (bytes.buffer as ArrayBuffer) : bytes;
  if (buffer.byteLength !== ALWAYS_MAPPED || kept.length >= POOL_MAX || kept.includes(buffer)) return;
  kept.push(buffer);
  watchIdle();
}

/** How many buffers are kept now (tests). */
export function keptUploadBuffers(): number {
  return kept.length;
}
