/**
 * One Foxglove client's connection (its principal, services, subscriptions and what it has in flight), and the
 * bounded sending to it: a client whose send buffer passes the limit is dropped with a close saying why, never
 * buffered without bound (lib/foxglove/server.ts serves the protocol over these).
 */
import type { WebSocket } from 'ws';
import { FOXGLOVE_CLIENT_DROPPED } from '../control/dead-man.ts';
import type { Principal } from '../core/roles.ts';
import type { ServedService } from './services.ts';

export interface Client {
  readonly ws: WebSocket;
  readonly principal: Principal;
  /** A connection from an address past its wrong tokens: the stop services only (see PAST_GUESSES_PRINCIPAL). */
  readonly pastGuesses:
    | { readonly stopOnly: Principal | undefined; readonly detail: string; readonly address: string }
    | undefined;
  readonly services: ReadonlyMap<number, ServedService>;
  /** subscription id -> channel id */
  readonly subscriptions: Map<number, number>;
  /** Aborted when the connection closes: a motion it started is stopped (dead-man). */
  readonly gone: AbortController;
  callsInFlight: number;
  /** Asset fetches read or being sent (a slot is freed once its answer is flushed to the socket). */
  fetchesInFlight: number;
  /** Bytes of asset answers queued and not yet flushed: bounded by the fetches in flight, not by the limit. */
  assetBytes: number;
  dropped: boolean;
}

/** Connections for the stop services only held at once per client address (a newer one closes the oldest). */
export const PAST_GUESSES_PER_ADDRESS = 2;
/** Who a connection past the guess limit is, whatever its token: it has the stop services only (a read role's). */
export const PAST_GUESSES_PRINCIPAL: Principal = { name: 'past the guess limit', role: 'read' };

/**
 * How long a client dropped for its send buffer has to take its close frame (queued behind what it did not read)
 * before its socket is destroyed.
 */
export const DROP_GRACE_MS = 5000;

/**
 * The sending of frames to clients within `limit` bytes of send buffer each (asset answers being flushed aside):
 * counts what was sent and dropped, logs a drop.
 */
export function clientSender(
  limit: number,
  counts: { sent: number; dropped: number },
  log: (fields: Record<string, string | number>) => void,
): { send(client: Client, data: string | Uint8Array): void; sendAsset(client: Client, data: Uint8Array): void } {
  /**
   * Drops a client whose send buffer passed the limit: nothing more is queued for it, a close frame (1008, saying why)
   * follows what it did not read, and its socket is destroyed after {@link DROP_GRACE_MS} if it has not read that far.
   * Its calls in flight are abandoned at once (their answers cannot reach it: a motion stops, the dead-man), not when
   * its side of the close comes.
   */
  const drop = (client: Client) => {
    client.dropped = true;
    client.gone.abort(FOXGLOVE_CLIENT_DROPPED);
    counts.dropped++;
    log({
      level: 'warn',
      msg: 'foxglove client dropped',
      reason: 'send buffer limit',
      bytes: client.ws.bufferedAmount,
      principal: client.principal.name,
    });
    client.ws.close(1008, `reads too slowly: over ${limit} bytes queued (foxglove.send_buffer_limit)`);
    setTimeout(() => client.ws.terminate(), DROP_GRACE_MS).unref();
  };
  /** True when what is queued for a client, asset answers aside, is past the limit: it is dropped then. */
  const overLimit = (client: Client) => {
    if (client.ws.bufferedAmount - client.assetBytes <= limit) return false;
    drop(client);
    return true;
  };
  /** Sends a frame, or drops the client when its send buffer is past the limit. */
  const send = (client: Client, data: string | Uint8Array): void => {
    if (client.dropped || client.ws.readyState !== client.ws.OPEN || overLimit(client)) return;
    counts.sent++;
    client.ws.send(data);
  };
  /**
   * Sends an asset's answer (a file of up to MAX_ASSET_BYTES, larger than the limit maybe): counted apart from the
   * limit until flushed, so that a client reading a mesh is not dropped for it; its fetch slot is freed only then, so
   * that a client holds at most MAX_FETCHES_IN_FLIGHT of them.
   */
  const sendAsset = (client: Client, data: Uint8Array): void => {
    if (client.dropped || client.ws.readyState !== client.ws.OPEN || overLimit(client)) {
      client.fetchesInFlight--;
      return;
    }
    counts.sent++;
    client.assetBytes += data.byteLength;
    client.ws.send(data, () => {
      client.assetBytes -= data.byteLength;
      client.fetchesInFlight--;
    });
  };
  return { send, sendAsset };
}
