/**
 * The test stack's planning: the collision boxes of the planning scene, a simple check of the arm
 * against them, and a joint-space plan (a straight line from start to goal, time-parameterised as
 * one trapezoid that keeps every joint within its scaled velocity and acceleration limits). It does
 * not plan around obstacles: a path through a box fails. Pure.
 */
import { at, compose, invert, linkPose, type Pose, type RobotModel, type Vec3, withinLimits } from './model.ts';

export interface Box {
  readonly id: string;
  /** The box's centre pose in the model frame. */
  readonly pose: Pose;
  readonly size: Vec3;
}

/** How close (m) a link frame or a point between two of them may come to a box. */
const MARGIN = 0.05;
/** Links whose frames are checked (the base and the first link do not move through space). */
const CHECKED = ['link2', 'link3', 'link4', 'link5', 'link6', 'link7', 'flange', 'tcp'];

function inside(box: Box, point: Vec3): boolean {
  const local = compose(invert(box.pose), { p: point, q: [0, 0, 0, 1] }).p;
  return local.every((v, i) => Math.abs(v) <= at(box.size, i) / 2 + MARGIN);
}

/** The first box the arm touches at these joint positions (its frames and the midpoints between them). */
export function collidingBox(model: RobotModel, positions: readonly number[], boxes: readonly Box[]): Box | undefined {
  if (boxes.length === 0) return undefined;
  const frames = CHECKED.flatMap((l) => {
    const pose = linkPose(model, positions, l);
    return pose ? [pose.p] : [];
  });
  const points: Vec3[] = [...frames];
  for (let i = 1; i < frames.length; i++) {
    const a = at(frames, i - 1);
    const b = at(frames, i);
    points.push([(a[0] + b[0]) / 2, (a[1] + b[1]) / 2, (a[2] + b[2]) / 2]);
  }
  return boxes.find((box) => points.some((p) => inside(box, p)));
}

export interface PlannedPoint {
  readonly t: number;
  readonly positions: number[];
  readonly velocities: number[];
  readonly accelerations: number[];
}

export type PlanResult = { ok: true; points: PlannedPoint[] } | { ok: false; reason: string };

/** Seconds between the plan's points. */
const STEP = 0.1;

/**
 * A time-parameterised straight joint-space path from start to goal within the limits scaled by
 * the factors (each in (0, 1]), checked against the boxes.
 */
export function planJointPath(
  model: RobotModel,
  start: readonly number[],
  goal: readonly number[],
  boxes: readonly Box[],
  velocityScaling: number,
  accelerationScaling: number,
): PlanResult {
  if (!withinLimits(model, start, 1e-9)) return { ok: false, reason: 'the start state is outside the joint limits' };
  if (!withinLimits(model, goal)) return { ok: false, reason: 'the goal state is outside the joint limits' };
  const hit = collidingBox(model, goal, boxes);
  if (hit) return { ok: false, reason: `the goal state is in collision with '${hit.id}'` };
  const d = goal.map((g, i) => g - at(start, i));
  let V = Number.POSITIVE_INFINITY;
  let A = Number.POSITIVE_INFINITY;
  d.forEach((di, i) => {
    if (Math.abs(di) < 1e-12) return;
    V = Math.min(V, (at(model.limits, i).velocity * velocityScaling) / Math.abs(di));
    A = Math.min(A, (at(model.limits, i).acceleration * accelerationScaling) / Math.abs(di));
  });
  // s(t) from 0 to 1: a trapezoid (or triangle) with s' <= V and s'' <= A.
  let ta: number;
  let T: number;
  if (!Number.isFinite(V)) {
    ta = 0;
    T = 0;
  } else if ((V * V) / A < 1) {
    ta = V / A;
    T = 1 / V + V / A;
  } else {
    ta = Math.sqrt(1 / A);
    V = A * ta;
    T = 2 * ta;
  }
  const profile = (t: number): [number, number, number] => {
    if (T === 0) return [1, 0, 0];
    if (t <= 0) return [0, 0, 0];
    if (t >= T) return [1, 0, 0];
    if (t < ta) return [0.5 * A * t * t, A * t, A];
    if (t <= T - ta) return [0.5 * A * ta * ta + V * (t - ta), V, 0];
    const r = T - t;
    return [1 - 0.5 * A * r * r, A * r, -A];
  };
  const times: number[] = [];
  for (let t = 0; t < T; t += STEP) times.push(t);
  times.push(T);
  const points = times.map((t) => {
    const [s, sd, sdd] = profile(t);
    return {
      t,
      positions: start.map((p, i) => p + at(d, i) * s),
      velocities: d.map((di) => di * sd),
      accelerations: d.map((di) => di * sdd),
    };
  });
  const last = at(points, points.length - 1);
  last.velocities.fill(0);
  last.accelerations.fill(0);
  for (const p of points) {
    const box = collidingBox(model, p.positions, boxes);
    if (box) return { ok: false, reason: `the straight path collides with '${box.id}' at t = ${p.t.toFixed(2)} s` };
  }
  return { ok: true, points };
}

/** Box primitives of a moveit_msgs/CollisionObject as boxes in the model frame (other shapes are kept as their bounding boxes). */
export function boxesOf(
  id: string,
  objectPose: Pose,
  primitives: readonly { type: number; dimensions: readonly number[] }[],
  primitivePoses: readonly Pose[],
): Box[] {
  return primitives.map((prim, k) => {
    const pose = compose(objectPose, primitivePoses[k] ?? { p: [0, 0, 0], q: [0, 0, 0, 1] });
    const dims = prim.dimensions;
    // shape_msgs/SolidPrimitive: BOX=1 [x y z], SPHERE=2 [r], CYLINDER=3 [h r], CONE=4 [h r].
    const size: Vec3 =
      prim.type === 1
        ? [dims[0] ?? 0, dims[1] ?? 0, dims[2] ?? 0]
        : prim.type === 2
          ? [2 * (dims[0] ?? 0), 2 * (dims[0] ?? 0), 2 * (dims[0] ?? 0)]
          : [2 * (dims[1] ?? 0), 2 * (dims[1] ?? 0), dims[0] ?? 0];
    return { id, pose, size };
  });
}
