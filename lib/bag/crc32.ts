/**
 * CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320), as MCAP uses for chunk, data section and
 * summary checksums. Incremental: start with {@link CRC32_INIT}, feed bytes with {@link crc32Update},
 * finish with {@link crc32Final}.
 */

const TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** The running value before any byte. */
export const CRC32_INIT = 0xffffffff;

/** Feeds `data` into the running value `crc`; returns the new running value. */
export function crc32Update(crc: number, data: Uint8Array): number {
  let c = crc;
  for (let i = 0; i < data.length; i++) c = (TABLE[(c ^ (data[i] as number)) & 0xff] as number) ^ (c >>> 8);
  return c >>> 0;
}

/** The checksum of everything fed into the running value `crc`. */
export function crc32Final(crc: number): number {
  return (crc ^ 0xffffffff) >>> 0;
}

/** The CRC-32 of `data`. */
export function crc32(data: Uint8Array): number {
  return crc32Final(crc32Update(CRC32_INIT, data));
}
