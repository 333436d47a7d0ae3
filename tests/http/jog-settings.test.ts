/**
 * armgate.jog's settings through the public surface (issue 34, item 3): an app whose settings give jog speeds and a
 * dead-man other than the defaults jogs at those speeds (a joint at joint_speed of its velocity limit, the TCP at
 * tcp_speed and tcp_angular_speed) and a command without ttl_ms holds for armgate.jog.ttl_ms; out-of-range values
 * refuse start-up naming the setting. The simulator at time_scale 1 on a clock the test steps (tests/support/stepped.ts).
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createFkWorkspace, forwardKinematics } from '../../lib/kinematics/fk.ts';
import { stringify } from 'yaml';
import { catalog } from '../../handlers/index.ts';
import type { Chain } from '../../lib/kinematics/chain.ts';
import { type Armgate, createArmgate } from '../../lib/server/start.ts';
import { SteppedClock } from '../../lib/clock.ts';
import { SimContext } from '../../lib/sim/context.ts';
import { loadTestSettings, withOwnPositionsFile } from '../support/server.ts';
import { TEST_WEB } from '../support/settings-file.ts';
import { steppedUntilSettled, waitOnClock } from '../support/stepped.ts';

const WORK = [0, 0, 0, -1.57, 0, 1.57, 0];
const VMAX = [1.71, 1.71, 1.75, 2.27, 2.44, 3.14, 3.14];
/** The settings under test: none of them the default (0.25, 0.25, 0.5, 200). */
const JOG = { joint_speed: 0.1, tcp_speed: 0.05, tcp_angular_speed: 0.2, ttl_ms: 60 };

/** A settings file with armgate's own block (its jog block is `jog`), as an operator writes it. */
const settingsWith = (jog: Record<string, unknown>) =>
  stringify({
    web: TEST_WEB,
    armgate: { backend: 'sim', sim: { time_scale: 1, initial_position: 'work' }, jog },
  });

let app: Armgate;
let clock: SteppedClock;
let chain: Chain;
let cleanup: () => Promise<void>;

const post = (route: string, body: unknown) =>
  steppedUntilSettled(
    clock,
    app.request(route, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }),
    `POST ${route}`,
  );
const state = async () =>
  (await (await app.request('/robot/joint_states')).json()) as { position: number[]; velocity: number[] };

async function jogOver(): Promise<void> {
  await waitOnClock(
    clock,
    'the jog to end',
    async () => app.services.jog?.owner() === undefined && (await state()).velocity.every((v) => v === 0),
    (over) => over,
    5000,
  );
}

/** The TCP's twist (m/s, rad/s in the base frame) of a joint state: the Jacobian times the joint velocities. */
const twistOf = (q: readonly number[], qd: readonly number[]) => {
  const ws = createFkWorkspace(chain);
  forwardKinematics(chain, q, ws, true);
  const n = q.length;
  const t = [0, 1, 2, 3, 4, 5].map((row) => qd.reduce((sum, v, i) => sum + (ws.jacobian[row * n + i] ?? 0) * v, 0));
  return { linear: Math.hypot(t[0] ?? 0, t[1] ?? 0, t[2] ?? 0), angular: Math.hypot(t[3] ?? 0, t[4] ?? 0, t[5] ?? 0) };
};

/** Sends `body` about every 40 ms (inside the 60 ms ttl) for `ms`; the TCP's speeds after each command. */
async function hold(body: unknown, ms: number): Promise<{ linear: number; angular: number }[]> {
  const speeds: { linear: number; angular: number }[] = [];
  const until = clock.nowMs() + ms;
  while (clock.nowMs() < until) {
    const res = await post('/robot/jog', body);
    assert.equal(res.status, 200, await res.text());
    const s = await state();
    speeds.push(twistOf(s.position, s.velocity));
    await clock.advance(40);
  }
  return speeds;
}

describe('armgate.jog settings', () => {
  before(async () => {
    const own = await withOwnPositionsFile(await loadTestSettings(settingsWith(JOG)));
    cleanup = own.cleanup;
    clock = new SteppedClock(0, Date.now());
    const context = await SimContext.create(own.config, clock);
    app = await createArmgate(own.config, catalog, { context, clock, log: () => undefined });
    const safety = app.services.safety;
    if (!safety) throw new Error('no safety state');
    chain = safety.chain;
  });
  after(async () => {
    await app.close();
    await cleanup();
  });
  beforeEach(async () => {
    await jogOver();
    const res = await post('/robot/move/joints', { joints: WORK, speed: 1 });
    assert.equal(res.status, 200, await res.text());
  });

  it('a joint jog at input 1 moves at joint_speed of its velocity limit', async () => {
    await post('/robot/jog', { joints: [0, 0, 1, 0, 0, 0, 0], ttl_ms: 300 });
    await clock.advance(150);
    const v = (await state()).velocity[2] ?? 0;
    assert.ok(Math.abs(v - 0.1 * (VMAX[2] ?? 0)) < 1e-6, `joint3 at ${v} rad/s, not ${0.1 * (VMAX[2] ?? 0)}`);
  });

  it('a command without ttl_ms holds for armgate.jog.ttl_ms: one alone moves at most 60 ms x speed', async () => {
    const res = await post('/robot/jog', { joints: [0, 0, 0, 0, 0, 0, 1] });
    assert.equal(((await res.json()) as { jogging: boolean }).jogging, true);
    await jogOver();
    const moved = ((await state()).position[6] ?? 0) - (WORK[6] ?? 0);
    // With the default 200 ms it would move about 3 times as far.
    assert.ok(moved > 0 && moved <= 0.06 * 0.1 * (VMAX[6] ?? 0) + 1e-4, `joint7 moved ${moved} rad`);
  });

  it('a Cartesian jog at input 1 moves the TCP at tcp_speed, and turns it at tcp_angular_speed', async () => {
    const along = (await hold({ linear: [-1, 0, 0] }, 1000)).map((t) => t.linear);
    assert.ok(Math.max(...along) <= 0.05 * 1.001, `TCP speeds ${along.map((v) => v.toFixed(4))}`);
    assert.ok(Math.abs((along.at(-1) ?? 0) - 0.05) < 0.05 * 0.01, `at ${along.at(-1)} m/s once up to speed`);
    await jogOver();
    const about = (await hold({ angular: [0, 0, 1] }, 1000)).map((t) => t.angular);
    assert.ok(Math.max(...about) <= 0.2 * 1.001, `turn rates ${about.map((v) => v.toFixed(4))}`);
    assert.ok(Math.abs((about.at(-1) ?? 0) - 0.2) < 0.2 * 0.01, `at ${about.at(-1)} rad/s once up to speed`);
  });

  it('out-of-range jog settings refuse start-up naming the setting', async () => {
    for (const [jog, field] of [
      [{ ttl_ms: 10 }, 'ttl_ms'],
      [{ ttl_ms: 600 }, 'ttl_ms'],
      [{ joint_speed: 0 }, 'joint_speed'],
      [{ joint_speed: 1.5 }, 'joint_speed'],
      [{ tcp_speed: 2 }, 'tcp_speed'],
      [{ tcp_angular_speed: -1 }, 'tcp_angular_speed'],
      [{ top_speed: 1 }, 'top_speed'],
    ] as const) {
      await assert.rejects(
        loadTestSettings(settingsWith(jog)),
        new RegExp(`armgate\\.jog\\.${field}`),
        JSON.stringify(jog),
      );
    }
  });
});
