/**
 * The bytes of an uploaded file, taken in as they arrive into one buffer of its own: no list of chunks joined at the
 * end and no copy afterwards (a 10 MiB file joined and copied in one turn of the event loop held it for tens of ms,
 * and every upload left three 10 MiB buffers for the garbage collector). The buffer is allocated once at the size
 * the request announced (at most the file limit), or grows by doubling when it announced none; the bytes end in an
 * ArrayBuffer that nothing else shares, so that it can be handed to a worker thread as it is. Its memory goes back to
 * the system once it is collected (see ownBytes).
 */
import { ALWAYS_MAPPED, giveBackUploadBuffer, takeUploadBuffer } from '../body/upload-pool.ts';

/** The first size of a buffer for a body that announced no length (chunked). */
const FIRST_BYTES = 64 * 1024;

/**
 * `size` bytes in an ArrayBuffer of their own, not zeroed: a zeroed 10 MiB buffer cost 2-5 ms of memset in the turn an
 * upload's file began, and 16 uploads beginning in one turn held the loop that long 16 times over (issue 37). The bytes
 * past those appended are never read: {@link UploadBuffer.bytes} is a view of the appended ones.
 *
 * A buffer of a MiB or more is a mapped one of {@link ALWAYS_MAPPED} bytes (lib/body/upload-pool.ts), above glibc's
 * largest mmap threshold (32 MiB on 64 bits): malloc maps it on its own and unmaps it when it is freed, so that its
 * memory goes back to the system. A 10 MiB one was served from the heap once the first freed had raised the threshold
 * to its size, and kept there when freed: 16 uploads at once left the server's RSS about 160 MB higher for good, a
 * long-lived server climbed to 825 MB (tests/server/uploads-memory.test.ts, docs/benchmarks.md). Only the pages
 * written are resident. The pool keeps such buffers for the next uploads while uploads keep coming, written and
 * promoted already (a new one costs the loop its pages' first writes and scavenges for V8's external memory).
 */
const ownBytes = (size: number): Uint8Array =>
  size >= MAPPED_FROM && size <= ALWAYS_MAPPED ? new Uint8Array(takeUploadBuffer()) : Buffer.allocUnsafeSlow(size);
/** Buffers of this size or more are mapped on their own (below it, malloc's heap serves them as before). */
const MAPPED_FROM = 1024 * 1024;

export class UploadBuffer {
  #bytes: Uint8Array;
  #length = 0;
  readonly #maxBytes: number;

  /** `expectedBytes`: what the request announced (0 when nothing), `maxBytes`: the file limit. */
  constructor(expectedBytes: number, maxBytes: number) {
    this.#maxBytes = maxBytes;
    const first = expectedBytes > 0 ? expectedBytes : FIRST_BYTES;
    this.#bytes = ownBytes(Math.max(1, Math.min(first, maxBytes)));
  }

  /** Appends a chunk; false when the file would exceed the limit (nothing is taken then). */
  append(chunk: Uint8Array): boolean {
    const needed = this.#length + chunk.byteLength;
    if (needed > this.#maxBytes) return false;
    if (needed > this.#bytes.byteLength) {
      const grown = ownBytes(Math.min(this.#maxBytes, Math.max(needed, this.#bytes.byteLength * 2)));
      grown.set(this.#bytes.subarray(0, this.#length));
      giveBackUploadBuffer(this.#bytes);
      this.#bytes = grown;
    }
    this.#bytes.set(chunk, this.#length);
    this.#length = needed;
    return true;
  }

  /** How many bytes were taken. */
  get length(): number {
    return this.#length;
  }

  /** The bytes taken: a view from offset 0 of the buffer's own ArrayBuffer (which may be longer). */
  bytes(): Uint8Array {
    return this.#bytes.subarray(0, this.#length);
  }

  /** Gives the buffer back for the next upload (a refused file): nothing may be appended or read afterwards. */
  release(): void {
    giveBackUploadBuffer(this.#bytes);
    this.#bytes = new Uint8Array(0);
    this.#length = 0;
  }
}
