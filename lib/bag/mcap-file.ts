/**
 * An MCAP writer whose chunks can be closed on demand, built on @mcap/core's record and chunk
 * builders. @mcap/core's McapWriter closes a chunk only when it outgrows its size, so at a low rate a
 * recording would stay in memory until end(), and a killed process would leave a file with no
 * message in it; here {@link ChunkedMcapWriter.flush} writes the open chunk through at any time.
 *
 * Layout: magic, header, every schema and channel (outside chunks, as soon as registered, so a file
 * cut short still names its channels), uncompressed chunks each followed by its message indexes,
 * metadata records (outside chunks), data end (with the data section CRC), summary (schemas,
 * channels, statistics, metadata and chunk indexes, summary offsets), footer (with the summary CRC), magic. Every part is written with one write()
 * call, so a file cut short ends in at most one partial record, which a stream reader leaves unread.
 *
 * Calls must not overlap: the caller awaits each one (Rosbag2Writer queues them).
 */
import type { FileHandle } from 'node:fs/promises';
import { McapChunkBuilder, McapRecordBuilder, Opcode } from '@mcap/core';
import type {
  Channel,
  ChunkIndex,
  Header,
  IWritable,
  Message,
  Metadata,
  MetadataIndex,
  Schema,
  Statistics,
  SummaryOffset,
} from '@mcap/core';
import { CRC32_INIT, crc32, crc32Final, crc32Update } from './crc32.ts';

/** Sequential writes to a file handle, tracking the position the MCAP writer asks for. */
export class FileWritable implements IWritable {
  readonly #handle: FileHandle;
  #position = 0n;

  constructor(handle: FileHandle) {
    this.#handle = handle;
  }

  async write(buffer: Uint8Array): Promise<void> {
    let offset = 0;
    while (offset < buffer.byteLength) {
      const { bytesWritten } = await this.#handle.write(buffer, offset, buffer.byteLength - offset);
      offset += bytesWritten;
    }
    this.#position += BigInt(buffer.byteLength);
  }

  position(): bigint {
    return this.#position;
  }
}

/** Writes one MCAP file to `out`: start(), register schemas and channels, add messages, end(). */
export class ChunkedMcapWriter {
  readonly #out: IWritable;
  readonly #chunkSize: number;
  readonly #records = new McapRecordBuilder();
  readonly #chunk = new McapChunkBuilder({ useMessageIndex: true });
  readonly #schemas: Schema[] = [];
  readonly #channels: Channel[] = [];
  readonly #chunkIndexes: ChunkIndex[] = [];
  readonly #metadataIndexes: MetadataIndex[] = [];
  readonly #statistics: Statistics = {
    messageCount: 0n,
    schemaCount: 0,
    channelCount: 0,
    attachmentCount: 0,
    metadataCount: 0,
    chunkCount: 0,
    messageStartTime: 0n,
    messageEndTime: 0n,
    channelMessageCounts: new Map(),
  };
  /** Running CRC of the data section (magic up to, not including, the data end record). */
  #dataCrc = CRC32_INIT;

  /** A chunk is closed once its records reach `chunkSizeBytes`, or on {@link flush}. */
  constructor(out: IWritable, chunkSizeBytes: number) {
    this.#out = out;
    this.#chunkSize = chunkSizeBytes;
  }

  /** Messages added since the last chunk was written. */
  get pendingMessages(): number {
    return this.#chunk.numMessages;
  }

  /** Writes the magic and the header. */
  async start(header: Header): Promise<void> {
    this.#records.writeMagic();
    this.#records.writeHeader(header);
    await this.#emit(true);
  }

  /** Writes a schema record; returns its id (from 1). */
  async registerSchema(info: Omit<Schema, 'id'>): Promise<number> {
    const schema = { ...info, id: this.#schemas.length + 1 };
    this.#schemas.push(schema);
    this.#statistics.schemaCount += 1;
    this.#records.writeSchema(schema);
    await this.#emit(true);
    return schema.id;
  }

  /** Writes a channel record; returns its id (from 0). */
  async registerChannel(info: Omit<Channel, 'id'>): Promise<number> {
    const channel = { ...info, id: this.#channels.length };
    this.#channels.push(channel);
    this.#statistics.channelCount += 1;
    this.#records.writeChannel(channel);
    await this.#emit(true);
    return channel.id;
  }

  /** Adds a message of a registered channel to the open chunk; writes the chunk once it is full. */
  async addMessage(message: Message): Promise<void> {
    if (message.channelId < 0 || message.channelId >= this.#channels.length)
      throw new Error(`no channel ${message.channelId} in this MCAP file`);
    const stats = this.#statistics;
    if (stats.messageCount === 0n || message.logTime < stats.messageStartTime) stats.messageStartTime = message.logTime;
    if (stats.messageCount === 0n || message.logTime > stats.messageEndTime) stats.messageEndTime = message.logTime;
    stats.messageCount += 1n;
    stats.channelMessageCounts.set(message.channelId, (stats.channelMessageCounts.get(message.channelId) ?? 0n) + 1n);
    this.#chunk.addMessage(message);
    if (this.#chunk.byteLength >= this.#chunkSize) await this.flush();
  }

  /** Writes the open chunk, then a metadata record (name and string pairs), indexed in the summary. */
  async addMetadata(metadata: Metadata): Promise<void> {
    await this.flush();
    const offset = this.#out.position();
    const length = this.#records.writeMetadata(metadata);
    this.#metadataIndexes.push({ offset, length, name: metadata.name });
    this.#statistics.metadataCount += 1;
    await this.#emit(true);
  }

  /** Writes the open chunk and its message indexes to the file (nothing when it holds no message). */
  async flush(): Promise<void> {
    const chunk = this.#chunk;
    if (chunk.numMessages === 0) return;
    const data = chunk.buffer;
    const chunkStartOffset = this.#out.position();
    const chunkLength = this.#records.writeChunk({
      messageStartTime: chunk.messageStartTime,
      messageEndTime: chunk.messageEndTime,
      uncompressedSize: BigInt(data.byteLength),
      uncompressedCrc: crc32(data),
      compression: '',
      records: data,
    });
    const messageIndexOffsets = new Map<number, bigint>();
    let messageIndexLength = 0n;
    for (const index of chunk.indices) {
      if (index.records.length === 0) continue;
      messageIndexOffsets.set(index.channelId, chunkStartOffset + chunkLength + messageIndexLength);
      messageIndexLength += this.#records.writeMessageIndex(index);
    }
    this.#chunkIndexes.push({
      messageStartTime: chunk.messageStartTime,
      messageEndTime: chunk.messageEndTime,
      chunkStartOffset,
      chunkLength,
      messageIndexOffsets,
      messageIndexLength,
      compression: '',
      compressedSize: BigInt(data.byteLength),
      uncompressedSize: BigInt(data.byteLength),
    });
    this.#statistics.chunkCount += 1;
    chunk.reset();
    await this.#emit(true);
  }

  /** Writes the open chunk, the data end, the summary and the footer. The writer is done afterwards. */
  async end(): Promise<void> {
    await this.flush();
    this.#records.writeDataEnd({ dataSectionCrc: crc32Final(this.#dataCrc) });
    await this.#emit(false);
    const summaryStart = this.#out.position();
    const offsets: SummaryOffset[] = [];
    const group = (groupOpcode: number, write: () => bigint) => {
      const groupStart = summaryStart + BigInt(this.#records.length);
      const groupLength = write();
      if (groupLength > 0n) offsets.push({ groupOpcode, groupStart, groupLength });
    };
    const sum = <T>(items: readonly T[], write: (item: T) => bigint) =>
      items.reduce((length, item) => length + write(item), 0n);
    group(Opcode.SCHEMA, () => sum(this.#schemas, (s) => this.#records.writeSchema(s)));
    group(Opcode.CHANNEL, () => sum(this.#channels, (c) => this.#records.writeChannel(c)));
    group(Opcode.STATISTICS, () => this.#records.writeStatistics(this.#statistics));
    group(Opcode.METADATA_INDEX, () => sum(this.#metadataIndexes, (m) => this.#records.writeMetadataIndex(m)));
    group(Opcode.CHUNK_INDEX, () => sum(this.#chunkIndexes, (c) => this.#records.writeChunkIndex(c)));
    const summaryOffsetStart = summaryStart + BigInt(this.#records.length);
    for (const offset of offsets) this.#records.writeSummaryOffset(offset);
    // The summary CRC covers the summary and the footer up to its CRC field.
    const footerStart = new DataView(new ArrayBuffer(1 + 8 + 8 + 8));
    footerStart.setUint8(0, Opcode.FOOTER);
    footerStart.setBigUint64(1, 8n + 8n + 4n, true);
    footerStart.setBigUint64(9, summaryStart, true);
    footerStart.setBigUint64(17, summaryOffsetStart, true);
    const summaryCrc = crc32Final(
      crc32Update(crc32Update(CRC32_INIT, this.#records.buffer), new Uint8Array(footerStart.buffer)),
    );
    this.#records.writeFooter({ summaryStart, summaryOffsetStart, summaryCrc });
    this.#records.writeMagic();
    await this.#emit(false);
  }

  /** Writes the records built so far in one call (adding them to the data section CRC when `data`). */
  async #emit(data: boolean): Promise<void> {
    const bytes = this.#records.buffer;
    if (data) this.#dataCrc = crc32Update(this.#dataCrc, bytes);
    try {
      await this.#out.write(bytes);
    } finally {
      this.#records.reset();
    }
  }
}
