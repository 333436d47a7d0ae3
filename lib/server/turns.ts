/**
 * The order requests run in. Request handling in small batches per turn of the event loop, so that the loop polls for
 * I/O between batches: under hundreds of concurrent readers a turn stays short, and a request that must win (POST
 * /stop) is read and answered within a batch's time instead of after every pending read of the turn. Urgent requests
 * are not queued at all; each request is stamped with the arbiter's count of stops when it arrives.
 */
import { type App, pathOf, type RouteTable } from '../http/routes.ts';

/** Handlers started per turn of the event loop. */
export const HANDLERS_PER_TURN = 8;

/** A queue of request handlers run {@link HANDLERS_PER_TURN} at a time, one batch per turn. */
export function createTurnQueue(perTurn = HANDLERS_PER_TURN): <T>(task: () => Promise<T>) => Promise<T> {
  let queue: (() => void)[] = [];
  let head = 0;
  let scheduled = false;
  const drain = () => {
    const end = Math.min(head + perTurn, queue.length);
    while (head < end) {
      const task = queue[head] as () => void;
      queue[head++] = noop;
      task();
    }
    if (head < queue.length) setImmediate(drain);
    else {
      queue = [];
      head = 0;
      scheduled = false;
    }
  };
  return (task) =>
    new Promise((resolve, reject) => {
      queue.push(() => {
        task().then(resolve, reject);
      });
      if (!scheduled) {
        scheduled = true;
        setImmediate(drain);
      }
    });
}

function noop(): void {}

/** What the order of requests reads besides the app and its turn queue. */
export interface RequestOrder {
  /** The route table: which request lines are stops, and which schedule their own work. */
  readonly routes: Pick<RouteTable, 'isStop' | 'runsAtOnce'>;
  /** The arbiter: its count of stops, read when a request arrives. */
  readonly arbiter: { readonly stopCount: number };
  /** The event hub: held while a stop is answered, so that its answer is written before its events. */
  readonly events: { hold(): () => void };
}

/**
 * The app as the server serves it, in order: each request stamped with the arbiter's count of stops on arrival (one
 * that arrived before a stop cannot move after it); a stop answered at once, its answer written before its events
 * (and the joint states meanwhile) are fanned out; a route that schedules its own work let in at once (the MCP
 * endpoint's POST, once its body is read); everything else a few per turn (`inTurn`).
 */
export function inOrder(
  app: App,
  inTurn: <T>(task: () => Promise<T>) => Promise<T>,
  { routes, arbiter, events }: RequestOrder,
): (request: Request, address?: string, arrivedAtStop?: number) => Promise<Response> {
  // The listener stamps a request as its head is parsed (lib/server/listener.ts); one it did not is stamped now.
  return (request, address = '', arrivedAtStop = arbiter.stopCount) => {
    const path = pathOf(request.url);
    if (routes.isStop(request.method, path)) {
      const release = events.hold();
      return app(request, arrivedAtStop, address).finally(release);
    }
    return routes.runsAtOnce(request.method, path)
      ? app(request, arrivedAtStop, address)
      : inTurn(() => app(request, arrivedAtStop, address));
  };
}
