/**
 * Reads a rosbag2 (MCAP storage) folder back with real readers: @mcap/core's indexed reader (which
 * needs a complete summary, i.e. a closed bag), @foxglove/rosmsg's ROS 2 .msg parser and
 * @foxglove/rosmsg2-serialization's CDR reader. Independent of lib/bag.
 */
import assert from 'node:assert/strict';
import { open, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse as parseDefinition } from '@foxglove/rosmsg';
import { MessageReader } from '@foxglove/rosmsg2-serialization';
import { McapIndexedReader, McapStreamReader } from '@mcap/core';
import { parse as parseYaml } from 'yaml';

export interface BagChannel {
  readonly topic: string;
  readonly schemaName: string;
  readonly schemaEncoding: string;
  readonly messageEncoding: string;
  /** The channel record's metadata (rosbag2 puts offered_qos_profiles here). */
  readonly metadata: ReadonlyMap<string, string>;
}

export interface BagMessage {
  readonly topic: string;
  readonly logTimeNs: bigint;
  readonly decoded: unknown;
}

export interface BagContents {
  readonly files: string[];
  readonly mcapFile: string;
  readonly profile: string;
  readonly channels: BagChannel[];
  readonly messages: BagMessage[];
  /** The MCAP file's metadata records: name and key/value pairs. */
  readonly records: { readonly name: string; readonly metadata: ReadonlyMap<string, string> }[];
  /** metadata.yaml's rosbag2_bagfile_information. */
  readonly metadata: {
    message_count: number;
    storage_identifier: string;
    topics_with_message_count: {
      topic_metadata: { name: string; type: string; serialization_format: string; offered_qos_profiles: string };
      message_count: number;
    }[];
  };
}

/** Opens `<folder>/*.mcap` with McapIndexedReader, decodes every message with its ros2msg schema, and parses metadata.yaml. */
export async function readBag(folder: string): Promise<BagContents> {
  const files = (await readdir(folder)).sort();
  const mcapFile = files.find((f) => f.endsWith('.mcap'));
  assert.ok(mcapFile, `no .mcap file in ${folder}: ${files.join(', ')}`);
  assert.ok(files.includes('metadata.yaml'), `no metadata.yaml in ${folder}: ${files.join(', ')}`);
  const handle = await open(path.join(folder, mcapFile));
  try {
    const size = BigInt((await handle.stat()).size);
    const reader = await McapIndexedReader.Initialize({
      readable: {
        size: async () => size,
        read: async (offset: bigint, length: bigint) => {
          const buffer = new Uint8Array(Number(length));
          const { bytesRead } = await handle.read(buffer, 0, Number(length), Number(offset));
          assert.equal(bytesRead, Number(length), 'short read from the .mcap file');
          return buffer;
        },
      },
    });
    const decoders = new Map<number, MessageReader>();
    const channels: BagChannel[] = [];
    for (const channel of reader.channelsById.values()) {
      const schema = reader.schemasById.get(channel.schemaId);
      assert.ok(schema, `channel ${channel.topic} has no schema`);
      channels.push({
        topic: channel.topic,
        schemaName: schema.name,
        schemaEncoding: schema.encoding,
        messageEncoding: channel.messageEncoding,
        metadata: channel.metadata,
      });
      decoders.set(
        channel.id,
        new MessageReader(parseDefinition(new TextDecoder().decode(schema.data), { ros2: true })),
      );
    }
    const messages: BagMessage[] = [];
    for await (const message of reader.readMessages()) {
      const channel = reader.channelsById.get(message.channelId);
      const decoder = decoders.get(message.channelId);
      assert.ok(channel && decoder);
      messages.push({ topic: channel.topic, logTimeNs: message.logTime, decoded: decoder.readMessage(message.data) });
    }
    const records: BagContents['records'] = [];
    for await (const record of reader.readMetadata()) records.push({ name: record.name, metadata: record.metadata });
    const metadata = (
      parseYaml(await readFile(path.join(folder, 'metadata.yaml'), 'utf8')) as {
        rosbag2_bagfile_information: BagContents['metadata'];
      }
    ).rosbag2_bagfile_information;
    return { files, mcapFile, profile: reader.header.profile, channels, messages, records, metadata };
  } finally {
    await handle.close();
  }
}

/** Streams the whole .mcap file through McapStreamReader (checks the record framing end to end, magic included); returns the record count. */
export async function streamRecords(file: string): Promise<number> {
  const reader = new McapStreamReader({ validateCrcs: true });
  reader.append(new Uint8Array(await readFile(file)));
  let count = 0;
  let sawFooter = false;
  for (let record = reader.nextRecord(); record; record = reader.nextRecord()) {
    count++;
    if (record.type === 'Footer') sawFooter = true;
  }
  assert.ok(reader.done(), 'the stream reader did not reach the end magic');
  assert.ok(sawFooter, 'no footer record');
  return count;
}

/** Asserts a decoded message is a sensor_msgs/msg/JointState with 7 names and finite positions. */
export function assertJointState(decoded: unknown): void {
  const msg = decoded as { header?: { stamp?: { sec?: number } }; name?: string[]; position?: ArrayLike<number> };
  assert.deepEqual(msg.name, ['joint1', 'joint2', 'joint3', 'joint4', 'joint5', 'joint6', 'joint7']);
  assert.ok(msg.position && msg.position.length === 7, 'seven positions');
  assert.ok(Array.from(msg.position).every(Number.isFinite), 'finite positions');
  assert.equal(typeof msg.header?.stamp?.sec, 'number');
}
