/**
 * A Foxglove client for the tests: the real FoxgloveClient of @foxglove/ws-protocol (written by Foxglove) over the
 * `ws` WebSocket, with what it was told collected (serverInfo, channels, services, statuses) and helpers that wait for
 * messages and answers. Messages are decoded with @foxglove/rosmsg2-serialization from the channel's own schema.
 */
import { parse } from '@foxglove/rosmsg';
import { MessageReader, MessageWriter } from '@foxglove/rosmsg2-serialization';
import wsProtocol, {
  type Channel,
  type FetchAssetResponse,
  type MessageData,
  type ServerInfo,
  type Service,
  type ServiceCallFailure,
  type ServiceCallResponse,
  type StatusMessage,
} from '@foxglove/ws-protocol';
import WebSocket from 'ws';

const { FoxgloveClient } = wsProtocol;
type Client = InstanceType<typeof FoxgloveClient>;

export interface Connected {
  readonly client: Client;
  readonly ws: WebSocket;
  readonly info: ServerInfo;
  readonly channels: Channel[];
  readonly services: Service[];
  readonly statuses: StatusMessage[];
  readonly closed: Promise<{ code: number; reason: string }>;
  channel(topic: string): Channel;
  service(name: string): Service | undefined;
  /** Subscribes to `topic` and resolves with the first `count` messages, decoded. */
  take(topic: string, count?: number, timeoutMs?: number): Promise<unknown[]>;
  /** Calls a service with a request object (CDR); resolves with the decoded response or the failure. */
  call(
    name: string,
    request: unknown,
  ): Promise<{ ok: true; value: Record<string, unknown> } | { ok: false; message: string }>;
  fetch(uri: string): Promise<FetchAssetResponse>;
  close(): void;
}

const readers = new Map<string, MessageReader>();
function readerOf(schema: string): MessageReader {
  let reader = readers.get(schema);
  if (!reader) {
    reader = new MessageReader(parse(schema, { ros2: true }));
    readers.set(schema, reader);
  }
  return reader;
}

/** Connects as Foxglove does (subprotocol foxglove.websocket.v1); resolves once channels (and services) are known. */
export function connect(
  url: string,
  headers: Record<string, string> = {},
  options: { readonly timeoutMs?: number; readonly ca?: string | Buffer; readonly localAddress?: string } = {},
): Promise<Connected> {
  const timeoutMs = options.timeoutMs ?? 20_000;
  const ws = new WebSocket(url, [FoxgloveClient.SUPPORTED_SUBPROTOCOL], {
    headers,
    ...(options.ca ? { ca: options.ca } : {}),
    // Any 127.x.y.z is another client address on Linux (the guess limit counts per address).
    ...(options.localAddress ? { localAddress: options.localAddress } : {}),
  });
  const client = new FoxgloveClient({ ws: ws as never });
  const channels: Channel[] = [];
  const services: Service[] = [];
  const statuses: StatusMessage[] = [];
  let info: ServerInfo | undefined;
  let callId = 0;
  let requestId = 0;
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  client.on('advertise', (list) => channels.push(...list));
  client.on('advertiseServices', (list) => services.push(...list));
  client.on('status', (s) => statuses.push(s));
  client.on('error', () => {});
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no serverInfo/advertise in time')), timeoutMs);
    ws.on('unexpected-response', (_req, res) => {
      clearTimeout(timer);
      reject(Object.assign(new Error(`upgrade refused: ${res.statusCode}`), { status: res.statusCode }));
    });
    ws.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    client.on('serverInfo', (i) => {
      info = i;
    });
    const ready = () => {
      if (!info || !advertised) return;
      if (info.capabilities.includes('services') && services.length === 0 && !servicesSeen) return;
      clearTimeout(timer);
      resolve(connected);
    };
    let servicesSeen = false;
    // The channels were advertised (a connection past the guess limit is advertised none).
    let advertised = false;
    client.on('advertise', () => {
      advertised = true;
      setImmediate(ready);
    });
    client.on('advertiseServices', () => {
      servicesSeen = true;
      setImmediate(ready);
    });
    const connected: Connected = {
      client,
      ws,
      get info() {
        return info as ServerInfo;
      },
      channels,
      services,
      statuses,
      closed,
      channel(topic) {
        const found = channels.find((c) => c.topic === topic);
        if (!found) throw new Error(`no channel ${topic}; channels: ${channels.map((c) => c.topic).join(', ')}`);
        return found;
      },
      service: (name) => services.find((s) => s.name === name),
      take(topic, count = 1, takeTimeoutMs = 20_000) {
        const channel = connected.channel(topic);
        const reader = readerOf(channel.schema);
        const id = client.subscribe(channel.id);
        const got: unknown[] = [];
        return new Promise((resolveTake, rejectTake) => {
          const t = setTimeout(() => {
            client.off('message', onMessage);
            rejectTake(new Error(`${topic}: ${got.length} of ${count} messages in time`));
          }, takeTimeoutMs);
          const onMessage = (m: MessageData) => {
            if (m.subscriptionId !== id) return;
            got.push(reader.readMessage(m.data));
            if (got.length < count) return;
            clearTimeout(t);
            client.off('message', onMessage);
            client.unsubscribe(id);
            resolveTake(got);
          };
          client.on('message', onMessage);
        });
      },
      call(name, request) {
        const service = connected.service(name);
        if (!service?.request || !service.response) throw new Error(`no service ${name}`);
        const writer = new MessageWriter(parse(service.request.schema, { ros2: true }));
        const responseReader = readerOf(service.response.schema);
        const id = ++callId;
        return new Promise((resolveCall) => {
          const onResponse = (r: ServiceCallResponse) => {
            if (r.callId !== id) return;
            done();
            resolveCall({ ok: true, value: responseReader.readMessage(r.data) as Record<string, unknown> });
          };
          const onFailure = (f: ServiceCallFailure) => {
            if (f.callId !== id) return;
            done();
            resolveCall({ ok: false, message: f.message });
          };
          const done = () => {
            client.off('serviceCallResponse', onResponse);
            client.off('serviceCallFailure', onFailure);
          };
          client.on('serviceCallResponse', onResponse);
          client.on('serviceCallFailure', onFailure);
          client.sendServiceCallRequest({
            serviceId: service.id,
            callId: id,
            encoding: 'cdr',
            data: writer.writeMessage(request),
          });
        });
      },
      fetch(uri) {
        const id = ++requestId;
        return new Promise((resolveFetch) => {
          const onAsset = (r: FetchAssetResponse) => {
            if (r.requestId !== id) return;
            client.off('fetchAssetResponse', onAsset);
            resolveFetch(r);
          };
          client.on('fetchAssetResponse', onAsset);
          client.fetchAsset(uri, id);
        });
      },
      close: () => client.close(),
    };
  });
}

/** Resolves when `predicate` holds (polled), or rejects after `timeoutMs`. */
export async function until(predicate: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const end = performance.now() + timeoutMs;
  while (!predicate()) {
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Stops reading `c` and has the server queue for it until `dropped()` holds (its send buffer past send_buffer_limit):
 * one subscription to every channel, then none, again and again (each subscription sends a latched channel's last
 * message at once: the URDF among them), 800 messages a second, under the server's flood cap of 1000.
 */
export async function fillSendBuffer(c: Connected, dropped: () => boolean, timeoutMs = 60_000): Promise<void> {
  (c.ws as unknown as { _socket: { pause(): void } })._socket.pause();
  const ids = c.channels.map((_, i) => 1_000_000 + i);
  const subscribe = JSON.stringify({
    op: 'subscribe',
    subscriptions: c.channels.map((channel, i) => ({ id: ids[i], channelId: channel.id })),
  });
  const unsubscribe = JSON.stringify({ op: 'unsubscribe', subscriptionIds: ids });
  const end = performance.now() + timeoutMs;
  while (!dropped()) {
    if (performance.now() > end) throw new Error(`not dropped within ${timeoutMs} ms`);
    for (let i = 0; i < 400; i++) {
      c.ws.send(subscribe);
      c.ws.send(unsubscribe);
    }
    await until(dropped, 1100, 'dropped').catch(() => undefined);
  }
}
