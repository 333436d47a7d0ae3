import assert from 'node:assert/strict';
import { mkdir, mkdtemp, open, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse as parseMsg } from '@foxglove/rosmsg';
import { MessageReader } from '@foxglove/rosmsg2-serialization';
import { McapIndexedReader, McapStreamReader } from '@mcap/core';
import type { TypedMcapRecord } from '@mcap/core';
import { parse as parseYaml } from 'yaml';
import { Rosbag2Writer } from '../../lib/bag/writer.ts';
import type { BagTopic } from '../../lib/bag/writer.ts';
import type { JointStateMsg, JointTrajectoryMsg, TimeMsg } from '../../lib/ros/messages.ts';
import { JOINTS } from '../support/arm.ts';

const TOPICS: readonly BagTopic[] = [
  { name: '/joint_states', type: 'sensor_msgs/msg/JointState' },
  { name: '/arm_controller/joint_trajectory', type: 'trajectory_msgs/msg/JointTrajectory' },
];
const T0 = 1_718_000_000_123_456_789n;

function stamp(ns: bigint): TimeMsg {
  return { sec: Number(ns / 1_000_000_000n), nanosec: Number(ns % 1_000_000_000n) };
}

function jointState(i: number, ns: bigint): JointStateMsg {
  const position = JOINTS.map((_, j) => Math.sin(i * 0.1 + j) * -1.5707963267948966 + j * 1e-12);
  return {
    header: { stamp: stamp(ns), frame_id: '' },
    name: [...JOINTS],
    position,
    velocity: i === 1 ? [] : JOINTS.map((_, j) => (j % 2 === 0 ? -0.1 - i : 0.1 + 0.2)),
    effort: i === 2 ? [-0, Number.MIN_VALUE, -Number.MAX_VALUE, 1e-300, 0, 0, 0] : [],
  };
}

const TRAJECTORY: JointTrajectoryMsg = {
  header: { stamp: stamp(T0 + 1_000_000n), frame_id: 'world' },
  joint_names: [...JOINTS],
  points: [
    {
      positions: [0, 0, 0, -1.57, 0, 1.57, 0],
      velocities: [],
      accelerations: [],
      effort: [],
      time_from_start: { sec: 0, nanosec: 0 },
    },
    {
      positions: [0.1, -0.25, 0, -1.5, 0, 1.6, -2.96],
      velocities: [0, 0, 0, 0, 0, 0, 0],
      accelerations: [-3.5, 0, 0, 0, 0, 0, 1e-9],
      effort: [],
      time_from_start: { sec: 1, nanosec: 500_000_000 },
    },
  ],
};
const EMPTY_TRAJECTORY: JointTrajectoryMsg = {
  header: { stamp: { sec: 0, nanosec: 0 }, frame_id: '' },
  joint_names: [],
  points: [],
};

interface Written {
  readonly topic: string;
  readonly message: unknown;
  readonly logTime: bigint;
}

/** Plain arrays instead of typed arrays, so decoded messages compare with what was written. */
function plain(value: unknown): unknown {
  if (ArrayBuffer.isView(value) && !(value instanceof DataView))
    return Array.from(value as unknown as ArrayLike<number>);
  if (Array.isArray(value)) return value.map(plain);
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
  return value;
}

function readerFor(schemaData: Uint8Array): MessageReader {
  return new MessageReader(parseMsg(new TextDecoder().decode(schemaData), { ros2: true }));
}

async function readIndexed(file: string): Promise<{
  reader: McapIndexedReader;
  messages: { topic: string; message: unknown; logTime: bigint; sequence: number }[];
}> {
  const handle = await open(file, 'r');
  try {
    const readable = {
      size: async () => BigInt((await handle.stat()).size),
      read: async (offset: bigint, size: bigint) => {
        const buffer = new Uint8Array(Number(size));
        let done = 0;
        while (done < buffer.byteLength) {
          const { bytesRead } = await handle.read(buffer, done, buffer.byteLength - done, Number(offset) + done);
          if (bytesRead === 0) throw new Error('short read');
          done += bytesRead;
        }
        return buffer;
      },
    };
    const reader = await McapIndexedReader.Initialize({ readable });
    const messages = [];
    for await (const record of reader.readMessages()) {
      const channel = reader.channelsById.get(record.channelId);
      const schema = channel && reader.schemasById.get(channel.schemaId);
      assert.ok(channel && schema);
      messages.push({
        topic: channel.topic,
        message: plain(readerFor(schema.data).readMessage(record.data)),
        logTime: record.logTime,
        sequence: record.sequence,
      });
    }
    return { reader, messages };
  } finally {
    await handle.close();
  }
}

function readStream(bytes: Uint8Array): TypedMcapRecord[] {
  const reader = new McapStreamReader();
  reader.append(bytes);
  const records: TypedMcapRecord[] = [];
  for (let record = reader.nextRecord(); record; record = reader.nextRecord()) records.push(record);
  assert.ok(reader.done(), 'stream reader reached the end magic');
  return records;
}

async function writeBag(folder: string, messages: readonly Written[]): Promise<Rosbag2Writer> {
  const writer = await Rosbag2Writer.open(folder, TOPICS);
  try {
    for (const { topic, message, logTime } of messages) await writer.write(topic, message, logTime);
  } finally {
    await writer.close();
  }
  return writer;
}

describe('Rosbag2Writer (rosbag2 bags in MCAP storage)', () => {
  let tmp: string;
  before(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'armgate-bag-'));
  });
  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  const written: Written[] = [];
  for (let i = 0; i < 5; i += 1) {
    const logTime = T0 + BigInt(i) * 10_000_000n;
    written.push({ topic: '/joint_states', message: jointState(i, logTime), logTime });
    if (i === 1)
      written.push({ topic: '/arm_controller/joint_trajectory', message: TRAJECTORY, logTime: logTime + 1_000_000n });
  }
  written.push({ topic: '/arm_controller/joint_trajectory', message: EMPTY_TRAJECTORY, logTime: T0 + 45_000_000n });
  const tEnd = T0 + 45_000_000n;

  it('writes a bag that the indexed reader decodes back to the written messages', async () => {
    const folder = path.join(tmp, 'run1');
    const writer = await writeBag(folder, written);
    assert.equal(writer.messageCount, written.length);
    assert.deepEqual((await readdir(folder)).sort(), ['metadata.yaml', 'run1_0.mcap']);

    const { reader, messages } = await readIndexed(path.join(folder, 'run1_0.mcap'));
    assert.equal(reader.header.profile, 'ros2');
    const schemas = [...reader.schemasById.values()].map((s) => [s.name, s.encoding]);
    assert.deepEqual(schemas.sort(), [
      ['sensor_msgs/msg/JointState', 'ros2msg'],
      ['trajectory_msgs/msg/JointTrajectory', 'ros2msg'],
    ]);
    const channels = [...reader.channelsById.values()];
    assert.deepEqual(
      channels.map((c) => [c.topic, c.messageEncoding, reader.schemasById.get(c.schemaId)?.name]),
      [
        ['/joint_states', 'cdr', 'sensor_msgs/msg/JointState'],
        ['/arm_controller/joint_trajectory', 'cdr', 'trajectory_msgs/msg/JointTrajectory'],
      ],
    );
    for (const c of channels)
      assert.match(c.metadata.get('offered_qos_profiles') ?? '', /^- history: 3\n {2}depth: 0\n {2}reliability: 1\n/);

    const stats = reader.statistics;
    assert.ok(stats);
    assert.equal(stats.messageCount, BigInt(written.length));
    assert.equal(stats.messageStartTime, T0);
    assert.equal(stats.messageEndTime, tEnd);
    assert.equal(stats.schemaCount, 2);
    assert.equal(stats.channelCount, 2);

    const byTime = [...written].sort((a, b) => (a.logTime < b.logTime ? -1 : a.logTime > b.logTime ? 1 : 0));
    assert.deepEqual(
      messages.map(({ topic, message, logTime }) => ({ topic, message, logTime })),
      byTime,
    );
  });

  it('writes a file the stream reader parses in write order, with valid CRCs', async () => {
    const folder = path.join(tmp, 'run2');
    await writeBag(folder, written);
    const records = readStream(await readFile(path.join(folder, 'run2_0.mcap')));
    assert.equal(records[0]?.type, 'Header');
    assert.equal(records.at(-1)?.type, 'Footer');
    const schemas = new Map<number, MessageReader>();
    const channels = new Map<number, { topic: string; schemaId: number }>();
    const decoded: Written[] = [];
    for (const record of records) {
      if (record.type === 'Schema') {
        assert.equal(record.encoding, 'ros2msg');
        schemas.set(record.id, readerFor(record.data));
      } else if (record.type === 'Channel') {
        assert.equal(record.messageEncoding, 'cdr');
        channels.set(record.id, { topic: record.topic, schemaId: record.schemaId });
      } else if (record.type === 'Message') {
        const channel = channels.get(record.channelId);
        const schemaReader = channel && schemas.get(channel.schemaId);
        assert.ok(channel && schemaReader, 'schema and channel come before their messages');
        assert.equal(record.publishTime, record.logTime);
        decoded.push({
          topic: channel.topic,
          message: plain(schemaReader.readMessage(record.data)),
          logTime: record.logTime,
        });
      }
    }
    assert.deepEqual(decoded, written);
  });

  it('writes metadata.yaml consistent with the MCAP file', async () => {
    const folder = path.join(tmp, 'run3');
    await writeBag(folder, written);
    const doc: unknown = parseYaml(await readFile(path.join(folder, 'metadata.yaml'), 'utf8'), { intAsBigInt: true });
    const info = (doc as { rosbag2_bagfile_information?: Record<string, unknown> }).rosbag2_bagfile_information;
    assert.ok(info);
    assert.equal(info.version, 5n);
    assert.equal(info.storage_identifier, 'mcap');
    assert.deepEqual(info.duration, { nanoseconds: tEnd - T0 });
    assert.deepEqual(info.starting_time, { nanoseconds_since_epoch: T0 });
    assert.equal(info.message_count, BigInt(written.length));
    assert.equal(info.compression_format, '');
    assert.equal(info.compression_mode, '');
    assert.deepEqual(info.relative_file_paths, ['run3_0.mcap']);
    assert.deepEqual(info.files, [
      {
        path: 'run3_0.mcap',
        starting_time: { nanoseconds_since_epoch: T0 },
        duration: { nanoseconds: tEnd - T0 },
        message_count: BigInt(written.length),
      },
    ]);
    const topics = info.topics_with_message_count as {
      topic_metadata: Record<string, unknown>;
      message_count: bigint;
    }[];
    assert.deepEqual(
      topics.map((t) => [
        t.topic_metadata.name,
        t.topic_metadata.type,
        t.topic_metadata.serialization_format,
        t.message_count,
      ]),
      [
        ['/joint_states', 'sensor_msgs/msg/JointState', 'cdr', 5n],
        ['/arm_controller/joint_trajectory', 'trajectory_msgs/msg/JointTrajectory', 'cdr', 2n],
      ],
    );
    for (const t of topics) {
      const qos = parseYaml(String(t.topic_metadata.offered_qos_profiles)) as Record<string, unknown>[];
      assert.equal(qos.length, 1);
      assert.deepEqual(qos[0]?.deadline, { sec: 9223372036, nsec: 854775807 });
      assert.equal(qos[0]?.reliability, 1);
    }
  });

  it('keeps concurrent write() calls in call order, across several chunks', async () => {
    const folder = path.join(tmp, 'concurrent');
    const count = 5000;
    const writer = await Rosbag2Writer.open(folder, TOPICS);
    const pending: Promise<void>[] = [];
    try {
      for (let i = 0; i < count; i += 1) {
        const logTime = T0 + BigInt(i) * 1_000_000n;
        pending.push(writer.write('/joint_states', jointState(i, logTime), logTime));
      }
      await Promise.all(pending);
    } finally {
      await writer.close();
    }
    assert.equal(writer.messageCount, count);
    const { reader, messages } = await readIndexed(path.join(folder, 'concurrent_0.mcap'));
    assert.ok((reader.statistics?.chunkCount ?? 0) >= 2, 'more than one chunk');
    assert.deepEqual(
      messages.map((m) => m.sequence),
      [...Array(count).keys()],
    );
    messages.forEach((m, i) => {
      const logTime = T0 + BigInt(i) * 1_000_000n;
      assert.equal(m.logTime, logTime);
      assert.deepEqual(m.message, jointState(i, logTime));
    });
    const streamed = readStream(await readFile(path.join(folder, 'concurrent_0.mcap'))).filter(
      (r) => r.type === 'Message',
    );
    assert.deepEqual(
      streamed.map((r) => r.sequence),
      [...Array(count).keys()],
    );
  });

  it('rejects a message on an unregistered topic or of the wrong shape, and keeps working', async () => {
    const folder = path.join(tmp, 'unknown-topic');
    const writer = await Rosbag2Writer.open(folder, TOPICS);
    try {
      await assert.rejects(writer.write('/tf', {}, T0), /topic \/tf is not in this bag; its topics: \/joint_states, /);
      await assert.rejects(writer.write('/joint_states', jointState(0, T0), -1n), /out of range/);
      await assert.rejects(
        writer.write('/joint_states', { name: [1, 2] }, T0),
        /does not fit sensor_msgs\/msg\/JointState/,
      );
      await writer.write('/joint_states', jointState(0, T0), T0);
    } finally {
      await writer.close();
    }
    assert.equal(writer.messageCount, 1);
    assert.equal((await readIndexed(path.join(folder, 'unknown-topic_0.mcap'))).messages.length, 1);
  });

  it('closes once however often close() is called, and refuses writes afterwards', async () => {
    const folder = path.join(tmp, 'twice');
    const writer = await Rosbag2Writer.open(folder, TOPICS);
    const write = writer.write('/joint_states', jointState(0, T0), T0);
    const first = writer.close();
    assert.equal(writer.close(), first);
    await Promise.all([write, first]);
    await writer.close();
    await assert.rejects(writer.write('/joint_states', jointState(1, T0), T0), /is closed/);
    assert.equal((await readIndexed(path.join(folder, 'twice_0.mcap'))).messages.length, 1);
  });

  it('writes a valid empty bag', async () => {
    const folder = path.join(tmp, 'empty');
    await (await Rosbag2Writer.open(folder, TOPICS)).close();
    const { reader, messages } = await readIndexed(path.join(folder, 'empty_0.mcap'));
    assert.equal(messages.length, 0);
    assert.equal(reader.channelsById.size, 2);
    const info = (
      parseYaml(await readFile(path.join(folder, 'metadata.yaml'), 'utf8')) as {
        rosbag2_bagfile_information: { message_count: number };
      }
    ).rosbag2_bagfile_information;
    assert.equal(info.message_count, 0);
  });

  it('opens an existing empty folder but throws on a non-empty one', async () => {
    const emptyFolder = path.join(tmp, 'existing-empty');
    await mkdir(emptyFolder);
    await (await Rosbag2Writer.open(emptyFolder, TOPICS)).close();
    const full = path.join(tmp, 'existing-full');
    await mkdir(full);
    await writeFile(path.join(full, 'notes.txt'), 'keep me');
    await assert.rejects(Rosbag2Writer.open(full, TOPICS), /is not empty \(notes\.txt\)/);
    assert.deepEqual(await readdir(full), ['notes.txt']);
  });

  it('throws on an unknown type, listing the known ones, before creating the folder', async () => {
    const folder = path.join(tmp, 'unknown-type');
    await assert.rejects(
      Rosbag2Writer.open(folder, [{ name: '/camera', type: 'sensor_msgs/msg/Image' }]),
      /unknown message type sensor_msgs\/msg\/Image for topic \/camera; known types: .*sensor_msgs\/msg\/JointState/,
    );
    await assert.rejects(stat(folder), { code: 'ENOENT' });
    await assert.rejects(
      Rosbag2Writer.open(folder, [TOPICS[0] ?? { name: '', type: '' }, TOPICS[0] ?? { name: '', type: '' }]),
      /listed twice/,
    );
  });
});
