/**
 * Reads an MCAP file that may be cut short (a killed recorder: no summary, no footer, maybe a partial
 * last record) with @mcap/core's McapStreamReader, CRCs checked, decoding each message with its
 * ros2msg schema. Independent of lib/bag.
 */
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse as parseDefinition } from '@foxglove/rosmsg';
import { MessageReader } from '@foxglove/rosmsg2-serialization';
import { McapStreamReader } from '@mcap/core';
import type { BagMessage } from './bag.ts';

export interface StreamedBag {
  /** Records read, by type, in file order. */
  readonly recordTypes: string[];
  readonly topics: string[];
  readonly messages: BagMessage[];
  /** True when the reader reached the end magic (a closed file). */
  readonly complete: boolean;
  /** Bytes after the last whole record (a record cut short by the kill). */
  readonly leftoverBytes: number;
}

/** Streams `bytes` as far as whole records go. */
export function streamMcap(bytes: Uint8Array): StreamedBag {
  const reader = new McapStreamReader({ validateCrcs: true });
  reader.append(bytes);
  const decoders = new Map<number, MessageReader>();
  const channels = new Map<number, { topic: string; schemaId: number }>();
  const recordTypes: string[] = [];
  const messages: BagMessage[] = [];
  for (let record = reader.nextRecord(); record; record = reader.nextRecord()) {
    recordTypes.push(record.type);
    if (record.type === 'Schema')
      decoders.set(
        record.id,
        new MessageReader(parseDefinition(new TextDecoder().decode(record.data), { ros2: true })),
      );
    else if (record.type === 'Channel') channels.set(record.id, { topic: record.topic, schemaId: record.schemaId });
    else if (record.type === 'Message') {
      const channel = channels.get(record.channelId);
      const decoder = channel && decoders.get(channel.schemaId);
      assert.ok(channel && decoder, `message on channel ${record.channelId} before its channel and schema`);
      messages.push({ topic: channel.topic, logTimeNs: record.logTime, decoded: decoder.readMessage(record.data) });
    }
  }
  return {
    recordTypes,
    topics: [...channels.values()].map((c) => c.topic),
    messages,
    complete: reader.done(),
    leftoverBytes: reader.bytesRemaining(),
  };
}

/** Streams `<folder>/*.mcap`. */
export async function streamBagFolder(folder: string): Promise<StreamedBag & { files: string[] }> {
  const files = (await readdir(folder)).sort();
  const mcapFile = files.find((f) => f.endsWith('.mcap'));
  assert.ok(mcapFile, `no .mcap file in ${folder}: ${files.join(', ')}`);
  return { ...streamMcap(new Uint8Array(await readFile(path.join(folder, mcapFile)))), files };
}
