/**
 * The dead-man of a motion: a call that moves the arm and answers when the motion ends (a move, a
 * plan's execution, a trajectory sent with `wait`) is tied to its caller's connection. When the
 * caller is gone before the answer (the HTTP request's connection closed, an MCP call's connection
 * closed without a cancel), nobody watches the arm any more, so it is stopped as POST /stop stops it
 * (decelerating within the limits), unless `armgate.safety.dead_man` is false.
 */

/** Why a REST motion stopped: its client closed the connection before the answer. */
export const HTTP_CLIENT_GONE =
  'the client disconnected before the motion finished (the HTTP request that started it is gone)';

/** Why an MCP motion stopped: the connection that carried the call closed without a cancel. */
export const MCP_CALL_ABANDONED =
  'the MCP client abandoned the call: its connection closed before the answer, without a cancel';

/** Why a Foxglove service's motion stopped: the WebSocket connection that called it closed before the answer. */
export const FOXGLOVE_CLIENT_GONE =
  'the Foxglove client disconnected before the motion finished (the WebSocket connection that called the service is gone)';

/**
 * Why a Foxglove service's motion stopped: the server closed the connection that called it (the client read too slowly
 * or sent too many messages), so its answer can never reach it, whenever the client's side of the close comes.
 */
export const FOXGLOVE_CLIENT_DROPPED =
  'the server closed the Foxglove connection that called the service before the motion finished (it read too slowly or sent too many messages): no answer can reach it';

const REASONS: ReadonlySet<unknown> = new Set([
  HTTP_CLIENT_GONE,
  MCP_CALL_ABANDONED,
  FOXGLOVE_CLIENT_GONE,
  FOXGLOVE_CLIENT_DROPPED,
]);

/** True when a call's signal was aborted because its caller is gone (not a cancel, not a stop). */
export function callerGone(signal: AbortSignal): boolean {
  return signal.aborted && REASONS.has(signal.reason);
}

/**
 * A signal that aborts with `reason` when `connection` aborts (the request's connection closed
 * before the response finished); already aborted when it is.
 */
export function goneSignal(connection: AbortSignal, reason: string): AbortSignal {
  if (connection.aborted) return AbortSignal.abort(reason);
  const controller = new AbortController();
  connection.addEventListener('abort', () => controller.abort(reason), { once: true });
  return controller.signal;
}
