/**
 * The bytes of an uploaded file, taken in as they arrive into one buffer of its own: no list of chunks joined at the
 * end and no copy afterwards (a 10 MiB file joined and copied in one turn of the event loop held it for tens of ms,
 * and every upload left three 10 MiB buffers for the garbage collector). The buffer is allocated once at the size
 * the request announced (at most the file limit), or grows by doubling when it announced none; the bytes end in an
 * ArrayBuffer that nothing else shares, so that it can be handed to a worker thread as it is.
 */

/** The first size of a buffer for a body that announced no length (chunked). */
const FIRST_BYTES = 64 * 1024;

/**
 * `size` bytes in an ArrayBuffer of their own, not zeroed: a zeroed 10 MiB buffer cost 2-5 ms of memset in the turn an
 * upload's file began (glibc serves it from the heap once a freed one has raised its mmap threshold), and 16 uploads
 * beginning in one turn held the loop that long 16 times over (issue 37). The bytes past those appended are never
 * read: {@link UploadBuffer.bytes} is a view of the appended ones.
 */
const ownBytes = (size: number): Uint8Array => Buffer.allocUnsafeSlow(size);

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
      this.#bytes = grown;
    }
    this.#bytes.set(chunk, this.#length);
    this.#length = needed;
    return true;
  }

  /** The bytes taken: a view from offset 0 of the buffer's own ArrayBuffer (which may be longer). */
  bytes(): Uint8Array {
    return this.#bytes.subarray(0, this.#length);
  }
}
