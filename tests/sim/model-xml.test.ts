import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ArmModel } from '../../lib/sim/model.ts';
import { capsuleTriples, fuseCapsules } from '../../lib/sim/model-xml.ts';
import { loadMujocoModule } from '../../lib/sim/mujoco.ts';
import { bundledUrdf, JOINTS } from '../support/arm.ts';

const MAX = [2.97, 2.1, 2.97, 2.1, 2.97, 2.1, 3.05];

/** The URDF with every sphere moved `dz` m along z in its link: no sphere sits on a cylinder's end any more. */
function withSpheresMoved(urdf: string, dz: number): string {
  return urdf.replace(/<origin xyz="([^"]+)" rpy="0 0 0"\/><geometry><sphere/g, (_m, xyz: string) => {
    const [x = 0, y = 0, z = 0] = xyz.split(' ').map(Number);
    return `<origin xyz="${x} ${y} ${z + dz}" rpy="0 0 0"/><geometry><sphere`;
  });
}

describe('capsules from URDF cylinders with end spheres', () => {
  let urdf: string;
  before(async () => {
    urdf = await bundledUrdf();
  });

  it('finds the eight capsules of the bundled arm and writes each as one MuJoCo capsule', async () => {
    const mj = await loadMujocoModule();
    mj.FS.mkdir('/model-xml-test');
    mj.FS.writeFile('/model-xml-test/robot.urdf', urdf);
    const robot = mj.MjModel.loadFromXML('/model-xml-test/robot.urdf');
    try {
      const { cylinders, caps } = capsuleTriples(mj, robot);
      assert.equal(cylinders.size, 8, 'links 1-4 one each, links 5 and 6 two each');
      assert.equal(caps.size, 16, 'two end spheres per capsule');
      assert.equal(mj.mj_saveLastXML('/model-xml-test/robot.xml', robot), 1, 'MuJoCo exports the model');
      const exported = new TextDecoder().decode(mj.FS.readFile('/model-xml-test/robot.xml') as Uint8Array);
      const fused = fuseCapsules(mj, robot, exported);
      assert.equal(fused.match(/type="capsule"/g)?.length, 8, 'eight capsules');
      assert.equal(fused.match(/<geom\b/g)?.length, robot.ngeom - 16, 'the end spheres are gone');
    } finally {
      robot.delete();
    }
  });

  describe('the fused model measures what the cylinders and spheres measure', () => {
    let fused: ArmModel;
    let separate: ArmModel;
    before(async () => {
      const scene = { marginM: 0.05, boxes: [] };
      fused = await ArmModel.load(urdf, JOINTS, scene);
      // Spheres 0.2 mm off the ends (beyond the 0.1 mm tolerance) stay separate geoms.
      separate = await ArmModel.load(withSpheresMoved(urdf, 0.0002), JOINTS, scene);
    });
    after(() => {
      fused.dispose();
      separate.dispose();
    });

    it('finds the same pairs within 5 cm at the same distances (to 0.5 mm) over 500 configurations', () => {
      let a = 7;
      const random = () => {
        a = (a * 16807) % 2147483647;
        return a / 2147483647;
      };
      let compared = 0;
      for (let k = 0; k < 500; k++) {
        const q = MAX.map((m) => (2 * random() - 1) * m);
        const one = new Map(fused.contactsAt(q).map((c) => [`${c.a}-${c.b}`, c.distM]));
        const other = new Map(separate.contactsAt(q).map((c) => [`${c.a}-${c.b}`, c.distM]));
        for (const [pair, d] of one) {
          const e = other.get(pair);
          // A pair right at the 5 cm edge may be found by one model only.
          if (e === undefined) {
            assert.ok(d > 0.049, `${pair} at ${d} m only in the fused model, at ${q.join(', ')}`);
            continue;
          }
          compared++;
          assert.ok(Math.abs(d - e) < 5e-4, `${pair}: fused ${d} m, separate ${e} m at ${q.join(', ')}`);
        }
        for (const [pair, e] of other)
          if (!one.has(pair)) assert.ok(e > 0.049, `${pair} at ${e} m only in the separate model`);
      }
      assert.ok(compared > 300, `pairs compared: ${compared}`);
    });
  });
});
