/**
 * Request handling in small batches per turn of the event loop, so that the loop polls for I/O
 * between batches: under hundreds of concurrent readers a turn stays short, and a request that
 * must win (POST /stop) is read and answered within a batch's time instead of after every
 * pending read of the turn. Urgent requests are not queued at all.
 */

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
