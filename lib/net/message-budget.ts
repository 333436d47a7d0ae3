/**
 * One budget of WebSocket messages handled per turn of the event loop, shared by every WebSocket face (the jog route,
 * Foxglove). Each connection has a cap of its own (messages a second, closed past it); this bounds their sum, so that
 * a crowd of connections each under its cap cannot hold the loop between two polls: a POST /stop's socket is read at
 * the next poll, at most one budget's worth of messages later.
 *
 * A message is handled at once while the turn's budget lasts and its connection has nothing waiting; otherwise it
 * waits in one queue, in arrival order across all connections, and its connection is paused (TCP back-pressure:
 * nothing more is read from it, nothing is dropped) until its last waiting message is handled. The queue is drained
 * a budget per turn (setImmediate: after the poll phase, so sockets are read between two drains). A connection's
 * messages keep their order; a stop among them waits for the messages that arrived before it, as it would without
 * the budget, never for later ones.
 */

/** A connection that can stop and start reading (ws's WebSocket: pause() and resume() of its socket). */
export interface Pausable {
  pause(): void;
  resume(): void;
}

export interface MessageBudget {
  /** Handles `task` (one message of `connection`) now, or queues it and pauses `connection` (see above). */
  handle(connection: Pausable, task: () => void): void;
  /** Messages handled at once, messages queued, and times a connection was paused. */
  readonly counts: { readonly immediate: number; readonly queued: number; readonly pauses: number };
}

/** Messages handled per turn of the event loop, across all WebSocket connections. */
export const MESSAGES_PER_TURN = 32;

/** A budget of `perTurn` messages a turn; `nextTurn` schedules the drain (setImmediate, or a stepped one in tests). */
export function createMessageBudget(
  perTurn = MESSAGES_PER_TURN,
  nextTurn: (drain: () => void) => void = setImmediate,
): MessageBudget {
  const queue: ({ connection: Pausable; task: () => void } | undefined)[] = [];
  let head = 0;
  /** How many messages of each paused connection wait in the queue. */
  const waiting = new Map<Pausable, number>();
  let used = 0;
  let scheduled = false;
  const counts = { immediate: 0, queued: 0, pauses: 0 };

  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    nextTurn(turn);
  };
  // A task's fault is not the queue's: it is raised outside the drain (as an uncaught error), the drain goes on.
  const run = (task: () => void) => {
    try {
      task();
    } catch (e) {
      queueMicrotask(() => {
        throw e;
      });
    }
  };
  function turn(): void {
    scheduled = false;
    used = 0;
    while (head < queue.length && used < perTurn) {
      const entry = queue[head];
      queue[head++] = undefined;
      if (!entry) continue;
      used++;
      run(entry.task);
      const left = (waiting.get(entry.connection) ?? 1) - 1;
      if (left > 0) waiting.set(entry.connection, left);
      else {
        waiting.delete(entry.connection);
        entry.connection.resume();
      }
    }
    if (head === queue.length) {
      queue.length = 0;
      head = 0;
    }
    // Another drain while messages wait, or to begin the next turn's budget afresh.
    if (head < queue.length || used > 0) schedule();
  }

  return {
    counts,
    handle(connection, task) {
      const queuedBefore = waiting.get(connection);
      if (queuedBefore === undefined && used < perTurn) {
        used++;
        counts.immediate++;
        schedule();
        return run(task);
      }
      counts.queued++;
      queue.push({ connection, task });
      waiting.set(connection, (queuedBefore ?? 0) + 1);
      if (queuedBefore === undefined) {
        counts.pauses++;
        connection.pause();
      }
      schedule();
    },
  };
}

/** The process's budget, shared by the jog WebSocket route and the Foxglove server. */
export const webSocketMessages = createMessageBudget();
