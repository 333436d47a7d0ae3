import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ArmModel } from '../../lib/sim/model.ts';
import { bundledUrdf, JOINTS, WORK } from '../support/arm.ts';

describe('collision model (MuJoCo scene: arm, floor, boxes)', () => {
  let model: ArmModel;
  before(async () => {
    const urdf = await bundledUrdf();
    model = await ArmModel.load(urdf, JOINTS, {
      marginM: 0.005,
      boxes: [{ name: 'table', center: [0.6, 0, 0.2], size: [0.3, 0.6, 0.4] }],
    });
  });
  after(() => model.dispose());

  it('finds the named positions free of collisions', () => {
    for (const q of [[0, 0, 0, 0, 0, 0, 0], WORK, [0, -0.35, 0, 2, 0, -1.2, 0]])
      assert.equal(model.collisionAt(q), undefined, q.join(','));
  });

  it('reports the floor when the arm bends down into it', () => {
    const contact = model.collisionAt([2.9, 2.0, 0, 0, 0, 0, 0]);
    assert.ok(contact, 'the arm bent down collides');
    assert.ok([contact.a, contact.b].includes('floor'), JSON.stringify(contact));
    assert.ok(contact.distM < 0.005, `closer than the margin: ${contact.distM}`);
  });

  it('reports a box from the scene by its name', () => {
    const contact = model.collisionAt([0, 1.5, 0, 0, 0, 0, 0]);
    assert.ok(contact, 'the arm lowered onto the table collides');
    assert.ok([contact.a, contact.b].includes('table'), JSON.stringify(contact));
  });

  // Within the joint limits a self-contact needs the arm folded down beside its foot: the
  // A2-A4-A6 triangle (0.4 m sides, at least 60 degrees at A4) keeps the wrist 0.4 m from the
  // shoulder, so it reaches the foot only at floor level (tests/sim/collision-fit.test.ts).
  it('reports the wrist and the flange in the foot when the arm folds down beside it', () => {
    const pairs = model.contactsAt([0, -2.0, 0, 2.09, 0, -2.09, 0]).map((c) => `${c.a}-${c.b}`);
    assert.ok(pairs.includes('base_link-link7'), `the flange in the foot: ${pairs.join(', ')}`);
    assert.ok(pairs.includes('base_link-link6'), `the wrist head in the foot: ${pairs.join(', ')}`);
    assert.ok(pairs.includes('floor-link6'), `and the wrist on the floor: ${pairs.join(', ')}`);
  });

  it('reports the forearm in the upper arm when A4 folds past its 120 degree limit', () => {
    for (const a4 of [2.6, -2.6]) {
      const contacts = model.contactsAt([0, 0, 0, a4, 0, 0, 0]);
      const pairs = contacts.map((c) => `${c.a}-${c.b}`);
      assert.ok(pairs.includes('link2-link4') && pairs.includes('link3-link5'), `A4 ${a4}: ${pairs.join(', ')}`);
      assert.ok(
        contacts.every((c) => c.a !== 'floor' && c.distM < -0.02),
        `A4 ${a4}: links only, each overlapping by more than 2 cm: ${JSON.stringify(contacts)}`,
      );
    }
  });

  it('reports the flange in the forearm when A6 turns it back along the forearm, past its limit', () => {
    const contact = model.collisionAt([0, 0, 0, -1.57, 0, 2.97, 0]);
    assert.ok(contact, 'A6 at 170 degrees collides');
    assert.deepEqual([contact.a, contact.b].sort(), ['link5', 'link7'], JSON.stringify(contact));
    assert.ok(contact.distM < -0.05, `the flange overlaps the forearm by more than 5 cm: ${contact.distM}`);
  });

  it('gives zero obstacle cost far from everything and a positive cost with a gradient that pushes away near the table', () => {
    const far = new Float64Array(7);
    assert.equal(model.obstacleCost([0, 0, 0, 0, 0, 0, 0], 0.05, far), 0, 'no cost standing upright');
    assert.deepEqual(Array.from(far), [0, 0, 0, 0, 0, 0, 0], 'no gradient standing upright');
    const near = [0, 1.2, 0, 0.6, 0, 0, 0];
    const grad = new Float64Array(7);
    const cost = model.obstacleCost(near, 0.05, grad);
    assert.ok(cost > 0, `cost ${cost}`);
    // A small step against the gradient lowers the cost.
    const stepped = near.map((q, i) => q - 0.02 * Math.sign(grad[i] ?? 0));
    assert.ok(
      model.obstacleCost(stepped, 0.05, new Float64Array(7)) < cost,
      'a step against the gradient lowers the cost',
    );
  });
});

describe('models of the same texts (ArmModel.load compiles a description and scene once, each model a copy)', () => {
  const table = { name: 'table', center: [0.6, 0, 0.2], size: [0.3, 0.6, 0.4] } as const;
  const lowered = [0, 1.5, 0, 0, 0, 0, 0];
  const touches = (model: ArmModel, thing: string, q: readonly number[]) =>
    model.contactsAt(q).some((c) => c.a === thing || c.b === thing);
  let urdf: string;
  before(async () => {
    urdf = await bundledUrdf();
  });

  it('gives each scene its own model: a box is where its scene puts it, in that scene only', async () => {
    const withTable = await ArmModel.load(urdf, JOINTS, { marginM: 0.005, boxes: [table] });
    const bare = await ArmModel.load(urdf, JOINTS, { marginM: 0.005, boxes: [] });
    const moved = await ArmModel.load(urdf, JOINTS, {
      marginM: 0.005,
      boxes: [{ ...table, center: [0, 2, 0.2] }],
    });
    const renamed = await ArmModel.load(urdf, JOINTS, { marginM: 0.005, boxes: [{ ...table, name: 'bench' }] });
    const again = await ArmModel.load(urdf, JOINTS, { marginM: 0.005, boxes: [table] });
    try {
      assert.ok(touches(withTable, 'table', lowered), 'the table where its scene puts it');
      assert.ok(!touches(bare, 'table', lowered), 'no table in a scene without it');
      assert.ok(!touches(moved, 'table', lowered), 'the table 2 m away in the scene that moved it');
      assert.ok(touches(renamed, 'bench', lowered) && !touches(renamed, 'table', lowered), 'the box by its own name');
      assert.ok(touches(again, 'table', lowered), 'the first scene again, after the others');
    } finally {
      for (const m of [withTable, bare, moved, renamed, again]) m.dispose();
    }
  });

  it('gives each margin its own model: contacts within a wide margin are not reported within a narrow one', async () => {
    const narrow = await ArmModel.load(urdf, JOINTS, { marginM: 0.005, boxes: [] });
    const wide = await ArmModel.load(urdf, JOINTS, { marginM: 0.3, boxes: [] });
    try {
      assert.deepEqual(narrow.contactsAt(WORK), [], 'nothing within 5 mm at work');
      assert.ok(wide.contactsAt(WORK).length > 0, 'something within 0.3 m at work');
      assert.deepEqual(narrow.contactsAt(WORK), [], 'the narrow one unchanged by the wide one');
    } finally {
      narrow.dispose();
      wide.dispose();
    }
  });

  it('gives each description its own model, and a model of the same texts outlives another one disposed', async () => {
    const other = urdf.replaceAll('"link7"', '"wrist7"');
    const first = await ArmModel.load(urdf, JOINTS);
    const renamed = await ArmModel.load(other, JOINTS);
    const second = await ArmModel.load(urdf, JOINTS);
    try {
      assert.ok(renamed.hasLink('wrist7') && !renamed.hasLink('link7'), renamed.linkNames().join(', '));
      first.dispose();
      assert.ok(second.hasLink('link7') && !second.hasLink('wrist7'), second.linkNames().join(', '));
      const pose = { positionM: new Float64Array(3), rotation: new Float64Array(9) };
      assert.ok(second.linkPose(WORK, 'link7', pose));
      assert.ok(Math.abs((pose.positionM[2] ?? 0) - 0.614) < 0.05, `link7 near the work height: ${pose.positionM[2]}`);
      assert.ok(touches(second, 'floor', [2.9, 2.0, 0, 0, 0, 0, 0]), 'the disposed copy left this one whole');
    } finally {
      renamed.dispose();
      second.dispose();
    }
  });

  it('refuses a description MuJoCo cannot compile every time it is given', async () => {
    for (let k = 0; k < 2; k++) await assert.rejects(ArmModel.load('<robot name="broken"><link', JOINTS));
  });
});

describe('inverse dynamics of the same state again (ArmModel.inverseDynamics keeps the last efforts)', () => {
  it('gives every state its own efforts, the same as computed afresh, whatever came before', async () => {
    const urdf = await bundledUrdf();
    const model = await ArmModel.load(urdf, JOINTS);
    const fresh = await ArmModel.load(urdf, JOINTS);
    const zero = [0, 0, 0, 0, 0, 0, 0];
    const moving = [0.3, -0.2, 0.1, 0.5, 0, -0.4, 0.2];
    const states: [readonly number[], readonly number[], readonly number[]][] = [
      [WORK, zero, zero],
      [WORK, zero, zero],
      [WORK, moving, zero],
      [WORK, moving, moving],
      [WORK, zero, zero],
      [[0, 0, 0, 0, 0, 0, 0], zero, zero],
      [[0, 0.5, 0, 0, 0, 0, 0], zero, zero],
      [[0, 0.5, 0, 0, 0, 0, 0], zero, zero],
      [WORK, zero, zero],
    ];
    try {
      const poison = [1, 1, 1, 1, 1, 1, 1];
      for (const [k, [q, qd, qdd]] of states.entries()) {
        const got = model.inverseDynamics(q, qd, qdd, new Float64Array(7));
        fresh.inverseDynamics(poison, poison, poison, new Float64Array(7));
        const want = fresh.inverseDynamics(q, qd, qdd, new Float64Array(7));
        assert.deepEqual(Array.from(got), Array.from(want), `state ${k}`);
      }
      const atWork = model.inverseDynamics(WORK, zero, zero, new Float64Array(7));
      const upright = model.inverseDynamics(zero, zero, zero, new Float64Array(7));
      assert.ok(Math.abs((atWork[1] ?? 0) - (upright[1] ?? 0)) > 1, `gravity differs: ${atWork[1]} vs ${upright[1]}`);
    } finally {
      model.dispose();
      fresh.dispose();
    }
  });
});
