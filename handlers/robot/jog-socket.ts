/**
 * GET /robot/jog as a WebSocket (lib/http/websocket.ts: admission, the token by header or subprotocol, the role,
 * the caps, and each text message called through the pipeline as a body of POST /robot/jog). The server sends a status
 * (JSON) every {@link STATUS_PERIOD_MS} ms of the app's clock while this socket's jog is in force. The socket closing brakes the arm;
 * silence past the ttl brakes it anyway (the dead-man). One jogging socket at a time: a socket opened while another
 * one jogs is closed (4409); one that is open but idle holds nothing.
 */
import { systemClock, type Timer } from '../../lib/clock.ts';
import { webSocketRoute } from '../../lib/http/websocket.ts';
import { operation } from './jog.ts';

/** The subprotocol the server answers with (non-secret); a browser client offers it beside its token. */
export const JOG_PROTOCOL = 'armgate.jog.v1';
/** How often a status goes out while the socket's jog is in force (ms): 20 a second. */
export const STATUS_PERIOD_MS = 50;
/** The close code of a socket opened while another socket's jog is in force. */
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
    // The status rate is the app's clock's (a stepped one in tests), as the jog's ttl is.
    const clock = services.clock ?? systemClock;
    /** The sockets open on this route, by their channel's key: the one whose jog is in force holds the arm. */
    const open = new Map<string, { readonly caller: { readonly name: string } }>();
    return (connection) => {
      const jog = services.jog;
      if (!jog) return void connection.close(1011, 'jogging is not available');
      // One jogging client at a time: a socket opened while another one's jog is in force is closed with the reason.
      // An open socket that does not jog holds nothing (its commands are refused as any client's while another jogs).
      const jogging = open.get(jog.owner() ?? '');
      if (jogging) {
        connection.close(
          CLOSE_BUSY,
          `another client jogs over the WebSocket (${jogging.caller.name}); one jogging client at a time`,
        );
        return undefined;
      }
      const key = connection.channel.key;
      open.set(key, connection);
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
      let ticker: Timer | undefined;
      const stopTicker = () => {
        ticker?.cancel();
        ticker = undefined;
      };
      const unsubscribe = jog.onEvents((event) => {
        if (event.owner !== key) return;
        if (event.state === 'started' && !ticker) ticker = clock.every(STATUS_PERIOD_MS, () => status());
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
          open.delete(key);
        },
      };
    };
  },
});
