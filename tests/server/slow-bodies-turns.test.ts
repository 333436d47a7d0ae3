import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, it } from 'node:test';
import { watchBodies } from '../../lib/server/slow-bodies.ts';

/** A request whose body has not started (no byte since its headers) and its unanswered response. */
function stalled(): { req: IncomingMessage; res: ServerResponse } {
  const req = { complete: false, destroyed: false, readableLength: 0, socket: { bytesRead: 0 } };
  const res = Object.assign(new EventEmitter(), { writableEnded: false });
  return { req: req as unknown as IncomingMessage, res: res as unknown as ServerResponse };
}

describe('slow bodies found at once are cut over several turns of the event loop', () => {
  it('cuts at most 16 in one turn, and every one of them in the end', async () => {
    const cuts: IncomingMessage[] = [];
    let inFirstTurn: number | undefined;
    const all = new Promise<void>((resolve) => {
      const watcher = watchBodies({ graceMs: 0, minBytesPerS: 1 }, (req) => {
        // The first cut's turn ends before the next batch: what was cut by then was cut in one turn.
        if (cuts.length === 0) setImmediate(() => (inFirstTurn ??= cuts.length));
        cuts.push(req);
        if (cuts.length === 40) {
          watcher.close();
          resolve();
        }
      });
      for (let i = 0; i < 40; i++) {
        const { req, res } = stalled();
        watcher.watch(req, res);
      }
    });
    // The watcher's timer does not keep the process alive; this does, until every body is cut.
    const alive = setTimeout(() => undefined, 5000);
    await all;
    clearTimeout(alive);
    assert.equal(new Set(cuts).size, 40, 'every stalled body is cut, once');
    assert.equal(inFirstTurn, 16, 'the first turn cut 16');
  });
});

describe('a body whose exchange is over is forgotten at once', () => {
  it('never cuts a stalled body once its response has closed', async () => {
    const cuts: IncomingMessage[] = [];
    const watcher = watchBodies({ graceMs: 0, minBytesPerS: 1 }, (req) => cuts.push(req));
    const closed = stalled();
    const open = stalled();
    watcher.watch(closed.req, closed.res);
    watcher.watch(open.req, open.res);
    (closed.res as unknown as EventEmitter).emit('close');
    const alive = setTimeout(() => undefined, 5000);
    while (cuts.length === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    await new Promise((resolve) => setTimeout(resolve, 300));
    clearTimeout(alive);
    watcher.close();
    assert.deepEqual(cuts, [open.req], 'only the body still in flight is cut');
  });
});
