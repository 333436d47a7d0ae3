/**
 * The Foxglove server's subscriptions: which client listens to which of the hub's channels under which ids, a
 * subscribe message checked against the protocol's bounds, and the hub's messages handed to their subscribers.
 */
import type { Client } from './client.ts';
import type { ChannelHub } from './hub.ts';
import { LEVEL_ERROR, MAX_SUBSCRIPTIONS, messageFrame } from './protocol.ts';

/** How a subscription's frames and complaints reach their client. */
export interface SubscriptionSink {
  send(client: Client, frame: string | Uint8Array): void;
  status(client: Client, level: number, message: string): void;
}

export class Subscriptions {
  /** channel id -> (client -> its subscription ids on it) */
  readonly #subscribers = new Map<number, Map<Client, number[]>>();
  readonly #hub: ChannelHub;
  readonly #sink: SubscriptionSink;

  /** Connects to `hub`: it asks whether a channel is wanted and delivers each message to its subscribers. */
  constructor(hub: ChannelHub, sink: SubscriptionSink) {
    this.#hub = hub;
    this.#sink = sink;
    hub.connect({
      wants: (channelId) => (this.#subscribers.get(channelId)?.size ?? 0) > 0,
      deliver: (channel, data, timeNs) => {
        const subs = this.#subscribers.get(channel.id);
        if (!subs) return;
        for (const [client, ids] of subs) for (const id of ids) sink.send(client, messageFrame(id, data, timeNs));
      },
    });
  }

  /** A client's `subscribe` message: each entry taken, or refused with a status naming why. */
  subscribe(client: Client, message: Record<string, unknown>): void {
    const { status, send } = this.#sink;
    const list = message.subscriptions;
    if (!Array.isArray(list)) {
      status(client, LEVEL_ERROR, 'subscribe: subscriptions must be a list');
      return;
    }
    for (const entry of list.slice(0, MAX_SUBSCRIPTIONS + 1)) {
      const { id, channelId } = (entry ?? {}) as { id?: unknown; channelId?: unknown };
      if (!Number.isInteger(id) || (id as number) < 0 || (id as number) > 0xffffffff) {
        status(client, LEVEL_ERROR, 'subscribe: each subscription needs an id (uint32)');
        return;
      }
      const channel = this.#hub.channels.find((c) => c.id === channelId);
      if (!channel) {
        status(client, LEVEL_ERROR, `subscribe: no channel ${String(channelId).slice(0, 20)}`);
        continue;
      }
      if (client.subscriptions.has(id as number)) {
        status(client, LEVEL_ERROR, `subscribe: subscription id ${id} is in use`);
        continue;
      }
      // One subscription per channel (the protocol's rule): each more would be every message of it sent again, 256 times
      // over from one client at most, which kept POST /stop waiting.
      const held = this.#subscribers.get(channel.id)?.get(client)?.[0];
      if (held !== undefined) {
        status(
          client,
          LEVEL_ERROR,
          `subscribe: already subscribed to ${channel.topic} as subscription ${held} (one per channel)`,
        );
        continue;
      }
      if (client.subscriptions.size >= MAX_SUBSCRIPTIONS) {
        status(client, LEVEL_ERROR, `subscribe: at most ${MAX_SUBSCRIPTIONS} subscriptions per client`);
        return;
      }
      client.subscriptions.set(id as number, channel.id);
      const subs = this.#subscribers.get(channel.id) ?? new Map<Client, number[]>();
      subs.set(client, [...(subs.get(client) ?? []), id as number]);
      this.#subscribers.set(channel.id, subs);
      // A latched channel's last message goes to the new subscriber at once (a transient-local topic's late joiner).
      if (channel.last) send(client, messageFrame(id as number, channel.last.data, channel.last.timeNs));
    }
  }

  /** Ends one of a client's subscriptions; false when it has none by that id. */
  unsubscribe(client: Client, subscriptionId: number): boolean {
    const channelId = client.subscriptions.get(subscriptionId);
    if (channelId === undefined) return false;
    client.subscriptions.delete(subscriptionId);
    const subs = this.#subscribers.get(channelId);
    const ids = subs?.get(client)?.filter((id) => id !== subscriptionId) ?? [];
    if (ids.length > 0) subs?.set(client, ids);
    else subs?.delete(client);
    return true;
  }

  /** Ends every subscription of a client (it is gone). */
  drop(client: Client): void {
    for (const id of [...client.subscriptions.keys()]) this.unsubscribe(client, id);
  }
}
