/**
 * What clients may hold of the service at once (web.limits): open connections in all and per client address, open
 * event streams, uploads being received. The counts are kept here; the listener asks before a request reaches the
 * app, so a request beyond a cap is answered before its body is read.
 */
import type { Socket } from 'node:net';

export interface CapLimits {
  readonly maxConnections: number;
  readonly maxConnectionsPerClient: number;
  readonly maxEventClients: number;
  readonly maxUploads: number;
}

/** Which cap a request is beyond, with the sentence its 503 says. */
export interface Refusal {
  readonly cap: 'connections' | 'client_connections' | 'event_clients' | 'uploads';
  readonly detail: string;
}

/** What kind of work a request holds while it is served. */
export type Holding = 'event_stream' | 'upload' | 'none';

/** Counts of what is held, and the decision for a new request. */
export class Caps {
  readonly #limits: CapLimits;
  #connections = 0;
  readonly #byClient = new Map<string, number>();
  #eventStreams = 0;
  #uploads = 0;
  /** Connections taken beyond a connection cap: only a stop is served on them. */
  readonly #beyond = new WeakMap<Socket, Refusal>();

  constructor(limits: CapLimits) {
    this.#limits = limits;
  }

  /** Counts a new connection until it closes; one beyond a connection cap is marked as such for its life. */
  connected(socket: Socket): void {
    const client = socket.remoteAddress ?? '';
    this.#connections++;
    const ofClient = (this.#byClient.get(client) ?? 0) + 1;
    this.#byClient.set(client, ofClient);
    const limits = this.#limits;
    if (this.#connections > limits.maxConnections)
      this.#beyond.set(socket, {
        cap: 'connections',
        detail: `the service holds ${limits.maxConnections} connections already (web.limits.max_connections); try again later`,
      });
    else if (ofClient > limits.maxConnectionsPerClient)
      this.#beyond.set(socket, {
        cap: 'client_connections',
        detail: `this client address holds ${limits.maxConnectionsPerClient} connections already (web.limits.max_connections_per_client); close some or try again later`,
      });
    socket.once('close', () => {
      this.#connections--;
      const n = (this.#byClient.get(client) ?? 1) - 1;
      if (n === 0) this.#byClient.delete(client);
      else this.#byClient.set(client, n);
    });
  }

  /**
   * Why a request on `socket` holding `holding` is refused, or undefined to serve it. An urgent request (stop) is never
   * refused: the caps are there so that it always gets through.
   */
  refusal(socket: Socket, holding: Holding, urgent: boolean): Refusal | undefined {
    if (urgent) return undefined;
    const limits = this.#limits;
    const beyond = this.#beyond.get(socket);
    if (beyond) return beyond;
    if (holding === 'event_stream' && this.#eventStreams >= limits.maxEventClients)
      return {
        cap: 'event_clients',
        detail: `${limits.maxEventClients} event streams are open already (web.limits.max_event_clients); try again later`,
      };
    if (holding === 'upload' && this.#uploads >= limits.maxUploads)
      return {
        cap: 'uploads',
        detail: `${limits.maxUploads} uploads are being received already (web.limits.max_uploads); try again later`,
      };
    return undefined;
  }

  /** Counts a served request's holding until `done` is called (once). */
  hold(holding: Holding): () => void {
    if (holding === 'none') return () => {};
    if (holding === 'event_stream') this.#eventStreams++;
    else this.#uploads++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (holding === 'event_stream') this.#eventStreams--;
      else this.#uploads--;
    };
  }

  /** The counts now (tests, logs). */
  counts(): { connections: number; eventStreams: number; uploads: number } {
    return { connections: this.#connections, eventStreams: this.#eventStreams, uploads: this.#uploads };
  }
}
