/**
 * A jog whose command lapsed while the event loop was held (the next command arrives after its ttl): the command that
 * finds it ended starts a new jog under a new lease, and no jog ever runs without one. The simulator on a clock the
 * test steps (lib/clock.ts), the jog service of the app.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SteppedClock } from '../../lib/clock.ts';
import { SimContext } from '../../lib/sim/context.ts';
import { createTestApp, type TestApp, testConfig } from '../support/server.ts';

const clock = new SteppedClock(0, 1.7e12);
let app: TestApp;

describe('a jog that lapsed before its next command', () => {
  before(async () => {
    const context = await SimContext.create(await testConfig({ sim: { time_scale: 1 } }), clock);
    app = await createTestApp({}, { context });
  });
  after(() => app.close());

  it('is ended, and the next command starts a new jog under a new lease', () => {
    const jog = app.services.jog;
    assert.ok(jog);
    const facts = {
      caller: { name: 'pendant', role: 'operate', face: 'rest' as const },
      owner: { key: 'rest:pendant', via: 'rest' as const },
      arrivedAtStop: app.services.arbiter.stopCount,
    };
    const ends: string[] = [];
    const off = jog.onEvents((e) => {
      if (e.state === 'ended') ends.push(e.reason ?? '');
    });
    const target = { kind: 'joints', fractions: [0, 0, 0, 0, 0, 0, 1] } as const;
    assert.equal(jog.command(target, 100, facts).ok, true);
    clock.skip(50);
    assert.equal(jog.command(target, 100, facts).ok, true, 'extended');
    // The loop is held for 400 ms: the command lapses and the arm brakes to rest in the periods the next one runs.
    clock.skip(400);
    const again = jog.command(target, 100, facts);
    assert.equal(again.ok, true, JSON.stringify(again));
    assert.deepEqual(ends, ['ttl']);
    assert.equal(jog.owner(), 'rest:pendant', 'the new jog has its owner');
    assert.equal(app.services.arbiter.activity()?.kind, 'jog');
    // The lease and the controller agree: a move is refused by the lease, named as the jog's holder.
    const busy = app.services.arbiter.acquire('move', 'a move');
    assert.equal(busy.ok, false);
    assert.match(busy.ok ? '' : busy.error.detail, /jogging \(pendant over rest\)/);
    clock.skip(1000);
    app.context.jogStatus?.();
    off();
  });
});
