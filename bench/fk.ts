import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createFkWorkspace, forwardKinematics } from '../lib/kinematics/fk.ts';
import { PROJECT_ROOT } from '../lib/settings/resolve.ts';
import { ArmModel } from '../lib/sim/model.ts';
import { loadChain, seededRandom } from './ik.ts';

const JOINTS = ['joint1', 'joint2', 'joint3', 'joint4', 'joint5', 'joint6', 'joint7'];

/** FK time per call (us, median of 5 rounds over 100k configurations): MuJoCo (the FK service) and the pure chain. */
export async function fkTimes(count = 100_000): Promise<{ mujocoUs: number; chainUs: number }> {
  const { chain, min, max } = await loadChain();
  const random = seededRandom(3);
  const configs = Array.from({ length: count }, () => Float64Array.from(min, (lo, i) => lo + random() * ((max[i] ?? 0) - lo)));
  const model = await ArmModel.load(await readFile(path.join(PROJECT_ROOT, 'share/armgate/urdf/iiwa7.urdf'), 'utf8'), JOINTS);
  const out = { positionM: new Float64Array(3), rotation: new Float64Array(9) };
  const ws = createFkWorkspace(chain);
  const rounds = (run: () => void) => {
    const t: number[] = [];
    for (let r = 0; r < 5; r++) {
      const t0 = performance.now();
      run();
      t.push(((performance.now() - t0) * 1000) / count);
    }
    return t.sort((a, b) => a - b)[2] ?? Number.NaN;
  };
  try {
    const mujocoUs = rounds(() => {
      for (const q of configs) model.linkPose(q, 'flange', out);
    });
    const chainUs = rounds(() => {
      for (const q of configs) forwardKinematics(chain, q, ws);
    });
    return { mujocoUs, chainUs };
  } finally {
    model.dispose();
  }
}
