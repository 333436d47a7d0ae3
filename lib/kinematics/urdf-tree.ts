/**
 * Every joint of a URDF as a parent-to-child transform, the way robot_state_publisher turns a
 * robot description and joint positions into tf: a fixed joint's transform is its origin (for
 * /tf_static); a revolute or continuous joint's is its origin turned by the position about its axis,
 * a prismatic joint's its origin moved by the position along its axis (for /tf). Floating and planar
 * joints are left out, as robot_state_publisher leaves them to other publishers. Pure: plain data in
 * and out.
 */
import { err, ok, type Result } from '../result.ts';
import { rpyToMat, urdfJoints, vec3 } from './chain.ts';
import { type Quaternion, quatFromMat } from './rotation.ts';

/** One URDF joint: its parent and child links, origin (m, quaternion) and unit axis in the joint frame. */
export interface TreeJoint {
  readonly name: string;
  readonly kind: 'fixed' | 'revolute' | 'prismatic';
  readonly parent: string;
  readonly child: string;
  readonly originM: readonly [number, number, number];
  readonly originRotation: Quaternion;
  readonly axis: readonly [number, number, number];
}

/** A parent-to-child transform (translation m, rotation quaternion), as in geometry_msgs/Transform. */
export interface LinkTransform {
  readonly parent: string;
  readonly child: string;
  readonly translation: { readonly x: number; readonly y: number; readonly z: number };
  readonly rotation: Quaternion;
}

const KINDS: Readonly<Record<string, TreeJoint['kind'] | undefined>> = {
  fixed: 'fixed',
  revolute: 'revolute',
  continuous: 'revolute',
  prismatic: 'prismatic',
};

/** The fixed, revolute, continuous and prismatic joints of URDF text, in document order. */
export function treeFromUrdf(urdf: string): Result<readonly TreeJoint[], string> {
  const raws = urdfJoints(urdf);
  if (!raws.ok) return raws;
  const joints: TreeJoint[] = [];
  const rotation = new Float64Array(9);
  for (const raw of raws.value) {
    const kind = KINDS[raw.type ?? ''];
    if (kind === undefined) continue;
    const parent = raw.parent?.link;
    const child = raw.child?.link;
    if (!raw.name || !parent || !child)
      return err(`URDF joint '${raw.name ?? '?'}' lacks a name, parent or child link`);
    const [x = 0, y = 0, z = 0] = vec3(raw.origin?.xyz, [0, 0, 0]);
    rpyToMat(rotation, 0, vec3(raw.origin?.rpy, [0, 0, 0]));
    const [ax = 1, ay = 0, az = 0] = vec3(raw.axis?.xyz, [1, 0, 0]);
    const norm = Math.hypot(ax, ay, az);
    if (kind !== 'fixed' && !(norm > 0)) return err(`URDF joint '${raw.name}' has a zero axis`);
    joints.push({
      name: raw.name,
      kind,
      parent,
      child,
      originM: [x, y, z],
      originRotation: quatFromMat(rotation),
      axis: kind === 'fixed' ? [1, 0, 0] : [ax / norm, ay / norm, az / norm],
    });
  }
  return ok(joints);
}

/** The transforms of the fixed joints (what robot_state_publisher sends on /tf_static). */
export function fixedTransforms(joints: readonly TreeJoint[]): LinkTransform[] {
  return joints.filter((j) => j.kind === 'fixed').map((j) => transformAt(j, 0));
}

/**
 * The transforms of the movable joints whose position `positionOf` knows (what robot_state_publisher
 * sends on /tf for a joint state); joints without a position are left out.
 */
export function movingTransforms(
  joints: readonly TreeJoint[],
  positionOf: (joint: string) => number | undefined,
): LinkTransform[] {
  const out: LinkTransform[] = [];
  for (const joint of joints) {
    if (joint.kind === 'fixed') continue;
    const q = positionOf(joint.name);
    if (q !== undefined && Number.isFinite(q)) out.push(transformAt(joint, q));
  }
  return out;
}

/** The joint's parent-to-child transform at position `q` (rad or m). */
export function transformAt(joint: TreeJoint, q: number): LinkTransform {
  const [ox, oy, oz] = joint.originM;
  const [ax, ay, az] = joint.axis;
  const o = joint.originRotation;
  if (joint.kind === 'revolute') {
    const s = Math.sin(q / 2);
    const turn = { x: ax * s, y: ay * s, z: az * s, w: Math.cos(q / 2) };
    return {
      parent: joint.parent,
      child: joint.child,
      translation: { x: ox, y: oy, z: oz },
      rotation: mulQuat(o, turn),
    };
  }
  if (joint.kind === 'prismatic') {
    const moved = rotate(o, ax * q, ay * q, az * q);
    return {
      parent: joint.parent,
      child: joint.child,
      translation: { x: ox + moved.x, y: oy + moved.y, z: oz + moved.z },
      rotation: { ...o },
    };
  }
  return { parent: joint.parent, child: joint.child, translation: { x: ox, y: oy, z: oz }, rotation: { ...o } };
}

/** Hamilton product a * b. */
function mulQuat(a: Quaternion, b: Quaternion): Quaternion {
  return {
    x: a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
    y: a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
    z: a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w,
    w: a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
  };
}

/** The vector (x, y, z) turned by the unit quaternion q. */
function rotate(q: Quaternion, x: number, y: number, z: number): { x: number; y: number; z: number } {
  const p = mulQuat(mulQuat(q, { x, y, z, w: 0 }), { x: -q.x, y: -q.y, z: -q.z, w: q.w });
  return { x: p.x, y: p.y, z: p.z };
}
