/**
 * The Foxglove server's channels: each a topic with its ROS type (CDR with the type's ros2msg schema), the ones the
 * topic_whitelist allows. A message is serialized once whatever the number of subscribers, and only when someone
 * subscribes (or the channel is latched: its last message is kept for a late subscriber, as a transient-local
 * publisher keeps it for a late ROS subscription).
 */
import { allowedBy } from '../settings/foxglove.ts';
import { codecOf, type MessageCodec } from './definitions.ts';

/** A channel to offer: its topic, type and whether its last message is kept for late subscribers. */
export interface ChannelDef {
  readonly topic: string;
  readonly type: string;
  readonly latched: boolean;
}

/** A channel as served. */
export interface HubChannel extends ChannelDef {
  readonly id: number;
  readonly codec: MessageCodec;
  /** The last message of a latched channel: its CDR bytes and receive time (ns since the epoch). */
  last: { readonly data: Uint8Array; readonly timeNs: bigint } | undefined;
}

/** Where the hub's messages go (the server's subscriptions). */
/** A channel as the advertise message lists it (its messages CDR, its schema the ROS 2 message definition). */
export const advertisedChannel = (c: HubChannel) => ({
  id: c.id,
  topic: c.topic,
  encoding: 'cdr',
  schemaName: c.type,
  schema: c.codec.schema,
  schemaEncoding: 'ros2msg',
});

export interface HubSink {
  /** True when some client subscribes to the channel. */
  wants(channelId: number): boolean;
  deliver(channel: HubChannel, data: Uint8Array, timeNs: bigint): void;
}

/** Nanoseconds since the epoch, now. */
export const nowNs = (): bigint => BigInt(Date.now()) * 1_000_000n;

export class ChannelHub {
  readonly channels: readonly HubChannel[];
  readonly #byTopic: ReadonlyMap<string, HubChannel>;
  #sink: HubSink | undefined;
  /** Messages serialized and handed to the sink, since start. */
  readonly counts = { serialized: 0 };

  /** The channels of `defs` the whitelist allows, numbered from 1 (a topic listed twice is a bug). */
  constructor(defs: readonly ChannelDef[], whitelist: readonly RegExp[]) {
    const channels: HubChannel[] = [];
    for (const def of defs) {
      if (!allowedBy(whitelist, def.topic)) continue;
      if (channels.some((c) => c.topic === def.topic)) throw new Error(`channel ${def.topic} is listed twice`);
      channels.push({ ...def, id: channels.length + 1, codec: codecOf(def.type), last: undefined });
    }
    this.channels = channels;
    this.#byTopic = new Map(channels.map((c) => [c.topic, c]));
  }

  connect(sink: HubSink): void {
    this.#sink = sink;
  }

  /** True when a message on `topic` would go anywhere (a subscriber, or a latched channel keeps it). */
  wanted(topic: string): boolean {
    const channel = this.#byTopic.get(topic);
    return channel !== undefined && (channel.latched || this.#sink?.wants(channel.id) === true);
  }

  /** Publishes a message (a plain object shaped as the type) on `topic`; nothing when the topic is not served. */
  publish(topic: string, message: unknown, timeNs: bigint = nowNs()): void {
    const channel = this.#byTopic.get(topic);
    if (!channel) return;
    const subscribed = this.#sink?.wants(channel.id) === true;
    if (!channel.latched && !subscribed) return;
    const data = channel.codec.write(message);
    this.counts.serialized++;
    if (channel.latched) channel.last = { data, timeNs };
    if (subscribed) this.#sink?.deliver(channel, data, timeNs);
  }
}
