/** The Foxglove WebSocket protocol v1 as armgate speaks it (lib/foxglove/server.ts): its bounds, opcodes and frames. */
import type { Result } from '../result.ts';

/** The subprotocol of the Foxglove WebSocket protocol v1. */
export const SUBPROTOCOL = 'foxglove.websocket.v1';
/** The largest frame a client may send (bytes); a larger one closes the connection (1009). */
export const MAX_CLIENT_FRAME = 1024 * 1024;
/**
 * Messages a client may send in one second; beyond, the connection is closed (1008) and read no further: each costs
 * little to send and an answer to handle (a flood of them kept POST /stop waiting for seconds).
 */
export const MAX_CLIENT_MESSAGES_PER_S = 1000;
/** Subscriptions one client may hold at once. */
export const MAX_SUBSCRIPTIONS = 256;
/** Service calls one client may have in flight at once. */
export const MAX_CALLS_IN_FLIGHT = 16;
/** Asset fetches one client may have in flight at once (each reads a file of up to MAX_ASSET_BYTES). */
export const MAX_FETCHES_IN_FLIGHT = 4;

// The protocol's opcodes and levels (the values of @foxglove/ws-protocol's BinaryOpcode, ClientBinaryOpcode,
// StatusLevel (warning 1, error 2), FetchAssetStatus; its index pulls its own server and client into the bundle, so they are named here).
export const OP_MESSAGE_DATA = 1;
export const OP_SERVICE_CALL_RESPONSE = 3;
export const OP_FETCH_ASSET_RESPONSE = 4;
export const CLIENT_OP_SERVICE_CALL_REQUEST = 2;
export const LEVEL_WARNING = 1;
export const LEVEL_ERROR = 2;

/** A messageData frame: a subscription's message and its time (ns). */
export function messageFrame(subscriptionId: number, data: Uint8Array, timeNs: bigint): Uint8Array {
  const frame = Buffer.allocUnsafe(13 + data.byteLength);
  frame.writeUInt8(OP_MESSAGE_DATA, 0);
  frame.writeUInt32LE(subscriptionId, 1);
  frame.writeBigUInt64LE(timeNs, 5);
  frame.set(data, 13);
  return frame;
}

/** A fetchAssetResponse frame: the asset's bytes, or the error. */
export function fetchAssetResponseFrame(requestId: number, found: Result<Uint8Array, string>): Uint8Array {
  const error = found.ok ? new Uint8Array() : Buffer.from(found.error);
  const data = found.ok ? found.value : new Uint8Array();
  const frame = Buffer.allocUnsafe(10 + error.byteLength + data.byteLength);
  frame.writeUInt8(OP_FETCH_ASSET_RESPONSE, 0);
  frame.writeUInt32LE(requestId, 1);
  frame.writeUInt8(found.ok ? 0 : 1, 5);
  frame.writeUInt32LE(error.byteLength, 6);
  frame.set(error, 10);
  frame.set(data, 10 + error.byteLength);
  return frame;
}

/** A serviceCallResponse frame: the response `data`, in `encoding`. */
export function serviceCallResponseFrame(
  serviceId: number,
  callId: number,
  encoding: string,
  data: Uint8Array,
): Uint8Array {
  const enc = Buffer.from(encoding);
  const out = Buffer.allocUnsafe(13 + enc.byteLength + data.byteLength);
  out.writeUInt8(OP_SERVICE_CALL_RESPONSE, 0);
  out.writeUInt32LE(serviceId, 1);
  out.writeUInt32LE(callId, 5);
  out.writeUInt32LE(enc.byteLength, 9);
  out.set(enc, 13);
  out.set(data, 13 + enc.byteLength);
  return out;
}
