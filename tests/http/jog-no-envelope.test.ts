/**
 * Jogs over POST /robot/jog with no safety envelope in the way (issue 34, item 3), where only the arm itself limits
 * them: a Cartesian jog held toward a singularity "slows near a singularity and stops before one rather than whipping
 * the joints" (the arm stretched out along x from the work position), and a joint jog toward the floor stops before
 * the simulator's collision check meets it. The simulator at time_scale 1 on a clock the test steps
 * (tests/support/stepped.ts).
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { Chain } from '../../lib/kinematics/chain.ts';
import { createFkWorkspace, forwardKinematics } from '../../lib/kinematics/fk.ts';
import { minSingularValue6 } from '../../lib/kinematics/linalg.ts';
import type { SteppedClock } from '../../lib/clock.ts';
import type { TestApp } from '../support/server.ts';
import { createSteppedApp, steppedUntilSettled, waitOnClock } from '../support/stepped.ts';

const WORK = [0, 0, 0, -1.57, 0, 1.57, 0];
const VMAX = [1.71, 1.71, 1.75, 2.27, 2.44, 3.14, 3.14];

let app: TestApp;
let clock: SteppedClock;
let chain: Chain;

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

/** Waits until the arm rests and nothing jogs; its joint state. */
const atRest = () =>
  waitOnClock(
    clock,
    'the arm at rest',
    state,
    (s) => s.velocity.every((v) => v === 0) && app.services.jog?.owner() === undefined,
    3000,
  );

/** Sends `body` every 40 ms or so for `ms` of the clock; the limit of the last answer. */
async function hold(body: unknown, ms: number, each?: (s: { position: number[]; velocity: number[] }) => void) {
  let limit: { kind: string; detail: string } | null = null;
  const until = clock.nowMs() + ms;
  while (clock.nowMs() < until) {
    const res = await post('/robot/jog', body);
    const text = await res.text();
    assert.equal(res.status, 200, text);
    limit = (JSON.parse(text) as { limit: { kind: string; detail: string } | null }).limit;
    each?.(await state());
    await clock.advance(40);
  }
  return limit;
}

describe('jogs without an envelope', () => {
  before(async () => {
    ({ app, clock } = await createSteppedApp({ sim: { time_scale: 1 } }));
    const safety = app.services.safety;
    if (!safety) throw new Error('no safety state');
    chain = safety.chain;
  });
  after(() => app.close());

  beforeEach(async () => {
    await atRest();
    const res = await post('/robot/move/joints', { joints: WORK, speed: 1 });
    assert.equal(res.status, 200, await res.text());
  });

  it('a Cartesian jog toward a singularity slows and stops before it, says so, and never whips the joints', async () => {
    const start = at(WORK);
    let smallest = Number.POSITIVE_INFINITY;
    let fastest = 0;
    // Held toward +x for 6 s of the clock: the arm stretches out within a second or two, then is held there.
    const limit = await hold({ linear: [1, 0, 0] }, 6000, (s) => {
      smallest = Math.min(smallest, at(s.position).sigma);
      for (const [j, v] of s.velocity.entries()) fastest = Math.max(fastest, Math.abs(v) / (VMAX[j] ?? 1));
    });
    assert.equal(limit?.kind, 'singularity', JSON.stringify(limit));
    const rest = await atRest();
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

  it("a joint jog toward the floor stops before the simulator's collision check meets it, and says so", async () => {
    // Joint 2 tips the arm forward, the flange pointing down: link 7 comes down to the floor.
    const limit = await hold({ joints: [0, 1, 0, 0, 0, 0, 0] }, 3000);
    assert.equal(limit?.kind, 'collision', JSON.stringify(limit));
    assert.match(limit?.detail ?? '', /floor/);
    const rest = (await atRest()).position;
    assert.ok((rest[1] ?? 0) > 1, `joint2 stopped at ${rest[1]} rad`);
    assert.ok((at(rest).tip[2] ?? 0) > 0, `the TCP at z ${at(rest).tip[2]} m`);
    // Pushed on toward the floor, it moves no further; away from it, it moves.
    await hold({ joints: [0, 1, 0, 0, 0, 0, 0] }, 500);
    assert.ok(((await atRest()).position[1] ?? 0) <= (rest[1] ?? 0) + 1e-9, 'no nearer the floor');
    await hold({ joints: [0, -1, 0, 0, 0, 0, 0] }, 300);
    assert.ok(((await atRest()).position[1] ?? 0) < (rest[1] ?? 0) - 0.05, 'back up, away from the floor');
  });
});
