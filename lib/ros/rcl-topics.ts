/**
 * The topics a sequence can record over rclnodejs, and their subscriptions: one subscription per topic however many
 * listeners it has (the joint-state topic's listeners are fed from the context's own subscription).
 */
import type { DefinitionSource } from '../bag/installed.ts';
import type { TopicInfo } from './context.ts';
import { plainOf } from './convert.ts';
import type { EndpointsFile } from '../settings/endpoints.ts';
import { isHiddenName, rosName } from './rcl-calls.ts';
import type { RclEntity, RclNode } from './rclnodejs-api.ts';

type Listener = (msg: unknown) => void;

export class RclTopics {
  readonly #node: RclNode;
  readonly #endpoints: EndpointsFile;
  readonly #definitions: DefinitionSource;
  /** Listeners of the joint-state topic (fed by {@link jointState}). */
  readonly #jointStateListeners = new Set<Listener>();
  readonly #subscriptions = new Map<string, { entity: RclEntity; listeners: Set<Listener> }>();

  constructor(node: RclNode, endpoints: EndpointsFile, definitions: DefinitionSource) {
    this.#node = node;
    this.#endpoints = endpoints;
    this.#definitions = definitions;
  }

  /** Hands a joint-state message (as received) to the joint-state topic's listeners. */
  jointState(msg: unknown): void {
    for (const listener of this.#jointStateListeners) listener(msg);
  }

  /**
   * The topics a sequence can record: the joint-state and trajectory topics, plus every visible
   * topic of the graph whose message definition is installed (or built into armgate).
   */
  topics(): readonly TopicInfo[] {
    const { joint_states, trajectory } = this.#endpoints.interfaces;
    const found = new Map<string, TopicInfo>();
    for (const t of [joint_states, trajectory]) found.set(rosName(t.name), { name: t.name, type: t.type });
    let graph: readonly { name: string; types: readonly string[] }[] = [];
    try {
      graph = this.#node.getTopicNamesAndTypes();
    } catch {
      // The graph cannot be queried: the configured topics only.
    }
    for (const { name, types } of graph) {
      if (isHiddenName(name)) continue;
      const type = types.find((t) => this.#definitions.definition(t).ok);
      if (type && !found.has(rosName(name))) found.set(rosName(name), { name, type });
    }
    return [...found.values()];
  }

  subscribe(topic: string, listener: Listener): () => void {
    if (rosName(topic) === rosName(this.#endpoints.interfaces.joint_states.name)) {
      this.#jointStateListeners.add(listener);
      return () => this.#jointStateListeners.delete(listener);
    }
    const key = rosName(topic);
    let entry = this.#subscriptions.get(key);
    if (!entry) {
      const info = this.topics().find((t) => rosName(t.name) === key);
      if (!info) return () => undefined;
      const listeners = new Set<Listener>();
      const entity = this.#node.createSubscription(info.type, info.name, { enableTypedArray: true }, (raw) => {
        const msg = plainOf(raw);
        for (const l of listeners) l(msg);
      });
      entry = { entity, listeners };
      this.#subscriptions.set(key, entry);
    }
    const { entity, listeners } = entry;
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
      if (listeners.size > 0 || this.#subscriptions.get(key)?.entity !== entity) return;
      this.#subscriptions.delete(key);
      this.#node.destroySubscription(entity);
    };
  }

  /** Forgets the joint-state listeners (the node's destruction ends the other subscriptions). */
  close(): void {
    this.#jointStateListeners.clear();
  }
}
