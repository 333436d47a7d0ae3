/**
 * A Foxglove WebSocket protocol v1 server (subprotocol `foxglove.websocket.v1`, the spec of foxglove/ws-protocol)
 * on its own port, over `ws`: serverInfo, the hub's channels (advertise, subscribe, unsubscribe; a late subscriber
 * of a latched channel gets its last message at once), armgate's operations as services, fetchAsset, read-only
 * parameters. Each upgrade passes the HTTP face's rules first: a connection cap (503), the rate of upgrades per client
 * address (429 with Retry-After, lib/net/upgrade-rate.ts, whatever the token), Host and Origin
 * (lib/admission: a WebSocket carries commands, so a foreign Origin is refused as a state-changing request is), then
 * the token (`?token=` or an Authorization header; 401), which gives the connection its role (from an address past
 * its wrong tokens, any token gets a connection with the stop services only, a right one's stop carried out). A client whose send
 * buffer grows past `send_buffer_limit` (1 MiB by default; asset answers being flushed aside, at most
 * MAX_FETCHES_IN_FLIGHT of them) is dropped with a close saying why, never buffered without bound. Bad input is answered with a
 * status message (or a close, for a frame too large), never a crash.
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer as createHttpServer, type IncomingMessage, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { type WebSocket, WebSocketServer } from 'ws';
import type { AnyOperation, AppState } from '../core/operation.ts';
import {
  type AdmissionPolicy,
  authorizationAuth,
  STOP_DESPITE_GUESSES,
  type TokenEntry,
} from '../admission/front-door.ts';
import { refuseUpgrade } from '../http/raw-answer.ts';
import { FOXGLOVE_CLIENT_DROPPED, FOXGLOVE_CLIENT_GONE } from '../control/dead-man.ts';
import { allowedBy, type FoxgloveConfig } from '../settings/foxglove.ts';
import { fetchAsset } from './assets.ts';
import {
  CLIENT_OP_SERVICE_CALL_REQUEST,
  fetchAssetResponseFrame,
  LEVEL_ERROR,
  LEVEL_WARNING,
  MAX_CALLS_IN_FLIGHT,
  MAX_CLIENT_FRAME,
  MAX_CLIENT_MESSAGES_PER_S,
  MAX_FETCHES_IN_FLIGHT,
  MAX_SUBSCRIPTIONS,
  serviceCallResponseFrame,
  SUBPROTOCOL,
} from './protocol.ts';
import { type Admitted, screenUpgrade } from './upgrade.ts';
import { UpgradeRate } from '../net/upgrade-rate.ts';
import { addressKey } from '../net/address-buckets.ts';
import { webSocketMessages } from '../net/message-budget.ts';
import { TextsInOrder } from './texts.ts';
import { callOperation, errorText } from './call.ts';
import { advertisedChannel, type ChannelHub } from './hub.ts';
import { Subscriptions } from './subscriptions.ts';
import {
  advertisedService,
  readRequest,
  type ServedService,
  servedServices,
  servicesFor,
  takesNoInput,
} from './services.ts';
import {
  type Client,
  clientSender,
  DROP_GRACE_MS,
  PAST_GUESSES_PER_ADDRESS,
  PAST_GUESSES_PRINCIPAL,
} from './client.ts';

export { DROP_GRACE_MS, PAST_GUESSES_PER_ADDRESS } from './client.ts';
export {
  MAX_CALLS_IN_FLIGHT,
  MAX_CLIENT_FRAME,
  MAX_CLIENT_MESSAGES_PER_S,
  MAX_FETCHES_IN_FLIGHT,
  MAX_SUBSCRIPTIONS,
  SUBPROTOCOL,
} from './protocol.ts';

/** What the server needs of the app. */
export interface FoxgloveServerOptions {
  readonly config: FoxgloveConfig;
  readonly tokens: readonly TokenEntry[];
  readonly admission: AdmissionPolicy;
  readonly hub: ChannelHub;
  /** The served operations (the endpoints file's routes); services are made of them. */
  readonly operations: readonly AnyOperation[];
  readonly state: AppState;
  /** Read-only parameters (param_whitelist applies). */
  readonly parameters: () => Record<string, unknown>;
  readonly log: (fields: Record<string, string | number>) => void;
}

/** The running server. */
export interface RunningFoxglove {
  /** ws://HOST:PORT (wss:// with TLS). */
  readonly url: string;
  readonly port: number;
  /** Connected clients now. */
  clientCount(): number;
  /** Frames sent and clients dropped for their send buffer, since start. */
  readonly counts: { sent: number; dropped: number };
  close(): Promise<void>;
}

/** The request of a service that takes none (a stop, a pause): never read. */
const NO_REQUEST = { ok: true as const, value: {} };

/** What a connection past the guess limit is told (a status at once, and for anything but a stop service). */
const pastGuessesText = (detail: string) =>
  `${detail}: this connection offers the stop services only (${STOP_DESPITE_GUESSES})`;

/** Starts the server on the configured address and port. */
export async function startFoxglove(options: FoxgloveServerOptions): Promise<RunningFoxglove> {
  const { config, hub, state, log } = options;
  const authenticate = authorizationAuth(options.tokens, options.state.services.guesses);
  const upgrades = new UpgradeRate();
  const allServices = config.capabilities.has('services')
    ? servedServices(options.operations, config.serviceWhitelist)
    : [];
  const clients = new Set<Client>();
  const counts = { sent: 0, dropped: 0 };
  let pending = 0;
  const capabilities = ['services', 'assets', 'parameters'].filter((c) => config.capabilities.has(c));

  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: MAX_CLIENT_FRAME,
    perMessageDeflate: false,
    handleProtocols: (protocols) => (protocols.has(SUBPROTOCOL) ? SUBPROTOCOL : false),
  });

  const { send, sendAsset } = clientSender(config.sendBufferLimit, counts, log);
  const json = (client: Client, message: unknown) => send(client, JSON.stringify(message));
  const status = (client: Client, level: number, message: string) =>
    json(client, { op: 'status', level, message: message.length > 500 ? `${message.slice(0, 500)}...` : message });

  const subscriptions = new Subscriptions(hub, { send, status });

  const onFetchAsset = async (client: Client, message: Record<string, unknown>) => {
    const requestId = message.requestId;
    if (!Number.isInteger(requestId) || (requestId as number) < 0 || (requestId as number) > 0xffffffff)
      return status(client, LEVEL_ERROR, 'fetchAsset: requestId must be a uint32');
    let found: Awaited<ReturnType<typeof fetchAsset>>;
    if (!config.capabilities.has('assets'))
      found = { ok: false, error: 'assets are not served (foxglove.capabilities)' };
    else if (client.fetchesInFlight >= MAX_FETCHES_IN_FLIGHT)
      found = { ok: false, error: `at most ${MAX_FETCHES_IN_FLIGHT} asset fetches in flight per client` };
    else {
      client.fetchesInFlight++;
      try {
        found = await fetchAsset(message.uri);
      } catch (e) {
        client.fetchesInFlight--;
        throw e;
      }
      // The slot is the answer's until it is flushed (sendAsset frees it).
      return sendAsset(client, fetchAssetResponseFrame(requestId as number, found));
    }
    send(client, fetchAssetResponseFrame(requestId as number, found));
  };

  const onGetParameters = (client: Client, message: Record<string, unknown>) => {
    if (!config.capabilities.has('parameters')) return status(client, LEVEL_ERROR, 'parameters are not served');
    const names = Array.isArray(message.parameterNames) ? message.parameterNames.slice(0, 1000) : [];
    const all = options.parameters();
    const wanted = names.length === 0 ? Object.keys(all) : names.filter((n): n is string => typeof n === 'string');
    const parameters = wanted
      .filter((name) => Object.hasOwn(all, name) && allowedBy(config.paramWhitelist, name))
      .map((name) => ({ name, value: all[name] }));
    json(client, {
      op: 'parameterValues',
      parameters,
      ...(typeof message.id === 'string' ? { id: message.id.slice(0, 200) } : {}),
    });
  };

  const failure = (client: Client, serviceId: number, callId: number, message: string) =>
    json(client, { op: 'serviceCallFailure', serviceId, callId, message: message.slice(0, 2000) });

  /** `closing`: the server closed the connection (dropped), so only a stop service is carried out (stop wins). */
  const onServiceCall = async (client: Client, frame: Buffer, closing: boolean) => {
    const arrivedAtStop = state.services.arbiter.stopCount;
    if (frame.byteLength < 13)
      return status(client, LEVEL_ERROR, 'service call request: frame shorter than its header');
    const serviceId = frame.readUInt32LE(1);
    const callId = frame.readUInt32LE(5);
    const encodingLength = frame.readUInt32LE(9);
    if (encodingLength > 64 || 13 + encodingLength > frame.byteLength)
      return status(client, LEVEL_ERROR, 'service call request: bad encoding length');
    const encoding = frame.subarray(13, 13 + encodingLength).toString('utf8');
    const payload = frame.subarray(13 + encodingLength);
    const service = client.services.get(serviceId);
    if (!service) return failure(client, serviceId, callId, `no service ${serviceId} for this connection`);
    if (closing && !takesNoInput(service)) return;
    if (client.pastGuesses) return stopPastGuesses(client, service, serviceId, callId, arrivedAtStop);
    // A stop or pause takes no input: it is carried out whatever its request holds, in whatever encoding (stop wins).
    const known = encoding === 'cdr' || encoding === 'json';
    const unknownEncoding = `encoding '${encoding.slice(0, 20)}' is not supported (cdr, json)`;
    if (!known && !takesNoInput(service)) return failure(client, serviceId, callId, unknownEncoding);
    if (client.callsInFlight >= MAX_CALLS_IN_FLIGHT && service.op.effect !== 'stop')
      return failure(client, serviceId, callId, `at most ${MAX_CALLS_IN_FLIGHT} calls in flight per client`);
    // In flight from here: a large JSON request is parsed over several turns of the event loop (readRequest).
    client.callsInFlight++;
    let result: Awaited<ReturnType<typeof callOperation>>;
    try {
      const request = takesNoInput(service) ? NO_REQUEST : await readRequest(service, encoding, payload);
      if (!request.ok) return failure(client, serviceId, callId, request.error);
      result = await callOperation(
        service.op,
        service.spec.toInput(request.value, state.ros.endpoints.joint_names),
        {
          principal: client.principal,
          calledAs: `the Foxglove service ${service.spec.name}`,
          arrivedAtStop,
          signal: client.gone.signal,
        },
        state,
      );
    } catch (e) {
      log({
        level: 'error',
        msg: 'foxglove service failed',
        service: service.spec.name,
        error: String(e).slice(0, 300),
      });
      result = { ok: false, error: { kind: 'internal', detail: 'internal error' } };
    } finally {
      client.callsInFlight--;
    }
    if (!result.ok) return failure(client, serviceId, callId, `${service.spec.op}: ${errorText(result.error)}`);
    if (!known) return failure(client, serviceId, callId, `${unknownEncoding}; ${service.spec.op} was carried out`);
    const value = (result.value ?? {}) as Record<string, unknown>;
    const outcome = {
      success: typeof value.success === 'boolean' ? value.success : true,
      message: typeof value.message === 'string' ? value.message : '',
      json: JSON.stringify(value),
    };
    const data = encoding === 'cdr' ? service.response.write(outcome) : Buffer.from(JSON.stringify(outcome));
    send(client, serviceCallResponseFrame(serviceId, callId, encoding, data));
  };

  /**
   * A stop service called on a connection past the guess limit: answered at once with the same failure whatever the
   * token, then carried out for a right one (its principal; the call's own request is not read: a stop takes none).
   */
  const stopPastGuesses = (
    client: Client,
    service: ServedService,
    serviceId: number,
    callId: number,
    arrivedAtStop: number,
  ) => {
    const past = client.pastGuesses;
    if (!past) return;
    failure(client, serviceId, callId, `${service.spec.op}: ${past.detail}; ${STOP_DESPITE_GUESSES}`);
    const caller = past.stopOnly;
    if (!caller) return;
    setImmediate(() => {
      callOperation(
        service.op,
        {},
        {
          principal: caller,
          calledAs: `the Foxglove service ${service.spec.name}`,
          arrivedAtStop,
          signal: client.gone.signal,
        },
        state,
      ).catch((e: unknown) =>
        log({ level: 'error', msg: 'a stop past the guess limit failed', error: String(e).slice(0, 300) }),
      );
    });
  };

  const failed = (client: Client, e: unknown) => {
    log({ level: 'error', msg: 'foxglove message failed', error: String(e).slice(0, 300) });
    status(client, LEVEL_ERROR, 'the message could not be handled');
  };
  const texts = new TextsInOrder<Client>(failed);
  const onText = (client: Client, text: string) => texts.read(client, text, (message) => onMessage(client, message));
  /** A text message's JSON value (undefined: not JSON), once its connection's earlier ones were handled. */
  const onMessage = (client: Client, parsed: unknown) => {
    if (client.dropped || client.ws.readyState !== client.ws.OPEN) return;
    if (parsed === undefined) return status(client, LEVEL_ERROR, 'not JSON');
    const message = parsed as Record<string, unknown>;
    if (typeof message !== 'object' || message === null || Array.isArray(message))
      return status(client, LEVEL_ERROR, 'a message must be a JSON object with an op');
    if (client.pastGuesses) return status(client, LEVEL_ERROR, pastGuessesText(client.pastGuesses.detail));
    switch (message.op) {
      case 'subscribe':
        return subscriptions.subscribe(client, message);
      case 'unsubscribe': {
        const ids = Array.isArray(message.subscriptionIds) ? message.subscriptionIds.slice(0, MAX_SUBSCRIPTIONS) : [];
        for (const id of ids)
          if (typeof id !== 'number' || !subscriptions.unsubscribe(client, id))
            status(client, LEVEL_WARNING, `unsubscribe: no subscription ${String(id).slice(0, 20)}`);
        return;
      }
      case 'fetchAsset':
        return void onFetchAsset(client, message);
      case 'getParameters':
        return onGetParameters(client, message);
      case 'setParameters':
        return status(client, LEVEL_ERROR, "setParameters: armgate's parameters are read only");
      case 'subscribeParameterUpdates':
      case 'unsubscribeParameterUpdates':
        return status(
          client,
          LEVEL_WARNING,
          `${message.op}: parameter updates are not pushed; read them with getParameters`,
        );
      case 'advertise':
      case 'unadvertise':
        return status(client, LEVEL_ERROR, `${message.op}: clients cannot publish here (no clientPublish)`);
      case 'subscribeConnectionGraph':
      case 'unsubscribeConnectionGraph':
        return status(client, LEVEL_ERROR, `${message.op}: the connection graph is not served`);
      default:
        return status(client, LEVEL_ERROR, `unknown op '${String(message.op).slice(0, 40)}'`);
    }
  };

  const onBinary = (client: Client, data: Buffer, closing: boolean) => {
    if (data.byteLength < 1) return status(client, LEVEL_ERROR, 'empty binary message');
    const op = data.readUInt8(0);
    if (op === CLIENT_OP_SERVICE_CALL_REQUEST) return void onServiceCall(client, data, closing);
    if (closing) return;
    if (op === 1) return status(client, LEVEL_ERROR, 'message data: clients cannot publish here (no clientPublish)');
    return status(client, LEVEL_ERROR, `unknown binary opcode ${op}`);
  };

  /** Connections past the guess limit by client address, oldest first. */
  const pastGuessesByAddress = new Map<string, Client[]>();

  const onConnection = (ws: WebSocket, admitted: Admitted, address: string) => {
    const past = admitted.pastGuesses ? { ...admitted.pastGuesses, address } : undefined;
    const principal = admitted.pastGuesses ? PAST_GUESSES_PRINCIPAL : admitted.principal;
    const served = servicesFor(allServices, principal.role);
    const client: Client = {
      ws,
      principal,
      pastGuesses: past,
      // Past the guess limit: the services that bring the arm to rest and take no input (stop, pause), nothing else.
      services: new Map((past ? served.filter(takesNoInput) : served).map((s) => [s.id, s])),
      subscriptions: new Map(),
      gone: new AbortController(),
      callsInFlight: 0,
      fetchesInFlight: 0,
      assetBytes: 0,
      dropped: false,
    };
    clients.add(client);
    if (past) {
      // At most PAST_GUESSES_PER_ADDRESS of them per address (an IPv6 /64): a newer one closes the oldest.
      const held = pastGuessesByAddress.get(addressKey(address)) ?? [];
      held.push(client);
      pastGuessesByAddress.set(addressKey(address), held);
      while (held.length > PAST_GUESSES_PER_ADDRESS)
        held.shift()?.ws.close(1008, 'a newer connection past the guess limit from this address took its place');
    }
    log({ level: 'info', msg: 'foxglove client connected', principal: principal.name, role: principal.role });
    // The flood cap: messages counted per second; past it the connection is closed and nothing more is read from it.
    let windowStart = performance.now();
    let inWindow = 0;
    let flooded = false;
    // What the shared budget pauses and resumes: never a flooded connection again (nothing more is read from it).
    const reading = { pause: () => ws.pause(), resume: () => void (flooded || ws.resume()) };
    ws.on('message', (data, isBinary) => {
      if (flooded) return;
      const now = performance.now();
      if (now - windowStart >= 1000) {
        windowStart = now;
        inWindow = 0;
      }
      if (++inWindow > MAX_CLIENT_MESSAGES_PER_S) {
        flooded = true;
        // Its calls in flight are abandoned now (their answers cannot reach it; a motion stops), not at 'close', which
        // comes only when its socket is destroyed: nothing more is read from it.
        client.gone.abort(FOXGLOVE_CLIENT_DROPPED);
        log({ level: 'info', msg: 'foxglove client closed', reason: 'flood', principal: principal.name });
        ws.pause();
        setTimeout(() => ws.terminate(), DROP_GRACE_MS).unref();
        return ws.close(1008, `more than ${MAX_CLIENT_MESSAGES_PER_S} messages a second`);
      }
      // Handled within the WebSocket faces' shared budget of messages per turn (lib/net/message-budget.ts): past it,
      // this connection is paused and the message waits its turn, in arrival order.
      webSocketMessages.handle(reading, () => {
        // A connection the server closed (dropped for its send buffer) is still read until the client's side of the
        // close comes or its socket is destroyed: of what it sends then, only a stop service is carried out (stop wins).
        const closing = client.dropped || ws.readyState !== ws.OPEN;
        if (closing && !isBinary) return;
        try {
          if (isBinary) onBinary(client, Buffer.isBuffer(data) ? data : Buffer.concat(data as Buffer[]), closing);
          else onText(client, data.toString());
        } catch (e) {
          failed(client, e);
        }
      });
    });
    ws.on('error', () => ws.terminate());
    ws.on('close', () => {
      clients.delete(client);
      if (past) {
        const key = addressKey(address);
        const held = pastGuessesByAddress.get(key)?.filter((c) => c !== client) ?? [];
        if (held.length > 0) pastGuessesByAddress.set(key, held);
        else pastGuessesByAddress.delete(key);
      }
      subscriptions.drop(client);
      // Its motions in flight see their caller gone: stopped, unless armgate.safety.dead_man is false (lib/ops/motion.ts).
      client.gone.abort(FOXGLOVE_CLIENT_GONE);
    });
    json(client, {
      op: 'serverInfo',
      name: 'armgate',
      capabilities: past ? capabilities.filter((c) => c === 'services') : capabilities,
      supportedEncodings: ['cdr', 'json'],
      metadata: past ? { access: 'stop services only' } : { role: principal.role, principal: principal.name },
      sessionId: randomUUID(),
    });
    if (past) status(client, LEVEL_WARNING, pastGuessesText(past.detail));
    json(client, { op: 'advertise', channels: (past ? [] : hub.channels).map(advertisedChannel) });
    if (capabilities.includes('services'))
      json(client, { op: 'advertiseServices', services: [...client.services.values()].map(advertisedService) });
  };

  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    if (clients.size + pending >= config.maxConnections)
      return refuseUpgrade(socket, 503, `at most ${config.maxConnections} Foxglove connections`, { 'Retry-After': 2 });
    const address = request.socket.remoteAddress ?? '';
    // Upgrades per address, before any WebSocket work and whatever the token (lib/net/upgrade-rate.ts). A connection
    // past the guess limit (the stop services only, PAST_GUESSES_PER_ADDRESS of them) is opened within the same rate.
    const rate = upgrades.take(address);
    if (!rate.ok) {
      const path = (request.url ?? '/').split('?')[0] ?? '/';
      const detail = upgrades.describe('Foxglove');
      state.services.audit?.recordRefusal('foxglove', address, 'GET', path, 429, detail);
      return refuseUpgrade(socket, 429, detail, { 'Retry-After': rate.retryAfterS });
    }
    const admitted = screenUpgrade(request, socket, options, authenticate);
    if (!admitted) return;
    // Counted until the handshake ends either way (ws answers a bad handshake itself and never calls back).
    pending++;
    let handed = false;
    socket.once('close', () => {
      if (!handed) pending--;
    });
    wss.handleUpgrade(request, socket, head, (ws) => {
      handed = true;
      pending--;
      onConnection(ws, admitted, address);
    });
  };

  let server: Server;
  if (config.tls) {
    const [cert, key] = await Promise.all([readFile(config.tls.certFile), readFile(config.tls.keyFile)]);
    server = createHttpsServer({ cert, key });
  } else server = createHttpServer();
  server.on('request', (_req, res) => {
    res.writeHead(426, { 'content-type': 'application/json', upgrade: 'websocket', connection: 'close' });
    res.end(
      JSON.stringify({ detail: `a Foxglove WebSocket server (subprotocol ${SUBPROTOCOL}): open it in Foxglove` }),
    );
  });
  server.on('upgrade', onUpgrade);
  server.headersTimeout = 10_000;
  server.requestTimeout = 10_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `${config.tls ? 'wss' : 'ws'}://${shownHost}:${address.port}`,
    port: address.port,
    clientCount: () => clients.size,
    counts,
    async close() {
      for (const client of clients) client.ws.close(1001, 'armgate is shutting down');
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      setTimeout(() => {
        for (const client of clients) client.ws.terminate();
        server.closeAllConnections();
      }, 500).unref();
      wss.close();
      await closed;
    },
  };
}
