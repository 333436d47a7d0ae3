/**
 * The /events heartbeat runs on the app's clock (issue 35, time as a dependency): a `: heartbeat` comment every 15 s of
 * the clock the app is composed with, none before, seen through GET /events of the app in memory on a stepped clock.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openSse } from '../support/sse.ts';
import { createSteppedApp } from '../support/stepped.ts';

describe('the /events heartbeat on the app clock', () => {
  it('comes at 15 s of the stepped clock, not before, then every 15 s', async () => {
    const { app, clock } = await createSteppedApp();
    try {
      const stream = await openSse(app, '/events?rate_hz=1');
      assert.equal(stream.status, 200);
      const heartbeats = () => stream.comments.filter((c) => c === 'heartbeat').length;
      /** Turns of the event loop (no time passes on the clock) until `n` heartbeats have reached the reader. */
      const delivered = async (n: number) => {
        for (let k = 0; k < 50 && heartbeats() < n; k++) await new Promise<void>((resolve) => setImmediate(resolve));
      };
      // 14.9 s of the clock: a joint state each second, no heartbeat.
      for (let k = 0; k < 149; k++) await clock.advance(100);
      assert.ok(stream.events.length >= 10, `the stream was read meanwhile (${stream.events.length} events)`);
      assert.equal(heartbeats(), 0, 'no heartbeat before 15 s of the clock');
      // To 15 s: the first.
      for (let k = 0; k < 10; k++) await clock.advance(10);
      await delivered(1);
      assert.equal(heartbeats(), 1, 'one heartbeat at 15 s of the clock');
      // To 29.9 s: still one; to 30 s: the second.
      for (let k = 0; k < 149; k++) await clock.advance(100);
      assert.equal(heartbeats(), 1, 'no second heartbeat before 30 s');
      for (let k = 0; k < 10; k++) await clock.advance(10);
      await delivered(2);
      assert.equal(heartbeats(), 2, 'the second at 30 s');
      stream.close();
    } finally {
      await app.close();
    }
  });
});
