/**
 * What a bag keeps when its recorder never closes it: chunks written through at least every
 * FLUSH_INTERVAL_MS, schemas and channels from the start, metadata.yaml from the start, a file cut at
 * any byte readable by a stream reader up to its last whole record, and a recording process killed
 * with SIGKILL losing at most about its last second.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as zlib from 'node:zlib';
import { parse as parseYaml } from 'yaml';
import { crc32 } from '../../lib/bag/crc32.ts';
import { FLUSH_INTERVAL_MS, Rosbag2Writer } from '../../lib/bag/writer.ts';
import { assertJointState, readBag, streamRecords } from '../support/bag.ts';
import { streamMcap } from '../support/bag-stream.ts';
import { JOINTS } from '../support/arm.ts';
import { nodeEntry } from '../support/node-entry.ts';

const TOPICS = [
  { name: '/joint_states', type: 'sensor_msgs/msg/JointState' },
  { name: '/arm_controller/joint_trajectory', type: 'trajectory_msgs/msg/JointTrajectory' },
];
const T0 = 1_718_000_000_000_000_000n;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function jointState(i: number, ns: bigint) {
  return {
    header: { stamp: { sec: Number(ns / 1_000_000_000n), nanosec: Number(ns % 1_000_000_000n) }, frame_id: '' },
    name: JOINTS,
    position: JOINTS.map((_, j) => i * 0.01 + j),
    velocity: [],
    effort: [],
  };
}

interface Metadata {
  message_count: number;
  relative_file_paths: string[];
  topics_with_message_count: { topic_metadata: { name: string }; message_count: number }[];
}

async function metadataOf(folder: string): Promise<Metadata> {
  return (
    parseYaml(await readFile(path.join(folder, 'metadata.yaml'), 'utf8')) as { rosbag2_bagfile_information: Metadata }
  ).rosbag2_bagfile_information;
}

describe('a bag that is never closed', () => {
  let tmp: string;
  before(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'armgate-bag-flush-'));
  });
  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('computes the CRC-32 MCAP uses', () => {
    assert.equal(crc32(new TextEncoder().encode('123456789')), 0xcbf43926);
    assert.equal(crc32(new Uint8Array(0)), 0);
    const native = (zlib as { crc32?: (data: Uint8Array) => number }).crc32;
    const bytes = Uint8Array.from({ length: 4096 }, (_, k) => (k * 131 + 7) & 0xff);
    if (native) assert.equal(crc32(bytes), native(bytes));
  });

  it(`holds, before close, every message written more than ${FLUSH_INTERVAL_MS} ms ago, and metadata.yaml from the start`, async () => {
    const folder = path.join(tmp, 'open');
    const writer = await Rosbag2Writer.open(folder, TOPICS);
    try {
      assert.deepEqual((await readdir(folder)).sort(), ['metadata.yaml', 'open_0.mcap']);
      const early = await metadataOf(folder);
      assert.equal(early.message_count, 0);
      assert.deepEqual(early.relative_file_paths, ['open_0.mcap']);
      assert.deepEqual(
        early.topics_with_message_count.map((t) => t.topic_metadata.name),
        TOPICS.map((t) => t.name),
      );
      const fresh = streamMcap(new Uint8Array(await readFile(path.join(folder, 'open_0.mcap'))));
      assert.deepEqual(
        fresh.recordTypes,
        ['Header', 'Schema', 'Schema', 'Channel', 'Channel'],
        'schemas and channels are in the file at once',
      );

      for (let i = 0; i < 20; i++)
        await writer.write('/joint_states', jointState(i, T0 + BigInt(i) * 10_000_000n), T0 + BigInt(i) * 10_000_000n);
      await sleep(2 * FLUSH_INTERVAL_MS + 200);
      const streamed = streamMcap(new Uint8Array(await readFile(path.join(folder, 'open_0.mcap'))));
      assert.equal(streamed.complete, false, 'no footer yet');
      assert.equal(streamed.leftoverBytes, 0);
      assert.deepEqual(
        streamed.topics,
        TOPICS.map((t) => t.name),
      );
      assert.equal(streamed.messages.length, 20);
      streamed.messages.forEach((m, i) => {
        assertJointState(m.decoded);
        assert.equal(m.logTimeNs, T0 + BigInt(i) * 10_000_000n);
      });
    } finally {
      await writer.close();
    }
    const bag = await readBag(folder);
    assert.deepEqual(bag.files, ['metadata.yaml', 'open_0.mcap'], 'metadata.yaml replaced, no partial file left');
    assert.equal(bag.messages.length, 20);
    assert.equal(bag.metadata.message_count, 20);
    assert.ok((await streamRecords(path.join(folder, 'open_0.mcap'))) > 20);
  });

  it('writes a chunk per flush interval at a low rate, one message at a time', async () => {
    const folder = path.join(tmp, 'slow');
    const writer = await Rosbag2Writer.open(folder, TOPICS);
    try {
      for (let i = 0; i < 2; i++) {
        await writer.write('/joint_states', jointState(i, T0 + BigInt(i)), T0 + BigInt(i));
        await sleep(FLUSH_INTERVAL_MS * 2 + 100);
        const streamed = streamMcap(new Uint8Array(await readFile(path.join(folder, 'slow_0.mcap'))));
        assert.equal(streamed.messages.length, i + 1, `message ${i + 1} is in the file`);
      }
    } finally {
      await writer.close();
    }
    assert.equal((await readBag(folder)).messages.length, 2);
  });

  it('reads a file cut at any byte up to its last whole record, never failing a CRC', async () => {
    const folder = path.join(tmp, 'cut');
    const writer = await Rosbag2Writer.open(folder, TOPICS);
    try {
      for (let i = 0; i < 60; i++) {
        await writer.write('/joint_states', jointState(i, T0 + BigInt(i)), T0 + BigInt(i));
        // A few chunks.
        if (i % 15 === 14) await sleep(FLUSH_INTERVAL_MS + 150);
      }
    } finally {
      await writer.close();
    }
    const bytes = new Uint8Array(await readFile(path.join(folder, 'cut_0.mcap')));
    let previous = 0;
    for (let cut = 8; cut <= bytes.byteLength; cut += 37) {
      const streamed = streamMcap(bytes.subarray(0, cut));
      assert.ok(
        streamed.messages.length >= previous,
        `cut at ${cut}: ${streamed.messages.length} messages, ${previous} before`,
      );
      assert.deepEqual(
        streamed.messages.map((m) => m.logTimeNs),
        streamed.messages.map((_, i) => T0 + BigInt(i)),
        `cut at ${cut}: a prefix`,
      );
      previous = streamed.messages.length;
    }
    const whole = streamMcap(bytes);
    assert.equal(whole.complete, true);
    assert.equal(whole.messages.length, 60);
  });

  it('loses at most about the last second when the recording process is SIGKILLed', async () => {
    const folder = path.join(tmp, 'killed');
    const entry = nodeEntry(path.join(import.meta.dirname, '../support/bag-writer-child.ts'));
    const child = spawn(process.execPath, [...entry.execArgv, entry.file, folder], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<unknown>((resolve) => child.once('exit', resolve));
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    let killedAtMs = 0;
    try {
      const deadline = Date.now() + 20_000;
      while (!out.includes('recording') && Date.now() < deadline && child.exitCode === null) await sleep(20);
      assert.match(out, /recording/);
      await sleep(2500);
      killedAtMs = Date.now();
      child.kill('SIGKILL');
      await exited;
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    }
    const streamed = streamMcap(new Uint8Array(await readFile(path.join(folder, 'killed_0.mcap'))));
    assert.equal(streamed.complete, false);
    assert.ok(streamed.messages.length > 50, `${streamed.messages.length} messages read back`);
    for (const m of streamed.messages) assertJointState(m.decoded);
    const lastMs = Number((streamed.messages.at(-1)?.logTimeNs ?? 0n) / 1_000_000n);
    const lostMs = killedAtMs - lastMs;
    assert.ok(lostMs <= 1000, `the last ${lostMs} ms before the kill were lost`);
    assert.equal((await metadataOf(folder)).relative_file_paths[0], 'killed_0.mcap', 'metadata.yaml names the file');
  });
});
