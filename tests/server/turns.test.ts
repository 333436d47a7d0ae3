import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createTurnQueue, HANDLERS_PER_TURN } from '../../lib/server/request.ts';

describe('createTurnQueue: request handlers a few per turn of the event loop', () => {
  it('starts at most its batch per turn, in order, and lets the loop run between batches', async () => {
    const inTurn = createTurnQueue(4);
    const started: number[] = [];
    const results = Array.from({ length: 10 }, (_, i) =>
      inTurn(async () => {
        started.push(i);
        return i * 2;
      }),
    );
    // Scheduled after the first batch: it runs between the first and the second batch.
    const between = await new Promise<number>((resolve) => setImmediate(() => resolve(started.length)));
    assert.equal(between, 4, 'one batch of 4 before the loop turned');
    assert.deepEqual(await Promise.all(results), [0, 2, 4, 6, 8, 10, 12, 14, 16, 18], 'every task answered');
    assert.deepEqual(started, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], 'in arrival order');
  });

  it('passes a failure on to its caller and keeps serving', async () => {
    const inTurn = createTurnQueue();
    await assert.rejects(
      inTurn(async () => {
        throw new Error('handler bug');
      }),
      /handler bug/,
    );
    assert.equal(await inTurn(async () => 'next'), 'next', 'the queue still runs tasks');
    assert.ok(HANDLERS_PER_TURN >= 1, 'a positive batch');
  });
});
