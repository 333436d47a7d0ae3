/** Inputs shared by the bench sections: the bundled robot description, chain and joint limits. */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { type Chain, chainFromUrdf } from '../lib/kinematics/chain.ts';
import { parseJointLimits } from '../lib/robot/limits.ts';
import { PROJECT_ROOT } from '../lib/settings/resolve.ts';

export const JOINTS: readonly string[] = ['joint1', 'joint2', 'joint3', 'joint4', 'joint5', 'joint6', 'joint7'];

/** The bundled iiwa 7 URDF text. */
export function loadUrdf(): Promise<string> {
  return readFile(path.join(PROJECT_ROOT, 'share/armgate/urdf/iiwa7.urdf'), 'utf8');
}

/** The bundled chain (base_link to flange) and position limits (rad). */
export async function loadChain(): Promise<{ chain: Chain; min: number[]; max: number[] }> {
  const chain = chainFromUrdf(await loadUrdf(), 'base_link', 'flange', JOINTS);
  if (!chain.ok) throw new Error(chain.error);
  const limits = parseJointLimits(
    parseYaml(await readFile(path.join(PROJECT_ROOT, 'share/armgate/config/joint_limits.yaml'), 'utf8')),
    JOINTS,
  );
  if (!limits.ok) throw new Error(limits.error);
  return { chain: chain.value, min: [...limits.value.minRad], max: [...limits.value.maxRad] };
}

/** `count` configurations drawn uniformly inside [min, max] per joint with `random`. */
export function randomConfigs(
  count: number,
  min: readonly number[],
  max: readonly number[],
  random: () => number,
): Float64Array[] {
  return Array.from({ length: count }, () => Float64Array.from(min, (lo, i) => lo + random() * ((max[i] ?? lo) - lo)));
}
