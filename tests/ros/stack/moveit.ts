/**
 * move_group's services as MoveIt 2 (jazzy) answers them, on the test stack's model: GetPositionFK
 * and GetPositionIK (kinematics_service_capability.cpp), GetMotionPlan (plan_service_capability.cpp:
 * every failure of the planning pipeline answers FAILURE, 99999, whatever the adapter or planner
 * said) and ApplyPlanningScene (collision objects kept by id). Plain requests in, plain responses
 * out; no ROS.
 */
import { solveIk } from './ik.ts';
import {
  at,
  compose,
  groupNames,
  invert,
  linkPose,
  type Pose,
  type Quat,
  quatNormalize,
  type RobotModel,
  rotate,
  withinLimits,
} from './model.ts';
import { type Box, boxesOf, collidingBox, planJointPath } from './planner.ts';

/** moveit_msgs/msg/MoveItErrorCodes values used here. */
export const CODE = {
  SUCCESS: 1,
  FAILURE: 99999,
  PLANNING_FAILED: -1,
  START_STATE_IN_COLLISION: -10,
  START_STATE_INVALID: -26,
  GOAL_IN_COLLISION: -12,
  INVALID_GROUP_NAME: -15,
  INVALID_GOAL_CONSTRAINTS: -16,
  INVALID_LINK_NAME: -18,
  FRAME_TRANSFORM_FAILURE: -21,
  NO_IK_SOLUTION: -31,
} as const;

/** The planning pipelines MoveItConfigsBuilder gives move_group by default (the original configures no others). */
const PIPELINES = ['ompl', 'pilz_industrial_motion_planner', 'chomp', 'stomp'];

type Msg = Record<string, unknown>;
const obj = (v: unknown): Msg => (v && typeof v === 'object' ? (v as Msg) : {});
const arr = (v: unknown): unknown[] =>
  v && typeof v === 'object' && 'length' in v ? Array.from(v as ArrayLike<unknown>) : [];
const num = (v: unknown): number => (typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : 0);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

export function poseFromMsg(msg: unknown): Pose {
  const p = obj(obj(msg).position);
  const o = obj(obj(msg).orientation);
  const q: Quat = [num(o.x), num(o.y), num(o.z), num(o.w)];
  // MoveIt: "Empty quaternion found in pose message. Setting to neutral orientation."
  return { p: [num(p.x), num(p.y), num(p.z)], q: q.every((v) => v === 0) ? [0, 0, 0, 1] : quatNormalize(q) };
}

export function poseToMsg(pose: Pose): Msg {
  return {
    position: { x: pose.p[0], y: pose.p[1], z: pose.p[2] },
    orientation: { x: pose.q[0], y: pose.q[1], z: pose.q[2], w: pose.q[3] },
  };
}

export const stampNow = (): Msg => {
  const ms = Date.now();
  return { sec: Math.floor(ms / 1000), nanosec: (ms % 1000) * 1e6 };
};

/** The MoveIt side of the stack: the model, the SRDF, the current state and the planning scene. */
export class MoveGroup {
  readonly groups: string[];
  /** The world's collision objects by id (their primitives as boxes in the model frame). */
  readonly objects = new Map<
    string,
    { pose: Pose; primitives: { type: number; dimensions: number[] }[]; poses: Pose[] }
  >();

  readonly model: RobotModel;
  readonly tipLink: string;
  private readonly current: () => readonly number[];

  constructor(model: RobotModel, srdf: string, current: () => readonly number[], tipLink: string) {
    this.model = model;
    this.current = current;
    this.tipLink = tipLink;
    this.groups = groupNames(srdf);
  }

  boxes(): Box[] {
    return [...this.objects].flatMap(([id, o]) => boxesOf(id, o.pose, o.primitives, o.poses));
  }

  /** A frame's pose in the model frame (robot links only: what robot_state_publisher puts on TF). */
  framePose(name: string, positions: readonly number[] = this.current()): Pose | undefined {
    if (name === '' || name === this.model.root) return { p: [0, 0, 0], q: [0, 0, 0, 1] };
    return linkPose(this.model, positions, name.replace(/^\//, ''));
  }

  /** The current state with a moveit_msgs/RobotState's joint values laid over it (names it does not know are ignored). */
  private stateFrom(robotState: unknown): number[] {
    const q = [...this.current()];
    const js = obj(obj(robotState).joint_state);
    const names = arr(js.name).map(str);
    const positions = arr(js.position).map(num);
    if (names.length !== positions.length) return q;
    names.forEach((n, k) => {
      const i = this.model.jointNames.indexOf(n);
      if (i >= 0) q[i] = at(positions, k);
    });
    return q;
  }

  private robotStateMsg(positions: readonly number[]): Msg {
    return {
      joint_state: {
        header: { stamp: { sec: 0, nanosec: 0 }, frame_id: this.model.root },
        name: [...this.model.jointNames],
        position: [...positions],
        velocity: [],
        effort: [],
      },
      is_diff: false,
    };
  }

  computeFk(req: Msg): Msg {
    const links = arr(req.fk_link_names).map(str);
    if (links.length === 0) return { pose_stamped: [], fk_link_names: [], error_code: { val: CODE.INVALID_LINK_NAME } };
    const q = this.stateFrom(req.robot_state);
    const frameId = str(obj(req.header).frame_id);
    const transform = frameId !== '' && frameId.replace(/^\//, '') !== this.model.root;
    const reference = transform ? this.framePose(frameId, this.current()) : undefined;
    const poses: Msg[] = [];
    const found: string[] = [];
    for (const link of links) {
      const pose = linkPose(this.model, q, link);
      if (!pose) continue;
      const inFrame = transform && reference ? compose(invert(reference), pose) : pose;
      poses.push({
        header: { stamp: stampNow(), frame_id: transform && reference ? frameId : this.model.root },
        pose: poseToMsg(inFrame),
      });
      found.push(link);
    }
    const val =
      transform && !reference && found.length > 0
        ? CODE.FRAME_TRANSFORM_FAILURE
        : found.length === links.length
          ? CODE.SUCCESS
          : CODE.INVALID_LINK_NAME;
    return { pose_stamped: poses, fk_link_names: found, error_code: { val } };
  }

  /**
   * MoveIt's IK service: the group must exist; the pose (single pose_stamped, or the first of
   * pose_stamped_vector) is moved into the model frame; the link, empty for the group's tip, must be
   * rigidly attached to the tip; the time budget is `timeout.sec` only (whole seconds, as
   * computeIK passes req.timeout.sec), 0 meaning the solver's default (kinematics.yaml: 0.005 s).
   */
  computeIk(req: Msg): Msg {
    const ik = obj(req.ik_request);
    const fail = (val: number): Msg => ({ solution: this.robotStateMsg([]), error_code: { val } });
    if (!this.groups.includes(str(ik.group_name))) return fail(CODE.INVALID_GROUP_NAME);
    const vector = arr(ik.pose_stamped_vector);
    if (vector.length > 1)
      return fail(arr(ik.ik_link_names).length !== vector.length ? CODE.INVALID_LINK_NAME : CODE.NO_IK_SOLUTION);
    const stamped = obj(vector.length === 1 ? vector[0] : ik.pose_stamped);
    const link = vector.length === 1 ? str(arr(ik.ik_link_names)[0]) : str(ik.ik_link_name);
    const seed =
      arr(obj(obj(ik.robot_state).joint_state).name).length > 0 ? this.stateFrom(ik.robot_state) : [...this.current()];
    const frameId = str(obj(stamped.header).frame_id);
    const reference = this.framePose(frameId, this.current());
    if (!reference) return fail(CODE.FRAME_TRANSFORM_FAILURE);
    const target = compose(reference, poseFromMsg(stamped.pose));
    const ikLink = link === '' ? this.tipLink : link;
    // The pose of a link rigidly attached to the tip becomes a pose of the tip (RobotState::setFromIK).
    const tipInLink = this.rigidOffset(ikLink);
    if (!tipInLink) return fail(CODE.NO_IK_SOLUTION);
    const tipTarget = compose(target, tipInLink);
    const timeout = obj(ik.timeout);
    const budgetS = num(timeout.sec) > 0 ? num(timeout.sec) : 0.005;
    const boxes = ik.avoid_collisions === true ? this.boxes() : [];
    const q = solveIk(this.model, this.tipLink, tipTarget, seed, performance.now() + budgetS * 1000, (s) =>
      boxes.length === 0 ? true : collidingBox(this.model, s, boxes) === undefined,
    );
    if (!q) return fail(CODE.NO_IK_SOLUTION);
    return { solution: this.robotStateMsg(q), error_code: { val: CODE.SUCCESS } };
  }

  /** The tip's pose in a link's frame when the link is rigidly attached to the tip (no moving joint between). */
  private rigidOffset(link: string): Pose | undefined {
    if (!this.model.links.has(link)) return undefined;
    const zero = this.model.jointNames.map(() => 0);
    const movingParent = (l: string): string => {
      let link = l;
      for (;;) {
        const j = this.model.parentJoint.get(link);
        if (j?.type !== 'fixed') return link;
        link = j.parent;
      }
    };
    if (movingParent(link) !== movingParent(this.tipLink)) return undefined;
    const linkAt = linkPose(this.model, zero, link);
    const tipAt = linkPose(this.model, zero, this.tipLink);
    return linkAt && tipAt ? compose(invert(linkAt), tipAt) : undefined;
  }

  /** Solves a pose for the tip (seeded at `seed`), for planning and move_to_pose; undefined when none is found. */
  solvePose(target: Pose, link: string, seed: readonly number[], budgetS: number): number[] | undefined {
    const offset = this.rigidOffset(link);
    if (!offset) return undefined;
    const boxes = this.boxes();
    return solveIk(this.model, this.tipLink, compose(target, offset), seed, performance.now() + budgetS * 1000, (s) =>
      boxes.length === 0 ? true : collidingBox(this.model, s, boxes) === undefined,
    );
  }

  /** The goal joint values of a Constraints message, from `start`; a reason string when there is none. */
  private goalOf(constraints: Msg, start: readonly number[]): number[] | string {
    const goal = [...start];
    const joints = arr(constraints.joint_constraints).map(obj);
    const positions = arr(constraints.position_constraints).map(obj);
    const orientations = arr(constraints.orientation_constraints).map(obj);
    if (joints.length === 0 && positions.length === 0 && orientations.length === 0) return 'empty goal constraints';
    for (const jc of joints) {
      const i = this.model.jointNames.indexOf(str(jc.joint_name));
      if (i < 0) return `joint '${str(jc.joint_name)}' is not in the model`;
      goal[i] = num(jc.position);
    }
    if (positions.length === 0 && orientations.length === 0) return goal;
    const pc = positions[0];
    const oc = orientations[0];
    const link = str(pc?.link_name ?? oc?.link_name);
    const startPose = linkPose(this.model, start, link);
    if (!startPose) return `link '${link}' is not in the model`;
    let p = startPose.p;
    let q = startPose.q;
    if (pc) {
      const reference = this.framePose(str(obj(pc.header).frame_id), start);
      if (!reference) return `unknown frame '${str(obj(pc.header).frame_id)}'`;
      const region = obj(pc.constraint_region);
      const center = arr(region.primitive_poses)[0] ?? arr(region.mesh_poses)[0];
      const at = poseFromMsg(center);
      const offset = obj(pc.target_point_offset);
      const centre = compose(reference, at).p;
      const off = rotate(q, [num(offset.x), num(offset.y), num(offset.z)]);
      p = [centre[0] - off[0], centre[1] - off[1], centre[2] - off[2]];
    }
    if (oc) {
      const reference = this.framePose(str(obj(oc.header).frame_id), start);
      if (!reference) return `unknown frame '${str(obj(oc.header).frame_id)}'`;
      q = compose(reference, poseFromMsg({ orientation: oc.orientation })).q;
    }
    const solved = this.solvePose({ p, q }, link, start, 0.5);
    return solved ?? `no inverse kinematics solution for '${link}'`;
  }

  /** GetMotionPlan: a time-parameterised joint path; every failure answers FAILURE with the reason in the message. */
  planKinematicPath(req: Msg): Msg {
    const started = performance.now();
    const mpr = obj(req.motion_plan_request);
    const group = str(mpr.group_name);
    const startState = obj(mpr.start_state);
    const start = this.stateFrom(startState);
    const answer = (val: number, message: string, points: Msg[] = []): Msg => ({
      motion_plan_response: {
        trajectory_start: this.robotStateMsg(start),
        group_name: group,
        trajectory: {
          joint_trajectory: {
            header: { stamp: { sec: 0, nanosec: 0 }, frame_id: val === CODE.SUCCESS ? this.model.root : '' },
            joint_names: val === CODE.SUCCESS ? [...this.model.jointNames] : [],
            points,
          },
        },
        planning_time: (performance.now() - started) / 1000,
        error_code: { val, message, source: val === CODE.SUCCESS ? '' : 'test stack planning pipeline' },
      },
    });
    // resolvePlanningPipeline: an unknown pipeline_id is FAILURE before anything else ('' is the default, ompl).
    const pipeline = str(mpr.pipeline_id);
    if (pipeline !== '' && !PIPELINES.includes(pipeline))
      return answer(CODE.FAILURE, `no planning pipeline '${pipeline}'`);
    if (!this.groups.includes(group)) return answer(CODE.FAILURE, `INVALID_GROUP_NAME: no group '${group}'`);
    if (!withinLimits(this.model, start, 1e-9))
      return answer(CODE.FAILURE, 'START_STATE_INVALID: the start state is outside the joint limits');
    const boxes = this.boxes();
    const hit = collidingBox(this.model, start, boxes);
    if (hit) return answer(CODE.FAILURE, `START_STATE_IN_COLLISION: the start state collides with '${hit.id}'`);
    const goals = arr(mpr.goal_constraints).map(obj);
    if (goals.length === 0) return answer(CODE.FAILURE, 'INVALID_GOAL_CONSTRAINTS: no goal constraints');
    const scale = (v: number, fallback: number) => (v > 0 && v <= 1 ? v : v === 0 ? fallback : 1);
    const vs = scale(num(mpr.max_velocity_scaling_factor), this.model.defaultVelocityScaling);
    const as = scale(num(mpr.max_acceleration_scaling_factor), this.model.defaultAccelerationScaling);
    let reason = '';
    for (const constraints of goals) {
      const goal = this.goalOf(constraints, start);
      if (typeof goal === 'string') {
        reason = goal;
        continue;
      }
      const plan = planJointPath(this.model, start, goal, boxes, vs, as);
      if (!plan.ok) {
        reason = plan.reason;
        continue;
      }
      const points = plan.points.map((p) => ({
        positions: p.positions,
        velocities: p.velocities,
        accelerations: p.accelerations,
        effort: [],
        time_from_start: { sec: Math.floor(p.t), nanosec: Math.round((p.t - Math.floor(p.t)) * 1e9) % 1e9 },
      }));
      return answer(CODE.SUCCESS, '', points);
    }
    return answer(CODE.FAILURE, `PLANNING_FAILED: ${reason}`);
  }

  /** ApplyPlanningScene: the world's collision objects (ADD, REMOVE, APPEND, MOVE); false as MoveIt refuses. */
  applyPlanningScene(req: Msg): { response: Msg; objects: { id: string; operation: string }[] } {
    const scene = obj(req.scene);
    const world = obj(scene.world);
    const objects = arr(world.collision_objects).map(obj);
    const summary = objects.map((o) => ({
      id: str(o.id),
      operation: ['add', 'remove', 'append', 'move'][num(o.operation)] ?? 'unknown',
    }));
    if (scene.is_diff !== true) this.objects.clear();
    let success = true;
    for (const o of objects) {
      const id = str(o.id);
      const operation = num(o.operation);
      const reference = this.framePose(str(obj(o.header).frame_id), this.current());
      if (operation === 1) {
        if (id === '') this.objects.clear();
        else if (!this.objects.delete(id)) success = false;
        continue;
      }
      if (!reference) {
        success = false;
        continue;
      }
      const pose = compose(reference, poseFromMsg(o.pose));
      const primitives = arr(o.primitives).map((p) => ({
        type: num(obj(p).type),
        dimensions: arr(obj(p).dimensions).map(num),
      }));
      const poses = arr(o.primitive_poses).map(poseFromMsg);
      if (operation === 0) {
        if (id === '' || (primitives.length === 0 && arr(o.meshes).length === 0 && arr(o.planes).length === 0))
          success = false;
        else this.objects.set(id, { pose, primitives, poses });
      } else if (operation === 2) {
        const existing = this.objects.get(id);
        if (existing) {
          existing.primitives.push(...primitives);
          existing.poses.push(...poses);
        } else if (id !== '' && primitives.length > 0) this.objects.set(id, { pose, primitives, poses });
        else success = false;
      } else if (operation === 3) {
        const existing = this.objects.get(id);
        if (existing) existing.pose = pose;
        else success = false;
      } else success = false;
    }
    return { response: { success }, objects: summary };
  }
}
