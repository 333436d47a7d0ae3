/**
 * The arm every suite tests with: the bundled KUKA LBR iiwa 7 R800 (share/armgate): its joint names, its named
 * positions (the SRDF's group states), its joint limits (config/joint_limits.yaml) and its model (urdf/iiwa7.urdf),
 * read once per test process.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { type Chain, chainFromUrdf } from '../../lib/kinematics/chain.ts';
import { type JointLimits, parseJointLimits } from '../../lib/robot/limits.ts';
import { PROJECT_ROOT } from '../../lib/settings/resolve.ts';

/** The joint names, J1..J7. */
export const JOINTS: readonly string[] = ['joint1', 'joint2', 'joint3', 'joint4', 'joint5', 'joint6', 'joint7'];

/** The named positions of the bundled SRDF (rad, J1..J7). */
export const NAMED: Readonly<Record<'home' | 'work' | 'transport', readonly number[]>> = {
  home: [0, 0, 0, 0, 0, 0, 0],
  work: [0, 0, 0, -1.57, 0, 1.57, 0],
  transport: [0, -0.35, 0, 2.0, 0, -1.2, 0],
};

/** The 'work' named position (the simulator's initial position in the test settings). */
export const WORK: readonly number[] = NAMED.work;

/** Velocity limits of the bundled joint_limits.yaml (rad/s). */
export const MAX_VEL: readonly number[] = [1.71, 1.71, 1.75, 2.27, 2.44, 3.14, 3.14];

/** The bundled joint limits file and model. */
export const LIMITS_FILE = path.join(PROJECT_ROOT, 'share/armgate/config/joint_limits.yaml');
export const URDF_FILE = path.join(PROJECT_ROOT, 'share/armgate/urdf/iiwa7.urdf');

let limits: Promise<JointLimits> | undefined;
let urdf: Promise<string> | undefined;

/** The bundled joint_limits.yaml as the loader parses it (throws if it does not parse). */
export function bundledLimits(): Promise<JointLimits> {
  limits ??= readFile(LIMITS_FILE, 'utf8').then((text) => {
    const parsed = parseJointLimits(parseYaml(text), JOINTS);
    if (!parsed.ok) throw new Error(parsed.error);
    return parsed.value;
  });
  return limits;
}

/** The bundled URDF's text. */
export function bundledUrdf(): Promise<string> {
  urdf ??= readFile(URDF_FILE, 'utf8');
  return urdf;
}

/** The bundled model's kinematic chain from base_link to `tip` (default the flange). */
export async function bundledChain(tip = 'flange'): Promise<Chain> {
  const chain = chainFromUrdf(await bundledUrdf(), 'base_link', tip, JOINTS);
  if (!chain.ok) throw new Error(chain.error);
  return chain.value;
}
