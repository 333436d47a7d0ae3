/**
 * A Cartesian jog held toward a singularity over POST /robot/jog (issue 34, item 3: it "slows near a singularity and
 * stops before one rather than whipping the joints"): the arm stretched out along x from the work position, no
 * envelope in the way. The simulator at time_scale 1 on a clock the test steps (tests/support/stepped.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Chain } from '../../lib/kinematics/chain.ts';
import { createFkWorkspace, forwardKinematics } from '../../lib/kinematics/fk.ts';
import { minSingularValue6 } from '../../lib/kinematics/linalg.ts';
import type { SteppedClock } from '../../lib/sim/clock.ts';
import type { TestApp } from '../support/server.ts';
import { createSteppedApp, steppedUntilSettled, waitOnClock } from '../support/stepped.ts';

const WORK = [0, 0, 0, -1.57, 0, 1.57, 0];
const VMAX = [1.71, 1.71, 1.75, 2.27, 2.44, 3.14, 3.14];

let app: TestApp;
let clock: SteppedClock;
let chain: Chain;

before(async () => {
  ({ app, clock } = await createSteppedApp({ sim: { time_scale: 1 } }));
  const safety = app.services.safety;
  if (!safety) throw new Error('no safety state');
  chain = safety.chain;
});
after(() => app.close());

const post = (route: string, body: unknown) =>
  steppedUntilSettled(
    clock,
    app.request(route, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    `POST ${route}`,
  );
const state = async () =>
  (await (await app.request('/robot/joint_states')).json()) as { position: number[]; velocity: number[] };
/** The Jacobian's smallest singular value and the TCP at `q`. */
const at = (q: readonly number[]) => {
  const fk = createFkWorkspace(chain);
  forwardKinematics(chain, q, fk, true);
  return { sigma: minSingularValue6(fk.jacobian, q.length), tip: Array.from(fk.tipPos) };
};

describe('a Cartesian jog toward a singularity', () => {
  it('slows and stops before it, says so, and never whips the joints', async () => {
    assert.equal((await post('/robot/move/joints', { joints: WORK, speed: 1 })).status, 200);
    const start = at(WORK);
    let limit: { kind: string } | null = null;
    let smallest = Number.POSITIVE_INFINITY;
    let fastest = 0;
    // Held toward +x for 6 s of the clock: the arm stretches out within a second or two, then is held there.
    const until = clock.nowMs() + 6000;
    while (clock.nowMs() < until) {
      const res = await post('/robot/jog', { linear: [1, 0, 0] });
      assert.equal(res.status, 200, await res.text());
      limit = ((await res.json()) as { limit: { kind: string } | null }).limit;
      const s = await state();
      smallest = Math.min(smallest, at(s.position).sigma);
      for (const [j, v] of s.velocity.entries()) fastest = Math.max(fastest, Math.abs(v) / (VMAX[j] ?? 1));
      await clock.advance(40);
    }
    assert.equal(limit?.kind, 'singularity', JSON.stringify(limit));
    const rest = await waitOnClock(
      clock,
      'the arm at rest',
      state,
      (s) => s.velocity.every((v) => v === 0) && app.services.jog?.owner() === undefined,
      3000,
    );
    const end = at(rest.position);
    assert.ok(
      (end.tip[0] ?? 0) - (start.tip[0] ?? 0) > 0.2,
      `the TCP went ${(end.tip[0] ?? 0) - (start.tip[0] ?? 0)} m`,
    );
    // It stops before the singularity (0.02 the engine keeps; a period's overshoot allowed), the joints well inside
    // their velocity limits all along (a Cartesian jog asks at most half of each).
    assert.ok(smallest > 0.015, `the Jacobian's smallest singular value fell to ${smallest}`);
    assert.ok(end.sigma > 0.015, `at rest at a smallest singular value of ${end.sigma}`);
    assert.ok(fastest <= 0.6, `a joint reached ${fastest.toFixed(3)} of its velocity limit`);
  });
});
