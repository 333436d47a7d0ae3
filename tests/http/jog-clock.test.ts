/**
 * The jog's dead-man counted exactly, on a clock the test steps (the simulator at time_scale 1): one command alone
 * moves the arm for its ttl and no controller period more. On the machine's clock start-up lag hides one period.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SteppedClock } from '../../lib/clock.ts';
import { SimContext } from '../../lib/sim/context.ts';
import { createTestApp, type TestApp, testConfig } from '../support/server.ts';

const VMAX_J7 = 3.14;
const JOINT_SPEED = 0.25;

describe('one jog command alone, on a stepped clock', () => {
  let app: TestApp;
  const clock = new SteppedClock(0, Date.now());
  before(async () => {
    const overrides = { sim: { time_scale: 1 } };
    app = await createTestApp(overrides, { context: await SimContext.create(await testConfig(overrides), clock) });
  });
  after(async () => {
    await app.close();
  });

  const position7 = async () =>
    ((await (await app.request('/robot/joint_states')).json()) as { position: number[] }).position[6] ?? 0;

  for (const ttlMs of [20, 100, 500]) {
    it(`with ttl ${ttlMs} ms moves at most ttl x speed (exact: no period before the command counts)`, async () => {
      const start = await position7();
      const res = await app.request('/robot/jog', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ joints: [0, 0, 0, 0, 0, 0, 1], ttl_ms: ttlMs }),
      });
      assert.equal(res.status, 200);
      assert.ok(
        await clock.until(() => app.services.arbiter.activity() === undefined, 2, 5000),
        'the jog ends by itself',
      );
      const moved = (await position7()) - start;
      // A symmetric ramp and brake at the acceleration limit cover exactly ttl x speed: more is motion the command
      // did not ask for (a period counted before its arrival).
      assert.ok(moved > 0 && moved <= (ttlMs / 1000) * JOINT_SPEED * VMAX_J7 + 1e-6, `moved ${moved} rad`);
    });
  }
});
