/**
 * The one upgrade dispatcher (the listener's 'upgrade' event). A WebSocket upgrade (a GET, RFC 6455 4.1) goes to the
 * route table's WebSocket route of its path, one to a path without such a route is refused. An upgrade to anything else
 * (h2c, as curl --http2 offers on every request), or offered by another method than GET, is not taken: the request is
 * served over HTTP/1.1 as if it had not offered it (RFC 9110, 7.8), POST /stop included.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { repeatedHeader } from '../admission/front-door.ts';
import { refuseUpgrade } from '../http/raw-answer.ts';
import { pathOf, type RouteTable } from '../http/routes.ts';
import { headWithoutUpgrade, type LogSink } from './own-answers.ts';
import { readRequestTarget } from './request.ts';

export interface UpgradeOptions {
  readonly server: Server;
  readonly routes: Pick<RouteTable, 'match' | 'upgradeAt'>;
  readonly log: LogSink;
}

export interface Upgrades {
  /** True for a connection read again by a new parser after an offer not taken (counted once, when it came). */
  readAgain(socket: Socket): boolean;
}

/** Dispatches `options.server`'s upgrades (see the module comment). */
export function dispatchUpgrades(options: UpgradeOptions): Upgrades {
  const { server, routes, log } = options;
  const reread = new WeakSet<Socket>();
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
    socket.on('error', () => socket.destroy());
    const repeated = repeatedHeader(req.rawHeaders);
    if (repeated) {
      refuseUpgrade(socket, 400, `more than one ${repeated} header`);
      return log({ level: 'info', msg: 'request', method: 'GET', path: path.slice(0, 200), status: 400, ms: 0 });
    }
    if (route) return route.upgrade(req, socket, head);
    refuseUpgrade(socket, 404, `no WebSocket at ${path.slice(0, 200) || 'this target'}`);
    log({ level: 'info', msg: 'request', method: req.method ?? '', path: path.slice(0, 200), status: 404, ms: 0 });
  };
  server.on('upgrade', dispatch);
  return {
    readAgain: (socket) => reread.has(socket),
  };
}
