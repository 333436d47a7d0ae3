import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PROJECT_ROOT } from '../../lib/settings/resolve.ts';
import { ArmModel } from '../../lib/sim/model.ts';

const JOINTS = ['joint1', 'joint2', 'joint3', 'joint4', 'joint5', 'joint6', 'joint7'];
const WORK = [0, 0, 0, -1.57, 0, 1.57, 0];

describe('collision model (MuJoCo scene: arm, floor, boxes)', () => {
  let model: ArmModel;
  before(async () => {
    const urdf = await readFile(path.join(PROJECT_ROOT, 'share/armgate/urdf/iiwa7.urdf'), 'utf8');
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
    assert.ok(contact);
    assert.ok([contact.a, contact.b].includes('floor'), JSON.stringify(contact));
    assert.ok(contact.distM < 0.005);
  });

  it('reports a box from the scene by its name', () => {
    const contact = model.collisionAt([0, 1.5, 0, 0, 0, 0, 0]);
    assert.ok(contact);
    assert.ok([contact.a, contact.b].includes('table'), JSON.stringify(contact));
  });

  it('reports self-collision between non-adjacent links of a folded arm', () => {
    const contact = model.collisionAt([0, 0.5, 0, 2.09, 0, 2.09, 0]);
    assert.ok(contact);
    assert.ok(
      !['floor', 'table'].includes(contact.a) && !['floor', 'table'].includes(contact.b),
      JSON.stringify(contact),
    );
  });

  it('gives zero obstacle cost far from everything and a positive cost with a gradient that pushes away near the table', () => {
    const far = new Float64Array(7);
    assert.equal(model.obstacleCost([0, 0, 0, 0, 0, 0, 0], 0.05, far), 0);
    assert.deepEqual(Array.from(far), [0, 0, 0, 0, 0, 0, 0]);
    const near = [0, 1.2, 0, 0.6, 0, 0, 0];
    const grad = new Float64Array(7);
    const cost = model.obstacleCost(near, 0.05, grad);
    assert.ok(cost > 0, `cost ${cost}`);
    // A small step against the gradient lowers the cost.
    const stepped = near.map((q, i) => q - 0.02 * Math.sign(grad[i] ?? 0));
    assert.ok(model.obstacleCost(stepped, 0.05, new Float64Array(7)) < cost);
  });
});
