/**
 * Writes rosbag2 bags in MCAP storage: a folder holding `<folder name>_0.mcap` and `metadata.yaml`,
 * which `ros2 bag info/play` and Foxglove open.
 *
 * The MCAP file follows rosbag2_storage_mcap: header profile `ros2`, one `ros2msg` schema per type
 * (named `pkg/msg/Type`, complete definition text), one `cdr` channel per topic with
 * `offered_qos_profiles` metadata (the durability the publisher offers), messages with log time =
 * publish time = receive time, uncompressed chunks, at close a `rosbag2` metadata record with
 * `ROS_DISTRO` (as Humble's plugin writes it in update_metadata), and a summary with schemas,
 * channels, statistics, metadata and chunk indexes.
 *
 * Surviving a kill: schemas and channels are in the file from the start, and the open chunk is
 * written through to the file at least every {@link FLUSH_INTERVAL_MS} ms (and whenever it reaches
 * 768 KiB), so a process killed mid-recording leaves a file without summary or footer whose
 * messages, up to the last flush, a stream reader (McapStreamReader, `mcap recover`) reads back.
 * metadata.yaml (which `ros2 bag` needs to find the file) is written at open with no messages and
 * replaced at close with the counts.
 *
 * The MCAP writer must never be called concurrently: every call goes through one promise queue.
 */
import { mkdir, open as openFile, readdir, rename, writeFile } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { parse } from '@foxglove/rosmsg';
import { MessageWriter } from '@foxglove/rosmsg2-serialization';
import { definitionFor, KNOWN_TYPES } from './definitions.ts';
import { ChunkedMcapWriter, FileWritable } from './mcap-file.ts';
import { bagMetadataYaml, type Durability, offeredQosProfiles } from './metadata.ts';

/** A topic to record: its name and its ROS 2 type, e.g. `{name: '/joint_states', type: 'sensor_msgs/msg/JointState'}`. */
export interface BagTopic {
  readonly name: string;
  readonly type: string;
  /**
   * The complete `ros2msg` definition of the type (lib/bag/installed.ts reads it from the installed
   * packages); default: the built-in one of lib/bag/definitions.ts. Topics of one type must agree.
   */
  readonly definition?: string;
  /** What the publisher offers: `transient_local` for latched topics (/robot_description, /tf_static); default volatile. */
  readonly durability?: Durability;
  /**
   * Where the messages come from when not from the topic's own publisher, kept in the channel's metadata as
   * `armgate_source` (e.g. armgate's forward kinematics when the stack has no robot_state_publisher).
   */
  readonly source?: string;
}

/** Options of {@link Rosbag2Writer.open}; only uncompressed chunks are written. */
export interface Rosbag2WriterOptions {
  readonly compression?: 'none';
  /** The `ROS_DISTRO` of the `rosbag2` metadata record; default: the environment's, else empty (as rosbag2 reads it). */
  readonly rosDistro?: string;
}

/** Chunk size of rosbag2's MCAP writer (mcap-cpp's default, 768 KiB). */
const CHUNK_SIZE = 768 * 1024;
/** The open chunk is written to the file at least this often (ms) while messages arrive. */
export const FLUSH_INTERVAL_MS = 500;
const MAX_TIME_NS = 2n ** 64n - 1n;

interface TopicState {
  readonly topic: BagTopic;
  readonly channelId: number;
  /** CDR serializer of the type, built on the first write of a message object. */
  readonly serializer: () => MessageWriter;
  messageCount: number;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Checks the topics and finds one definition per type; throws on a bad list. */
function definitionsFor(
  topics: readonly BagTopic[],
): Map<string, { definition: string; serializer: () => MessageWriter }> {
  const byType = new Map<string, { definition: string; serializer: () => MessageWriter }>();
  const names = new Set<string>();
  for (const { name, type, definition: given } of topics) {
    if (name === '') throw new Error('a bag topic needs a name');
    if (names.has(name)) throw new Error(`bag topic ${name} is listed twice`);
    names.add(name);
    const known = byType.get(type);
    if (known !== undefined) {
      if (given !== undefined && given !== known.definition)
        throw new Error(`topics of type ${type} come with different definitions`);
      continue;
    }
    const definition = given ?? definitionFor(type);
    if (definition === undefined) {
      throw new Error(`unknown message type ${type} for topic ${name}; known types: ${KNOWN_TYPES.join(', ')}`);
    }
    let writer: MessageWriter | undefined;
    const serializer = () => {
      writer ??= new MessageWriter(parse(definition, { ros2: true }));
      return writer;
    };
    byType.set(type, { definition, serializer });
  }
  return byType;
}

/**
 * A rosbag2 bag being recorded into MCAP storage. Create with {@link Rosbag2Writer.open}, add messages
 * with {@link Rosbag2Writer.write}, and always finish with {@link Rosbag2Writer.close} (in `finally`):
 * without it the MCAP file has no summary (only a stream reader reads it, up to the last flush) and
 * metadata.yaml counts no messages.
 */
export class Rosbag2Writer {
  readonly #folder: string;
  readonly #fileName: string;
  readonly #handle: FileHandle;
  readonly #mcap: ChunkedMcapWriter;
  readonly #topics: ReadonlyMap<string, TopicState>;
  /** Writes the open chunk through every FLUSH_INTERVAL_MS; cleared at close. */
  readonly #flushTimer: NodeJS.Timeout;
  readonly #rosDistro: string;
  /** Tail of the queue every MCAP writer call runs on; never rejects. */
  #queue: Promise<void> = Promise.resolve();
  #closing: Promise<void> | undefined;
  /** Set when an MCAP write failed: the file may be inconsistent, so later writes are refused. */
  #failure: unknown;
  #messageCount = 0;
  #startNs = 0n;
  #endNs = 0n;

  private constructor(
    folder: string,
    fileName: string,
    handle: FileHandle,
    mcap: ChunkedMcapWriter,
    topics: ReadonlyMap<string, TopicState>,
    rosDistro: string,
  ) {
    this.#rosDistro = rosDistro;
    this.#folder = folder;
    this.#fileName = fileName;
    this.#handle = handle;
    this.#mcap = mcap;
    this.#topics = topics;
    this.#flushTimer = setInterval(() => this.#flushSoon(), FLUSH_INTERVAL_MS);
    this.#flushTimer.unref();
  }

  /**
   * Creates `folder` (it must not exist, or be empty) with `<basename(folder)>_0.mcap` in it, writes
   * a `ros2msg` schema per type and a `cdr` channel per topic to it, and a metadata.yaml with no
   * messages yet. Throws on an unknown type (the message lists the known ones), a duplicate topic,
   * or a non-empty folder.
   */
  static async open(
    folder: string,
    topics: readonly BagTopic[],
    options: Rosbag2WriterOptions = {},
  ): Promise<Rosbag2Writer> {
    if (options.compression !== undefined && options.compression !== 'none') {
      throw new Error(`unsupported bag compression ${String(options.compression)}; only 'none' is written`);
    }
    const types = definitionsFor(topics);
    await mkdir(folder, { recursive: true });
    const existing = await readdir(folder);
    if (existing.length > 0) throw new Error(`bag folder ${folder} is not empty (${existing.slice(0, 3).join(', ')})`);
    const fileName = `${path.basename(path.resolve(folder))}_0.mcap`;
    const handle = await openFile(path.join(folder, fileName), 'wx');
    try {
      const mcap = new ChunkedMcapWriter(new FileWritable(handle), CHUNK_SIZE);
      await mcap.start({ profile: 'ros2', library: 'armgate rosbag2 writer (@mcap/core)' });
      const schemaIds = new Map<string, number>();
      for (const [type, { definition }] of types) {
        const data = new TextEncoder().encode(definition);
        schemaIds.set(type, await mcap.registerSchema({ name: type, encoding: 'ros2msg', data }));
      }
      const states = new Map<string, TopicState>();
      for (const topic of topics) {
        const schemaId = schemaIds.get(topic.type);
        const serializer = types.get(topic.type)?.serializer;
        if (schemaId === undefined || serializer === undefined) throw new Error(`no schema for ${topic.type}`);
        const channelId = await mcap.registerChannel({
          topic: topic.name,
          messageEncoding: 'cdr',
          schemaId,
          metadata: new Map([
            ['offered_qos_profiles', offeredQosProfiles(topic.durability)],
            ...(topic.source ? [['armgate_source', topic.source] as [string, string]] : []),
          ]),
        });
        states.set(topic.name, { topic, channelId, serializer, messageCount: 0 });
      }
      const rosDistro = options.rosDistro ?? process.env.ROS_DISTRO ?? '';
      const bag = new Rosbag2Writer(folder, fileName, handle, mcap, states, rosDistro);
      await bag.#writeMetadata();
      return bag;
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  /** Messages written so far (those whose write() resolved). */
  get messageCount(): number {
    return this.#messageCount;
  }

  /**
   * Queues one message, a plain object shaped like the topic's .msg (missing fields are written as
   * zero/empty), received at `logTimeNs` (ns since the epoch). The message is serialized to CDR at
   * once, so the caller may reuse the object; the MCAP write runs after every earlier call. Rejects
   * on an unregistered topic, a message that does not fit the type, a time out of range, after
   * close(), or after an earlier write failed in the file.
   */
  async write(topic: string, message: unknown, logTimeNs: bigint): Promise<void> {
    const state = this.#writable(topic, logTimeNs);
    let data: Uint8Array;
    try {
      data = state.serializer().writeMessage(message);
    } catch (error) {
      throw new Error(`message on ${topic} does not fit ${state.topic.type}: ${messageOf(error)}`, { cause: error });
    }
    await this.#add(state, data, logTimeNs);
  }

  /**
   * Queues one message already serialized as a ROS 2 subscription delivers it raw: CDR with its
   * 4-byte encapsulation header, stored as it is (rosbag2 records serialized messages the same
   * way). The bytes are copied at once. Rejects as {@link write} does, and on data shorter than
   * the header or whose encapsulation identifier is not one of CDR's (0x0000..0x000b: CDR, PL_CDR and
   * XCDR2 in either byte order).
   */
  async writeSerialized(topic: string, data: Uint8Array, logTimeNs: bigint): Promise<void> {
    const state = this.#writable(topic, logTimeNs);
    if (data.byteLength < 4 || data[0] !== 0 || (data[1] ?? 99) > 0x0b) {
      throw new Error(
        `serialized message on ${topic} is not CDR (${data.byteLength} bytes, header ${Array.from(data.subarray(0, 4)).join(' ')})`,
      );
    }
    // A copy (a Buffer's slice() would share its memory).
    await this.#add(state, new Uint8Array(data), logTimeNs);
  }

  #writable(topic: string, logTimeNs: bigint): TopicState {
    const state = this.#topics.get(topic);
    if (state === undefined) {
      throw new Error(`topic ${topic} is not in this bag; its topics: ${[...this.#topics.keys()].join(', ')}`);
    }
    if (this.#closing !== undefined) throw new Error(`bag ${this.#folder} is closed`);
    if (logTimeNs < 0n || logTimeNs > MAX_TIME_NS) throw new Error(`receive time ${logTimeNs} ns is out of range`);
    return state;
  }

  #add(state: TopicState, data: Uint8Array, logTimeNs: bigint): Promise<void> {
    return this.#enqueue(async () => {
      if (this.#failure !== undefined) {
        throw new Error(`bag ${this.#folder}: an earlier write failed: ${messageOf(this.#failure)}`, {
          cause: this.#failure,
        });
      }
      try {
        await this.#mcap.addMessage({
          channelId: state.channelId,
          sequence: state.messageCount >>> 0,
          logTime: logTimeNs,
          publishTime: logTimeNs,
          data,
        });
      } catch (error) {
        this.#failure = error;
        throw error;
      }
      state.messageCount += 1;
      if (this.#messageCount === 0 || logTimeNs < this.#startNs) this.#startNs = logTimeNs;
      if (this.#messageCount === 0 || logTimeNs > this.#endNs) this.#endNs = logTimeNs;
      this.#messageCount += 1;
    });
  }

  /**
   * Waits for queued writes, ends the MCAP file (summary, statistics, indexes), closes it and writes
   * metadata.yaml. Idempotent (later calls return the same promise); after a failed write it still
   * ends the file and closes the handle, rejecting if ending fails.
   */
  close(): Promise<void> {
    clearInterval(this.#flushTimer);
    this.#closing ??= this.#enqueue(() => this.#finish());
    return this.#closing;
  }

  /** Queues a write of the open chunk, when it holds messages; a failure refuses later writes. */
  #flushSoon(): void {
    if (this.#closing !== undefined || this.#failure !== undefined || this.#mcap.pendingMessages === 0) return;
    void this.#enqueue(async () => {
      try {
        if (this.#failure === undefined) await this.#mcap.flush();
      } catch (error) {
        this.#failure = error;
      }
    });
  }

  async #finish(): Promise<void> {
    try {
      if (this.#failure === undefined)
        await this.#mcap.addMetadata({ name: 'rosbag2', metadata: new Map([['ROS_DISTRO', this.#rosDistro]]) });
      await this.#mcap.end();
    } finally {
      await this.#handle.close();
    }
    await this.#writeMetadata();
  }

  /** Writes metadata.yaml with the counts so far, replacing any earlier one whole (a new file renamed over it). */
  async #writeMetadata(): Promise<void> {
    const yaml = bagMetadataYaml({
      fileName: this.#fileName,
      startNs: this.#startNs,
      endNs: this.#endNs,
      messageCount: this.#messageCount,
      topics: [...this.#topics.values()].map(({ topic, messageCount }) => ({
        name: topic.name,
        type: topic.type,
        messageCount,
        ...(topic.durability ? { durability: topic.durability } : {}),
      })),
    });
    const partial = path.join(this.#folder, '.metadata.yaml.partial');
    await writeFile(partial, yaml);
    await rename(partial, path.join(this.#folder, 'metadata.yaml'));
  }

  /** Runs `task` after every task queued before it; the queue itself never rejects. */
  #enqueue(task: () => Promise<void>): Promise<void> {
    const run = this.#queue.then(task);
    this.#queue = run.catch(() => undefined);
    return run;
  }
}
