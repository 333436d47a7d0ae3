/**
 * The one upgrade dispatcher (the listener's 'upgrade' event). A WebSocket upgrade (a GET, RFC 6455 4.1) goes to the
 * route table's WebSocket route of its path, read as the table reads a request's (a trailing slash, a dot segment:
 * RouteTable.upgradeAt); one to a path without such a route is refused. An upgrade to anything else
 * (h2c, as curl --http2 offers on every request), or offered by another method than GET, is not taken: the request is
 * served over HTTP/1.1 as if it had not offered it (RFC 9110, 7.8), POST /stop included.
 *
 * An offer pipelined behind a request still being answered on its connection: Node's parser hands the socket over at
 * the offer's head, while the earlier answer is still to be written by the parser it leaves. A new parser made at once
 * would queue its answers behind that one, which it never sees end: they were never written, and the client waited
 * for ever. So the offer is dealt with once every earlier answer is written, answers going out in the order asked; a
 * stop offered so is carried out at once all the same, and its answer, made then, written in its turn.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { repeatedHeader } from '../admission/front-door.ts';
import { refuseUpgrade } from '../http/raw-answer.ts';
import { isBodilessStop, pathOf, type RouteMatch, type RouteTable } from '../http/routes.ts';
import { headWithoutUpgrade, type LogSink } from './own-answers.ts';
import { readRequestTarget } from './request.ts';
import type { ServedTarget } from './unanswered-stops.ts';

export interface UpgradeOptions {
  readonly server: Server;
  readonly routes: Pick<RouteTable, 'match' | 'upgradeAt'>;
  readonly log: LogSink;
  /**
   * Connections read again by a new parser after an offer not taken, added here: the listener counts them once, when
   * they came (a set it holds, so that nothing of this module runs for a new connection: the read's walk).
   */
  readonly reread: WeakSet<Socket>;
  /** Carries out the stop `req` is, at once: its answer, written when the request is read again in its turn. */
  readonly stopNow: (req: IncomingMessage, target: ServedTarget, match: RouteMatch) => Promise<Response>;
}

export interface Upgrades {
  /** The answer of the stop carried out when its offer was seen on `socket`, taken once by that stop read again. */
  takeStopAnswer(socket: Socket): Promise<Response> | undefined;
}

/** The response being written on a socket by Node's server, if any (see listener.ts's isIdle). */
const pendingAnswer = (socket: Duplex) =>
  (socket as Duplex & { _httpMessage?: Duplex | null })._httpMessage ?? undefined;

/** Ends a socket on its error (a reset): the listener of {@link endOnError}. */
function destroyOnError(this: Duplex): void {
  this.destroy();
}

/**
 * Adds {@link destroyOnError} to `socket` once: a connection offering upgrade after upgrade, each behind a pending
 * answer, added one listener each (a warning past 10, and memory for as long as the connection lived).
 */
function endOnError(socket: Duplex): void {
  if (!socket.listeners('error').includes(destroyOnError)) socket.on('error', destroyOnError);
}

/** Dispatches `options.server`'s upgrades (see the module comment). */
export function dispatchUpgrades(options: UpgradeOptions): Upgrades {
  const { server, routes, log, reread } = options;
  const stopAnswers = new WeakMap<Socket, Promise<Response>>();
  const offerTaken = (req: IncomingMessage) =>
    req.method === 'GET' && /^\s*websocket\s*$/i.test(req.headers.upgrade ?? '');
  const dispatch = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (!offerTaken(req)) {
      // Node's parser stopped at the head of an upgrade: the head without the offer goes back in front of what followed
      // it, read by a new parser of this server.
      socket.unshift(Buffer.concat([Buffer.from(headWithoutUpgrade(req), 'latin1'), head]));
      reread.add(socket as Socket);
      return void server.emit('connection', socket);
    }
    const target = readRequestTarget(req.method ?? '', req.url ?? '');
    const path = target.kind === 'refuse' || target.kind === 'server_options' ? '' : pathOf(target.path);
    const route = routes.upgradeAt(path);
    endOnError(socket);
    const repeated = repeatedHeader(req.rawHeaders);
    if (repeated) {
      refuseUpgrade(socket, 400, `more than one ${repeated} header`);
      return log({ level: 'info', msg: 'request', method: 'GET', path: path.slice(0, 200), status: 400, ms: 0 });
    }
    if (route) return route.upgrade(req, socket, head);
    refuseUpgrade(socket, 404, `no WebSocket at ${path.slice(0, 200) || 'this target'}`);
    log({ level: 'info', msg: 'request', method: req.method ?? '', path: path.slice(0, 200), status: 404, ms: 0 });
  };
  /** Dispatches the offer once no answer is being written on its socket (every earlier one written). */
  const inTurn = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (socket.destroyed) return;
    const pending = pendingAnswer(socket);
    if (pending === undefined) {
      // The earlier answer closed the connection (Connection: close): no answer follows it.
      if (!socket.writable) return void socket.destroy();
      // The parser left behind set its keep-alive timeout as its last answer ended: the connection is not idle.
      (socket as Socket).setTimeout(0);
      return dispatch(req, socket, head);
    }
    // Its 'close' comes after Node's own end of the answer (the next one queued is given the socket then).
    pending.once('close', () => inTurn(req, socket, head));
  };
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (pendingAnswer(socket) === undefined) return dispatch(req, socket, head);
    // Node took its parser's error listener off the socket: a reset while waiting ends it.
    endOnError(socket);
    const target = readRequestTarget(req.method ?? '', req.url ?? '');
    if (!offerTaken(req) && target.kind === 'serve' && !repeatedHeader(req.rawHeaders)) {
      const match = routes.match(req.method ?? '', target.path);
      if (isBodilessStop(match)) {
        const answer = options.stopNow(req, target, match);
        // Its taker reads a failure; one never taken (the client went) is no unhandled rejection.
        answer.catch(() => {});
        stopAnswers.set(socket as Socket, answer);
      }
    }
    inTurn(req, socket, head);
  });
  return {
    takeStopAnswer: (socket) => {
      const answer = stopAnswers.get(socket);
      if (answer) stopAnswers.delete(socket);
      return answer;
    },
  };
}
