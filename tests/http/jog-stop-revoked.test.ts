/**
 * The jog layer itself refuses the client whose jog a stop revoked (defense in depth): on the simulator and on ros2
 * the stop's hold point ends the jog in the same turn as the revocation, so it also ends a command that slipped past.
 * Here the controller takes the hold point late (a topic slow to deliver it): a command from the revoked client in
 * between must not take the jog up again. The app in memory on a clock the test steps.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { SteppedClock } from '../../lib/clock.ts';
import type { TestApp } from '../support/server.ts';
import { createSteppedApp, steppedUntilSettled, waitOnClock } from '../support/stepped.ts';

const J1 = { joints: [1, 0, 0, 0, 0, 0, 0], ttl_ms: 500 };

describe('a jog command from the client whose jog a stop revoked', () => {
  let app: TestApp;
  let clock: SteppedClock;
  /** Opens the gate the hold point waits at (set while a stop's hold point is held back). */
  let openGate: (() => void) | undefined;
  let holdsHeldBack = 0;

  before(async () => {
    ({ app, clock } = await createSteppedApp({ sim: { time_scale: 1 } }));
    // The controller takes the stop's hold point only when the test opens the gate.
    const context = app.context;
    const publish = context.publishTrajectory.bind(context);
    context.publishTrajectory = async (msg, options) => {
      if (options?.hold) {
        holdsHeldBack++;
        await new Promise<void>((resolve) => {
          openGate = resolve;
        });
      }
      return publish(msg, options);
    };
  });
  after(async () => {
    openGate?.();
    await app.close();
  });

  const send = (route: string, body?: unknown) =>
    app.request(route, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const answer = <T>(pending: Promise<T>, what: string) => steppedUntilSettled(clock, pending, what);
  const moving = () => app.context.jogStatus?.().moving ?? false;

  it('is refused by the jog layer (409) while the stop brakes the arm, and jogs anew after the stop', async () => {
    const started = await answer(send('/robot/jog', J1), 'the jog');
    assert.equal(started.status, 200, await started.text());
    await clock.advance(100);
    const stop = send('/stop');
    await waitOnClock(
      clock,
      "the stop's hold point",
      async () => holdsHeldBack,
      (n) => n === 1,
      1000,
      1,
    );
    // The stop has revoked the jog; its hold point has not reached the controller yet.
    const during = await answer(send('/robot/jog', J1), 'a command during the stop');
    const text = await during.text();
    assert.equal(during.status, 409, text);
    assert.match(JSON.parse(text).detail, /a stop ended this jog/);
    // So is a step of the same client: at once, not once its revoked jog has ended.
    const step = await answer(send('/robot/jog/step', { joint: 1, delta: 0.1 }), 'a step during the stop');
    const stepText = await step.text();
    assert.equal(step.status, 409, stepText);
    assert.match(JSON.parse(stepText).detail, /a stop ended this jog/);
    // A release from the same client takes nothing up again either: it answers at once.
    const release = await answer(send('/robot/jog', { joints: [0, 0, 0, 0, 0, 0, 0] }), 'a release');
    assert.equal(release.status, 200);
    assert.equal(((await release.json()) as { jogging: boolean }).jogging, false);
    // The engine brakes on the stop alone: the jog ends by the stop.
    openGate?.();
    assert.equal((await answer(stop, 'the stop')).status, 200);
    assert.ok(await clock.until(() => app.services.jog?.owner() === undefined && !moving(), 2, 2000), 'at rest');
    // As documented: a command sent after the stop's answer, the arm at rest, starts a new jog.
    const again = await answer(send('/robot/jog', { ...J1, ttl_ms: 50 }), 'a command after the stop');
    assert.equal(again.status, 200, await again.text());
    assert.equal(((await again.json()) as { jogging: boolean }).jogging, true);
  });
});
