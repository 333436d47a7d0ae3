/**
 * MoveIt's planning scene and plan-only request, as rclnodejs takes and gives them: the keep-out
 * boxes as collision objects (moveit_msgs/srv/ApplyPlanningScene) and a motion plan request
 * (moveit_msgs/srv/GetMotionPlan) with its RobotTrajectory answer. Pure: no I/O, no clock, no
 * rclnodejs import; what comes in is `unknown` and is checked here.
 */
import type { Quaternion } from '../kinematics/rotation.ts';
import type { PlannerName } from '../motion/vocabulary.ts';
import { err, ok, type Result } from '../result.ts';
import type { KeepOutBox } from '../safety/envelope.ts';
import { durationFromRos, numbersOf } from './convert.ts';
import { type JointTrajectoryMsg, MOVEIT_SUCCESS, type PointMsg } from './messages.ts';

type Dict = Readonly<Record<string, unknown>>;
const isDict = (value: unknown): value is Dict =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && !ArrayBuffer.isView(value);

/** shape_msgs/msg/SolidPrimitive BOX and SPHERE; moveit_msgs/msg/CollisionObject ADD. */
export const SOLID_BOX = 1;
export const SOLID_SPHERE = 2;
export const COLLISION_OBJECT_ADD = 0;

/** The id of a keep-out box's collision object in MoveIt's planning scene. */
export function keepOutObjectId(name: string): string {
  return `armgate_keep_out_${name}`;
}

const IDENTITY = { position: { x: 0, y: 0, z: 0 }, orientation: { x: 0, y: 0, z: 0, w: 1 } };

/**
 * An ApplyPlanningScene request adding each keep-out box as a collision object (a BOX primitive
 * centred in the box, axis-aligned in `frame`, the planning frame) to the current scene (a diff:
 * nothing else changes; an object of the same id is replaced).
 */
export function keepOutSceneRequestToRos(boxes: readonly KeepOutBox[], frame: string) {
  return {
    scene: {
      name: '',
      is_diff: true,
      robot_state: { is_diff: true },
      world: {
        collision_objects: boxes.map((box) => {
          const at = (a: number) => ((box.min[a] ?? 0) + (box.max[a] ?? 0)) / 2;
          const size = (a: number) => (box.max[a] ?? 0) - (box.min[a] ?? 0);
          return {
            header: { stamp: { sec: 0, nanosec: 0 }, frame_id: frame },
            pose: IDENTITY,
            id: keepOutObjectId(box.name),
            primitives: [{ type: SOLID_BOX, dimensions: Float64Array.from([size(0), size(1), size(2)]) }],
            primitive_poses: [{ position: { x: at(0), y: at(1), z: at(2) }, orientation: IDENTITY.orientation }],
            operation: COLLISION_OBJECT_ADD,
          };
        }),
      },
    },
  };
}

/** The `success` of an ApplyPlanningScene response; an error when malformed. */
export function applySceneResponseFromRos(raw: unknown): Result<boolean, string> {
  return isDict(raw) && typeof raw.success === 'boolean' ? ok(raw.success) : err('response without a boolean success');
}

/** A planning pipeline of the stack and the planner in it. */
export interface MoveItPlanner {
  readonly pipeline_id: string;
  readonly planner_id: string;
}

/**
 * armgate's planner names as MoveIt's planning pipelines: Pilz's industrial motion planner for
 * ptp/lin/circ, OMPL's RRTConnect (the planner configuration MoveIt's generated configs name
 * `RRTConnectkConfigDefault`; OMPL falls back to its default planner for a name it lacks), CHOMP.
 */
export const MOVEIT_PLANNERS = {
  ptp: { pipeline_id: 'pilz_industrial_motion_planner', planner_id: 'PTP' },
  lin: { pipeline_id: 'pilz_industrial_motion_planner', planner_id: 'LIN' },
  circ: { pipeline_id: 'pilz_industrial_motion_planner', planner_id: 'CIRC' },
  ompl: { pipeline_id: 'ompl', planner_id: 'RRTConnectkConfigDefault' },
  chomp: { pipeline_id: 'chomp', planner_id: '' },
} as const satisfies Record<PlannerName, MoveItPlanner>;

/** The goal of a plan-only request: joint positions, or a pose of a link. */
export type PlanGoal =
  | { readonly kind: 'joints'; readonly names: readonly string[]; readonly positions: readonly number[] }
  | {
      readonly kind: 'pose';
      readonly link: string;
      readonly frame: string;
      readonly position: PointMsg;
      readonly orientation: Quaternion;
      /** CIRC's auxiliary point (Pilz reads it from the path constraints' name and position). */
      readonly aux?: { readonly name: 'center' | 'interim'; readonly point: PointMsg };
    };

/** What a plan-only request asks. */
export interface PlanSpec {
  readonly group: string;
  /** The arm's joint state to plan from (a diff over MoveIt's current state); absent: MoveIt's current state. */
  readonly start?: { readonly name: readonly string[]; readonly position: readonly number[] };
  readonly goal: PlanGoal;
  readonly planner: MoveItPlanner;
  readonly velocityScale: number;
  readonly accelerationScale: number;
  readonly allowedPlanningTimeS: number;
}

/** Joint goal tolerance (rad) and pose goal tolerances (m, rad), as MoveIt's constructGoalConstraints defaults. */
export const JOINT_GOAL_TOLERANCE_RAD = 1e-4;
export const POSITION_GOAL_TOLERANCE_M = 1e-3;
export const ORIENTATION_GOAL_TOLERANCE_RAD = 1e-2;

const header = (frame: string) => ({ stamp: { sec: 0, nanosec: 0 }, frame_id: frame });

/** A position constraint of `link`: a sphere of `radius` around `point`. */
function positionConstraint(link: string, frame: string, point: PointMsg, radius: number) {
  return {
    header: header(frame),
    link_name: link,
    target_point_offset: { x: 0, y: 0, z: 0 },
    constraint_region: {
      primitives: [{ type: SOLID_SPHERE, dimensions: Float64Array.from([radius]) }],
      primitive_poses: [{ position: { ...point }, orientation: IDENTITY.orientation }],
    },
    weight: 1,
  };
}

/** moveit_msgs/srv/GetMotionPlan request as rclnodejs takes it (missing fields keep their defaults). */
export function motionPlanRequestToRos(spec: PlanSpec) {
  const goal = spec.goal;
  const constraints =
    goal.kind === 'joints'
      ? {
          name: 'armgate_joint_goal',
          joint_constraints: goal.names.map((joint_name, i) => ({
            joint_name,
            position: goal.positions[i] ?? 0,
            tolerance_above: JOINT_GOAL_TOLERANCE_RAD,
            tolerance_below: JOINT_GOAL_TOLERANCE_RAD,
            weight: 1,
          })),
        }
      : {
          name: 'armgate_pose_goal',
          position_constraints: [positionConstraint(goal.link, goal.frame, goal.position, POSITION_GOAL_TOLERANCE_M)],
          orientation_constraints: [
            {
              header: header(goal.frame),
              orientation: { ...goal.orientation },
              link_name: goal.link,
              absolute_x_axis_tolerance: ORIENTATION_GOAL_TOLERANCE_RAD,
              absolute_y_axis_tolerance: ORIENTATION_GOAL_TOLERANCE_RAD,
              absolute_z_axis_tolerance: ORIENTATION_GOAL_TOLERANCE_RAD,
              weight: 1,
            },
          ],
        };
  const aux = goal.kind === 'pose' ? goal.aux : undefined;
  return {
    motion_plan_request: {
      start_state: {
        joint_state: {
          name: [...(spec.start?.name ?? [])],
          position: Float64Array.from(spec.start?.position ?? []),
        },
        is_diff: true,
      },
      goal_constraints: [constraints],
      ...(aux && goal.kind === 'pose'
        ? {
            path_constraints: {
              name: aux.name,
              position_constraints: [positionConstraint(goal.link, goal.frame, aux.point, POSITION_GOAL_TOLERANCE_M)],
            },
          }
        : {}),
      pipeline_id: spec.planner.pipeline_id,
      planner_id: spec.planner.planner_id,
      group_name: spec.group,
      num_planning_attempts: 1,
      allowed_planning_time: spec.allowedPlanningTimeS,
      max_velocity_scaling_factor: spec.velocityScale,
      max_acceleration_scaling_factor: spec.accelerationScale,
    },
  };
}

/** A GetMotionPlan answer: MoveIt's error code, and with SUCCESS the joint trajectory in J1..J7 order. */
export interface MotionPlanResponse {
  readonly val: number;
  readonly message: string;
  readonly trajectory: JointTrajectoryMsg | undefined;
  readonly planningTimeS: number;
}

/**
 * moveit_msgs/srv/GetMotionPlan response from rclnodejs. With SUCCESS, the RobotTrajectory's
 * joint_trajectory with exactly `jointNames` in that order (other joints dropped), its header
 * stamp cleared (a stored plan starts when it is executed); an error says what is malformed.
 */
export function motionPlanResponseFromRos(
  raw: unknown,
  jointNames: readonly string[],
): Result<MotionPlanResponse, string> {
  const response = isDict(raw) && isDict(raw.motion_plan_response) ? raw.motion_plan_response : undefined;
  if (!response) return err('response without motion_plan_response');
  const code = isDict(response.error_code) ? response.error_code : undefined;
  const val = typeof code?.val === 'number' ? code.val : undefined;
  if (val === undefined) return err('response without error_code.val');
  const message = typeof code?.message === 'string' ? code.message : '';
  const planningTimeS = typeof response.planning_time === 'number' ? response.planning_time : 0;
  if (val !== MOVEIT_SUCCESS) return ok({ val, message, trajectory: undefined, planningTimeS });
  const jt =
    isDict(response.trajectory) && isDict(response.trajectory.joint_trajectory)
      ? response.trajectory.joint_trajectory
      : undefined;
  const names: unknown = jt?.joint_names;
  if (!jt || !Array.isArray(names) || !names.every((n) => typeof n === 'string'))
    return err('trajectory without joint_names');
  const index = jointNames.map((n) => names.indexOf(n));
  const missing = jointNames.filter((_n, j) => (index[j] ?? -1) < 0);
  if (missing.length > 0) return err(`trajectory without ${missing.join(', ')}`);
  const points: JointTrajectoryMsg['points'] = [];
  for (const [i, p] of (Array.isArray(jt.points) ? jt.points : []).entries()) {
    const positions = isDict(p) ? numbersOf(p.positions) : undefined;
    if (!isDict(p) || !positions || positions.length !== names.length)
      return err(`point ${i} has no position for each of its ${names.length} joints`);
    const pick = (values: number[] | undefined) =>
      values && values.length === names.length ? index.map((k) => values[k] ?? 0) : [];
    points.push({
      positions: pick(positions),
      velocities: pick(numbersOf(p.velocities)),
      accelerations: pick(numbersOf(p.accelerations)),
      effort: [],
      time_from_start: durationFromRos(p.time_from_start),
    });
  }
  if (points.length === 0) return err('a SUCCESS without trajectory points');
  return ok({
    val,
    message,
    planningTimeS,
    trajectory: { header: { stamp: { sec: 0, nanosec: 0 }, frame_id: '' }, joint_names: [...jointNames], points },
  });
}
