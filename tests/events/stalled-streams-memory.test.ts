/**
 * An /events stream in memory (the app without a socket) whose reader stops reading: once it took nothing for
 * web.limits.event_stall_s of the app's clock it is ended, with what waits for it and a last comment saying why, as a
 * stream on a socket is (tests/events/stalled-streams.test.ts); a reader that reads keeps its stream.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openSse } from '../support/sse.ts';
import { createSteppedApp } from '../support/stepped.ts';

describe('an /events stream in memory whose reader stops reading', () => {
  it('ends after event_stall_s of the clock with the newest joint state and a last comment saying why', async () => {
    const { app, clock: appClock } = await createSteppedApp({ web: { limits: { event_stall_s: 2 } } });
    try {
      const stalled = await app.request('/events?rate_hz=50');
      const reading = await openSse(app, '/events?rate_hz=50');
      assert.equal(stalled.status, 200);
      const reader = stalled.body?.getReader();
      assert.ok(reader);
      const decoder = new TextDecoder();
      let text = decoder.decode((await reader.read()).value, { stream: true });
      const from = app.logs.length;
      const ended = () => app.logs.slice(from).filter((l) => l.msg === 'event streams ended');
      // Not before it took nothing for 2 s of the clock...
      for (let k = 0; k < 150; k++) await appClock.advance(10);
      assert.deepEqual(ended(), []);
      // ...and by one sweep (1 s) after.
      for (let k = 0; k < 200; k++) await appClock.advance(10);
      assert.equal(ended().length, 1, JSON.stringify(ended()));
      assert.equal(ended()[0]?.streams, 1);
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
      assert.match(text, /^retry: 2000\n/);
      assert.match(
        text,
        /event: joint_state\ndata: .*\n\n: ended: reads too slowly \(took nothing for 2 s: web\.limits\.event_stall_s\)\n\n$/,
      );
      // The stream that was read all along goes on.
      const seen = reading.events.length;
      const next = reading.next((e) => e.type === 'joint_state', 10_000, seen);
      await appClock.advance(100);
      await next;
      reading.close();
    } finally {
      await app.close();
    }
  });
});

describe('many /events streams that stall at once', () => {
  it('are ended 64 per turn of the event loop (a stop waits for one batch, not all), a line per batch', async () => {
    const { app, clock } = await createSteppedApp({ web: { limits: { event_stall_s: 1 } } });
    try {
      const streams = await Promise.all(Array.from({ length: 200 }, () => app.request('/events?rate_hz=50')));
      assert.ok(streams.every((s) => s.status === 200));
      const from = app.logs.length;
      const ended = () => app.logs.slice(from).filter((l) => l.msg === 'event streams ended');
      for (let k = 0; k < 300 && ended().length < 4; k++) await clock.advance(10);
      assert.deepEqual(
        ended().map((l) => l.streams),
        [64, 64, 64, 8],
      );
      assert.equal(ended().at(-1)?.total, 200);
      for (const s of streams) await s.body?.cancel();
    } finally {
      await app.close();
    }
  });
});
