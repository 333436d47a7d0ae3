import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ArmModel, type LinkPose } from '../../lib/sim/model.ts';
import { createTestApp, type TestApp } from '../support/server.ts';
import { seededRandom } from '../../lib/random.ts';
import { bundledUrdf, JOINTS, NAMED } from '../support/arm.ts';

/** Position limits of the bundled limits file (rad). */
const MAX = [2.97, 2.1, 2.97, 2.1, 2.97, 2.1, 3.05];
/** The URDF's (and the data sheet's) A6 limit: 120 degrees. */
const A6_LIMIT = 2.094;
const MARGIN_M = 0.005;
/**
 * No collision shape reaches farther than this from the kinematic axis (m): the largest is the wrist
 * head, r 0.07 m around a 0.04 m long segment on the A6 axis (0.02 + 0.07). With the margin, a
 * shape can touch the floor only where some point of the axis is within 0.095 m of it.
 */
const REACH_FROM_AXIS_M = 0.09;

const isFloor = (c: { a: string; b: string }) => c.a === 'floor' || c.b === 'floor';

describe('collision geometry fitted to the iiwa 7 (capsules from its published link lengths)', () => {
  let model: ArmModel;
  const pose: LinkPose = { positionM: new Float64Array(3), rotation: new Float64Array(9) };

  /** The lowest point (m) of the arm's kinematic axis: the joint centres A2..A7, the wrist centre and the flange. */
  function lowestAxisPointM(q: readonly number[]): number {
    let lowest = Number.POSITIVE_INFINITY;
    for (const link of ['link2', 'link3', 'link4', 'link5', 'link7', 'flange']) {
      assert.ok(model.linkPose(q, link, pose), `the model has ${link}`);
      lowest = Math.min(lowest, pose.positionM[2] ?? 0);
    }
    // link6's frame sits on the A6 axis 0.0707 m beside the arm's axis (its y): the wrist centre.
    assert.ok(model.linkPose(q, 'link6', pose), 'the model has link6');
    return Math.min(lowest, (pose.positionM[2] ?? 0) + (pose.rotation[7] ?? 0) * 0.0707);
  }

  before(async () => {
    const urdf = await bundledUrdf();
    model = await ArmModel.load(urdf, JOINTS, { marginM: MARGIN_M, boxes: [] });
  });
  after(() => model.dispose());

  it('leaves joint 6 its whole range free around home, work and transport, whatever A5 and A7', () => {
    for (const [name, base] of Object.entries(NAMED)) {
      for (let a6 = -A6_LIMIT; a6 <= A6_LIMIT + 1e-9; a6 += A6_LIMIT / 20) {
        for (const a5 of [-2.9, -1.5, 0, 1.5, 2.9]) {
          for (const a7 of [-3.05, 0, 3.05]) {
            const q = [...base];
            q[4] = a5;
            q[5] = a6;
            q[6] = a7;
            const contact = model.collisionAt(q);
            assert.equal(
              contact,
              undefined,
              `${name} with A5 ${a5}, A6 ${a6.toFixed(3)}, A7 ${a7}: ${JSON.stringify(contact)}`,
            );
          }
        }
      }
    }
  });

  it('keeps the flange more than a centimetre from the forearm at A6 = +-120 degrees', async () => {
    const urdf = await bundledUrdf();
    const wide = await ArmModel.load(urdf, JOINTS, { marginM: 0.05, boxes: [] });
    try {
      for (const a6 of [A6_LIMIT, -A6_LIMIT]) {
        const wrist = wide.contactsAt([0, 0, 0, -1.57, 0, a6, 0]).find((c) => c.a === 'link5' && c.b === 'link7');
        assert.ok(wrist, `within 5 cm at A6 ${a6}, so the distance is measured`);
        assert.ok(wrist.distM > 0.01, `flange to forearm at A6 ${a6}: ${(wrist.distM * 1000).toFixed(1)} mm`);
      }
    } finally {
      wide.dispose();
    }
  });

  it('puts the floor at the flange face: 2 mm above it is a contact, 1 cm above it is free', () => {
    // Flange pointing straight down (A2 - A4 + A6 = pi) with A4 -0.8 rad, lowered by tilting A2.
    const at = (a2: number) => [0, a2, 0, -0.8, 0, Math.PI - a2 - 0.8, 0];
    const flangeZ = (a2: number) => {
      assert.ok(model.linkPose(at(a2), 'flange', pose), 'the model has the flange');
      return pose.positionM[2] ?? 0;
    };
    for (const [heightM, touches] of [
      [0.002, true],
      [0.01, false],
    ] as const) {
      let lo = 1.0; // flange 0.34 m up
      let hi = 1.5; // flange below the floor
      for (let k = 0; k < 60; k++) {
        const mid = (lo + hi) / 2;
        if (flangeZ(mid) > heightM) lo = mid;
        else hi = mid;
      }
      const q = at(lo);
      assert.ok(Math.abs(flangeZ(lo) - heightM) < 1e-6, `flange face at ${flangeZ(lo)} m`);
      const contacts = model.contactsAt(q);
      const floor = contacts.find((c) => c.a === 'floor' && c.b === 'link7');
      if (touches)
        assert.ok(
          floor && Math.abs(floor.distM - heightM) < 1e-4,
          `flange ${heightM} m up: ${JSON.stringify(contacts)}`,
        );
      else assert.deepEqual(contacts, [], `flange ${heightM} m up touches nothing`);
    }
  });

  // Within the limits the arm cannot reach itself except down by its foot: A4 folds at most 120
  // degrees, so the A2-A4-A6 triangle (0.4 m sides) keeps the wrist centre at least 0.4 m from the
  // shoulder (A2, 0.34 m up) and the flange at least 0.27 m; above the floor that keeps the wrist
  // 0.3 m from the foot's axis. So every contact of a random in-limit configuration involves the
  // floor, and the share that collides is bracketed by the floor alone: at least the share whose
  // axis dips below the floor, at most the share whose axis comes within the shapes' reach of it.
  it('collides in random in-limit configurations only where the arm reaches the floor, in about 11 % of them', () => {
    const random = seededRandom(2024);
    const n = 3000;
    let colliding = 0;
    let axisBelowFloor = 0;
    let axisWithinReach = 0;
    for (let k = 0; k < n; k++) {
      const q = MAX.map((m) => (2 * random() - 1) * m);
      const contacts = model.contactsAt(q);
      const lowest = lowestAxisPointM(q);
      const at = () => `at ${q.map((v) => v.toFixed(3)).join(', ')}: ${JSON.stringify(contacts)}`;
      if (lowest < 0) {
        axisBelowFloor++;
        assert.ok(
          contacts.some(isFloor),
          `the axis is ${(-lowest).toFixed(3)} m below the floor but no floor contact ${at()}`,
        );
      }
      if (lowest < REACH_FROM_AXIS_M + MARGIN_M) axisWithinReach++;
      if (contacts.length === 0) continue;
      colliding++;
      assert.ok(contacts.some(isFloor), `every contact in the limits involves the floor ${at()}`);
      assert.ok(
        lowest < REACH_FROM_AXIS_M + MARGIN_M,
        `a floor contact with the axis ${lowest.toFixed(3)} m up means a shape reaches beyond ${REACH_FROM_AXIS_M} m ${at()}`,
      );
    }
    const share = colliding / n;
    assert.ok(
      share >= axisBelowFloor / n && share <= axisWithinReach / n,
      `colliding ${share}, bracket by the floor [${axisBelowFloor / n}, ${axisWithinReach / n}]`,
    );
    // The coarse cylinders this geometry replaces collided in 25 % (13 % link with link).
    assert.ok(share < 0.15, `colliding share ${share} (11 % measured over 20,000 samples)`);
  });
});

describe('simulated moves with joint 6 near its limits (time_scale 20)', () => {
  let server: TestApp;
  before(async () => {
    server = await createTestApp({ sim: { time_scale: 20 } });
  });
  after(() => server.close());

  async function post(route: string, body: unknown): Promise<{ success: boolean; message: string }> {
    const res = await server.request(`${route}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    assert.equal(res.status, 200, `${route} answers 200`);
    return (await res.json()) as { success: boolean; message: string };
  }

  async function jointsNow(): Promise<number[]> {
    const res = await server.request(`/robot/joint_states`);
    return ((await res.json()) as { position: number[] }).position;
  }

  it('moves from work to A6 at +2.09 and -2.09 rad and arrives (refused as link5 with link7 before)', async () => {
    for (const a6 of [2.09, -2.09]) {
      const goal = [0, 0, 0, -1.57, 0, a6, 0];
      const result = await post('/robot/move/joints', { joints: goal, speed: 1 });
      assert.equal(result.success, true, `A6 ${a6}: ${result.message}`);
      const q = await jointsNow();
      assert.ok(Math.abs((q[5] ?? 0) - a6) < 1e-3, `A6 arrived at ${q[5]}`);
    }
  });

  it('reaches a pose that needs A6 beyond 1.8 rad with ptp', async () => {
    assert.equal((await post('/robot/move/named', { name: 'work', speed: 1 })).success, true, 'back to work');
    const poseRes = await post('/robot/move/joints', { joints: [0.3, 0.2, 0, -1.2, 0, 2.0, 0.4], speed: 1 });
    assert.equal(poseRes.success, true, poseRes.message);
    const tcp = (await (await server.request(`/robot/pose`)).json()) as {
      position: { x: number; y: number; z: number };
      orientation: { euler_rad: { a: number; b: number; c: number } };
    };
    assert.equal((await post('/robot/move/named', { name: 'work', speed: 1 })).success, true, 'back to work');
    const result = await post('/robot/move/pose', { ...tcp.position, ...tcp.orientation.euler_rad, planner: 'ptp' });
    assert.equal(result.success, true, result.message);
    const q = await jointsNow();
    assert.ok((q[5] ?? 0) > 1.8, `A6 at ${q[5]} rad`);
  });
});
