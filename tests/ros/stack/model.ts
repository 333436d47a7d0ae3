/**
 * The test stack's robot model: the URDF's kinematic tree, forward kinematics of any link, the joint
 * limits (MoveIt's joint_limits.yaml) and the SRDF's named group states. Pure data and math; no ROS.
 */
import { XMLParser } from 'fast-xml-parser';
import { parse as parseYaml } from 'yaml';

/** An element that must exist (an index within bounds); a RangeError otherwise. */
export function at<T>(list: ArrayLike<T>, index: number): T {
  const value = list[index];
  if (value === undefined) throw new RangeError(`index ${index} out of range (${list.length})`);
  return value;
}

export type Vec3 = readonly [number, number, number];
/** A unit quaternion [x, y, z, w]. */
export type Quat = readonly [number, number, number, number];
export interface Pose {
  readonly p: Vec3;
  readonly q: Quat;
}

export const IDENTITY: Pose = { p: [0, 0, 0], q: [0, 0, 0, 1] };

export function quatMul(a: Quat, b: Quat): Quat {
  const [ax, ay, az, aw] = a;
  const [bx, by, bz, bw] = b;
  return [
    aw * bx + ax * bw + ay * bz - az * by,
    aw * by - ax * bz + ay * bw + az * bx,
    aw * bz + ax * by - ay * bx + az * bw,
    aw * bw - ax * bx - ay * by - az * bz,
  ];
}

export function quatConj(q: Quat): Quat {
  return [-q[0], -q[1], -q[2], q[3]];
}

export function quatNormalize(q: Quat): Quat {
  const n = Math.hypot(q[0], q[1], q[2], q[3]);
  return n === 0 ? [0, 0, 0, 1] : [q[0] / n, q[1] / n, q[2] / n, q[3] / n];
}

export function rotate(q: Quat, v: Vec3): Vec3 {
  const r = quatMul(quatMul(q, [v[0], v[1], v[2], 0]), quatConj(q));
  return [r[0], r[1], r[2]];
}

export function compose(a: Pose, b: Pose): Pose {
  const rb = rotate(a.q, b.p);
  return { p: [a.p[0] + rb[0], a.p[1] + rb[1], a.p[2] + rb[2]], q: quatNormalize(quatMul(a.q, b.q)) };
}

export function invert(a: Pose): Pose {
  const qi = quatConj(a.q);
  const p = rotate(qi, a.p);
  return { p: [-p[0], -p[1], -p[2]], q: qi };
}

export function axisAngle(axis: Vec3, angle: number): Quat {
  const n = Math.hypot(axis[0], axis[1], axis[2]) || 1;
  const s = Math.sin(angle / 2) / n;
  return [axis[0] * s, axis[1] * s, axis[2] * s, Math.cos(angle / 2)];
}

/** URDF rpy (fixed axes X, then Y, then Z) as a quaternion. */
export function rpyQuat(r: number, p: number, y: number): Quat {
  return quatMul(axisAngle([0, 0, 1], y), quatMul(axisAngle([0, 1, 0], p), axisAngle([1, 0, 0], r)));
}

/** The rotation from a to b as a rotation vector (axis * angle, in a's parent frame). */
export function rotationError(current: Quat, target: Quat): Vec3 {
  let e = quatMul(target, quatConj(current));
  if (e[3] < 0) e = [-e[0], -e[1], -e[2], -e[3]];
  const s = Math.hypot(e[0], e[1], e[2]);
  if (s < 1e-12) return [2 * e[0], 2 * e[1], 2 * e[2]];
  const angle = 2 * Math.atan2(s, e[3]);
  return [(e[0] / s) * angle, (e[1] / s) * angle, (e[2] / s) * angle];
}

export interface UrdfJoint {
  readonly name: string;
  readonly type: 'revolute' | 'continuous' | 'prismatic' | 'fixed';
  readonly parent: string;
  readonly child: string;
  readonly origin: Pose;
  readonly axis: Vec3;
}

export interface JointLimit {
  readonly min: number;
  readonly max: number;
  readonly velocity: number;
  readonly acceleration: number;
}

/** The robot: its tree (root link, each link's parent joint), the arm's joints in order and their limits. */
export interface RobotModel {
  readonly root: string;
  readonly links: ReadonlySet<string>;
  /** The joint whose child a link is (every link but the root). */
  readonly parentJoint: ReadonlyMap<string, UrdfJoint>;
  /** The arm's moving joints, in the model's order (joint1..joint7). */
  readonly jointNames: readonly string[];
  readonly limits: readonly JointLimit[];
  /** MoveIt's default scaling factors (joint_limits.yaml); 0.1 as the original stack's file says. */
  readonly defaultVelocityScaling: number;
  readonly defaultAccelerationScaling: number;
}

const numbers = (text: unknown, fallback: Vec3): Vec3 => {
  if (typeof text !== 'string') return fallback;
  const parts = text.trim().split(/\s+/).map(Number);
  return parts.length === 3 && parts.every(Number.isFinite) ? [at(parts, 0), at(parts, 1), at(parts, 2)] : fallback;
};

const asArray = <T>(value: T | T[] | undefined): T[] =>
  value === undefined ? [] : Array.isArray(value) ? value : [value];

type Attrs = Record<string, unknown>;

/** Parses a URDF's links and joints and joins them with the joint limits file into a model. */
export function loadModel(urdf: string, limitsYaml: string): RobotModel {
  const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(urdf) as {
    robot?: { link?: Attrs | Attrs[]; joint?: Attrs | Attrs[] };
  };
  const robot = xml.robot;
  if (!robot) throw new Error('the URDF has no <robot>');
  const links = new Set(asArray(robot.link).map((l) => String(l.name)));
  const joints: UrdfJoint[] = asArray(robot.joint).map((j) => {
    const origin = (j.origin ?? {}) as Attrs;
    const rpy = numbers(origin.rpy, [0, 0, 0]);
    return {
      name: String(j.name),
      type: String(j.type) as UrdfJoint['type'],
      parent: String((j.parent as Attrs).link),
      child: String((j.child as Attrs).link),
      origin: { p: numbers(origin.xyz, [0, 0, 0]), q: rpyQuat(rpy[0], rpy[1], rpy[2]) },
      axis: numbers((j.axis as Attrs | undefined)?.xyz, [1, 0, 0]),
    };
  });
  const parentJoint = new Map(joints.map((j) => [j.child, j]));
  const roots = [...links].filter((l) => !parentJoint.has(l));
  if (roots.length !== 1) throw new Error(`the URDF has ${roots.length} root links`);
  const jointNames = joints.filter((j) => j.type !== 'fixed').map((j) => j.name);
  const file = parseYaml(limitsYaml) as {
    default_velocity_scaling_factor?: number;
    default_acceleration_scaling_factor?: number;
    joint_limits: Record<
      string,
      { min_position: number; max_position: number; max_velocity: number; max_acceleration: number }
    >;
  };
  const limits = jointNames.map((name) => {
    const l = file.joint_limits[name];
    if (!l) throw new Error(`the joint limits file has no ${name}`);
    return { min: l.min_position, max: l.max_position, velocity: l.max_velocity, acceleration: l.max_acceleration };
  });
  return {
    root: at(roots, 0),
    links,
    parentJoint,
    jointNames,
    limits,
    defaultVelocityScaling: file.default_velocity_scaling_factor ?? 1,
    defaultAccelerationScaling: file.default_acceleration_scaling_factor ?? 1,
  };
}

/** The joints from the root to a link, root first (undefined for an unknown link). */
export function chainTo(model: RobotModel, link: string): UrdfJoint[] | undefined {
  if (!model.links.has(link)) return undefined;
  const chain: UrdfJoint[] = [];
  for (let at = link; at !== model.root; ) {
    const joint = model.parentJoint.get(at);
    if (!joint) return undefined;
    chain.unshift(joint);
    at = joint.parent;
  }
  return chain;
}

/** A joint's frame (child side) pose for a joint value. */
function jointTransform(joint: UrdfJoint, value: number): Pose {
  if (joint.type === 'revolute' || joint.type === 'continuous')
    return compose(joint.origin, { p: [0, 0, 0], q: axisAngle(joint.axis, value) });
  if (joint.type === 'prismatic')
    return compose(joint.origin, {
      p: [joint.axis[0] * value, joint.axis[1] * value, joint.axis[2] * value],
      q: [0, 0, 0, 1],
    });
  return joint.origin;
}

/** A link's pose in the root frame for the arm's joint positions (in model order); undefined for an unknown link. */
export function linkPose(model: RobotModel, positions: readonly number[], link: string): Pose | undefined {
  const chain = chainTo(model, link);
  if (!chain) return undefined;
  let pose = IDENTITY;
  for (const joint of chain)
    pose = compose(pose, jointTransform(joint, positions[model.jointNames.indexOf(joint.name)] ?? 0));
  return pose;
}

/** Each moving joint on the chain to `link`: its index, world axis and world origin, and the link's pose. */
export function jacobianFrames(
  model: RobotModel,
  positions: readonly number[],
  link: string,
): { pose: Pose; axes: { index: number; axis: Vec3; origin: Vec3 }[] } | undefined {
  const chain = chainTo(model, link);
  if (!chain) return undefined;
  let pose = IDENTITY;
  const axes: { index: number; axis: Vec3; origin: Vec3 }[] = [];
  for (const joint of chain) {
    const index = model.jointNames.indexOf(joint.name);
    const frame = compose(pose, joint.origin);
    if (index >= 0 && joint.type !== 'fixed') axes.push({ index, axis: rotate(frame.q, joint.axis), origin: frame.p });
    pose = compose(pose, jointTransform(joint, positions[index] ?? 0));
  }
  return { pose, axes };
}

/** The origins of every link on the arm (for the simple collision check against boxes). */
export function linkOrigins(model: RobotModel, positions: readonly number[]): Vec3[] {
  return [...model.links].flatMap((l) => {
    const pose = linkPose(model, positions, l);
    return pose ? [pose.p] : [];
  });
}

/** The SRDF's group states of a group: name -> joint values (in model order, missing ones 0). */
export function groupStates(model: RobotModel, srdf: string, group: string): Map<string, number[]> {
  const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(srdf) as {
    robot?: { group_state?: Attrs | Attrs[] };
  };
  const states = new Map<string, number[]>();
  for (const state of asArray(xml.robot?.group_state)) {
    if (state.group !== group) continue;
    const values = model.jointNames.map(() => 0);
    for (const j of asArray(state.joint as Attrs | Attrs[] | undefined)) {
      const index = model.jointNames.indexOf(String(j.name));
      if (index >= 0) values[index] = Number(j.value);
    }
    states.set(String(state.name), values);
  }
  return states;
}

/** The SRDF's groups (names). */
export function groupNames(srdf: string): string[] {
  const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(srdf) as {
    robot?: { group?: Attrs | Attrs[] };
  };
  return asArray(xml.robot?.group).map((g) => String(g.name));
}

export function withinLimits(model: RobotModel, positions: readonly number[], margin = 0): boolean {
  return model.limits.every((l, i) => {
    const v = positions[i];
    return v !== undefined && Number.isFinite(v) && v >= l.min - margin && v <= l.max + margin;
  });
}
