/**
 * GET /robot/jog as a WebSocket (lib/http/websocket.ts: admission, the token by header or subprotocol, the role,
 * the caps, and each text message called through the pipeline as a body of POST /robot/jog). The server sends a status
 * (JSON) every {@link STATUS_PERIOD_MS} ms while this socket's jog is in force. The socket closing brakes the arm;
 * silence past the ttl brakes it anyway (the dead-man). One jogging socket at a time (4409).
 */
import { webSocketRoute } from '../../lib/http/websocket.ts';
import { operation } from './jog.ts';

/** The subprotocol the server answers with (non-secret); a browser client offers it beside its token. */
export const JOG_PROTOCOL = 'armgate.jog.v1';
/** How often a status goes out while the socket's jog is in force (ms): 20 a second. */
export const STATUS_PERIOD_MS = 50;
/** The close code of a socket opened while another one jogs. */
export const CLOSE_BUSY = 4409;

/** GET /robot/jog (the WebSocket) */
export const websocket = webSocketRoute({
  name: 'jog',
  path: '/robot/jog',
  operation,
  protocol: JOG_PROTOCOL,
  maxMessageBytes: 4096,
  maxMessagesPerS: 100,
  unavailable: ({ services, ros }) =>
    services.jog && ros.jog ? undefined : 'jogging is not available on this backend',
  serve: ({ services }) => {
    /** The socket that holds the jog slot (one jogging client at a time). */
    let holder: { readonly open: boolean; readonly caller: { readonly name: string } } | undefined;
    return (connection) => {
      const jog = services.jog;
      if (!jog) return void connection.close(1011, 'jogging is not available');
      if (holder?.open) {
        connection.close(
          CLOSE_BUSY,
          `another client jogs over the WebSocket (${holder.caller.name}); one jogging client at a time`,
        );
        return undefined;
      }
      holder = connection;
      const key = connection.channel.key;
      const status = (extra: Record<string, unknown> = {}) => {
        const now = jog.status();
        if (!now) return;
        connection.send({
          type: 'status',
          jogging: jog.owner() === key,
          moving: now.moving,
          paused: now.paused,
          positions: now.positions.map((q) => Math.round(q * 1e6) / 1e6),
          limit: now.limit,
          ...extra,
        });
      };
      let ticker: ReturnType<typeof setInterval> | undefined;
      const stopTicker = () => {
        if (ticker) clearInterval(ticker);
        ticker = undefined;
      };
      const unsubscribe = jog.onEvents((event) => {
        if (event.owner !== key) return;
        if (event.state === 'started' && !ticker) ticker = setInterval(() => status(), STATUS_PERIOD_MS);
        if (event.state === 'ended') {
          stopTicker();
          // The jog is over (its owner is cleared only after the listeners run).
          status({ jogging: false, ended: event.reason ?? 'released' });
        }
      });
      status();
      return {
        closed() {
          stopTicker();
          unsubscribe();
          jog.release(key, 'socket closed');
          if (holder === connection) holder = undefined;
        },
      };
    };
  },
});
