/**
 * A STAND-IN for the rclnodejs module, for tests only: it is not rclnodejs and not ROS 2. It
 * implements the small part of rclnodejs's API that lib/ros/rcl-context.ts uses (the RclModule
 * interface of lib/ros/rclnodejs-api.ts), in process, backed by the simulator (SimContext):
 *
 * - the joint-state and trajectory topics are the simulator's, delivered as rclnodejs delivers
 *   messages (plain objects, Float64Array for float64[] fields); published trajectories go to the
 *   simulated controller;
 * - /compute_fk, cobot/move_to_named, cobot/stop and the MoveToJoints/MoveToPose action servers
 *   answer from the simulator (goal handles with status, feedback, getResult, cancelGoal);
 * - /compute_ik (GetPositionIK) answers from the simulator's IK (SUCCESS with the solution, or
 *   NO_IK_SOLUTION; INVALID_LINK_NAME, INVALID_GROUP_NAME and FRAME_TRANSFORM_FAILURE for names
 *   the simulator does not know), or the answer `knobs.ikAnswer` scripts;
 * - a motion goal's request may be answered late (`knobs.goalResponseDelayMs`), a cancel request too
 *   (`knobs.cancelResponseDelayMs`); `executions` records
 *   when each motion goal's execution began;
 * - the controller's FollowJointTrajectory action server executes on the simulated controller and
 *   answers as ros2_controllers' joint trajectory controller does (unknown or duplicate joints
 *   rejected; finished SUCCEEDED; a newer goal preempts the active one, ABORTED with INVALID_GOAL and
 *   jazzy's text; a cancel request CANCELED; an empty trajectory on the topic ignored; stopped ABORTED with PATH_TOLERANCE_VIOLATED, the simulator's time limit
 *   ABORTED with GOAL_TOLERANCE_VIOLATED, a trajectory it refuses ABORTED with INVALID_GOAL), or
 *   as `knobs.trajectoryGoals` scripts;
 * - `<node>/get_parameters` answers the SRDF parameter when `knobs.srdf` is set;
 * - /apply_planning_scene (ApplyPlanningScene) answers success true, or what `knobs.sceneAnswer`
 *   says; the scenes it was sent are in `requests`;
 * - /plan_kinematic_path (GetMotionPlan) plans on the simulator without moving (joint constraints
 *   as a joint target, a position and an orientation constraint as a pose target, Pilz's and the
 *   other pipelines' planner ids as armgate's planner names, max_velocity_scaling_factor as the
 *   speed) and answers a RobotTrajectory with SUCCESS or PLANNING_FAILED, or what
 *   `knobs.planAnswer` makes of the request;
 * - a server is "available" only when it serves the name with the same type, as in ROS 2;
 * - `isRaw` subscriptions deliver each message serialized to CDR (a Buffer with the encapsulation
 *   header), with armgate's built-in definition of the type as typesupport.
 *
 * Knobs simulate what a real graph does to the context: absent or silent servers (timeouts),
 * reordered, extra or missing joints, goals that fail or are rejected, types not installed, scripted
 * IK answers and trajectory goal outcomes.
 *
 * It does NOT cover: DDS discovery and matching delays, QoS (reliability, durability, history
 * depth), real message typesupport (no generated classes: type names are only compared, fields
 * are not checked against .msg files; raw CDR comes from @foxglove/rosmsg2-serialization, not from
 * a DDS implementation), the rcl
 * executor and its threads, goal status topics and goal UUIDs, name remapping and namespaces,
 * parameters other than the one GetParameters answer, sim time, lifecycle nodes, and rclnodejs's
 * init/shutdown rules. `npm run test:ros2` (tests/ros2) covers those on a real graph, against the test
 * stack of real ROS 2 nodes (tests/ros/stack).
 * Nor the joint trajectory controller exactly: a trajectory published on its topic while a
 * FollowJointTrajectory goal executes ends that goal CANCELED here (the simulator preempts it),
 * while ros2_controllers' controller keeps the goal active against the new trajectory.
 */
import { parse } from '@foxglove/rosmsg';
import { MessageWriter } from '@foxglove/rosmsg2-serialization';
import { definitionFor } from '../../lib/bag/definitions.ts';
import type {
  RclActionClient,
  RclClient,
  RclEntity,
  RclGoalHandle,
  RclModule,
  RclNamesAndTypes,
  RclNode,
  RclOptions,
  RclPublisher,
} from '../../lib/ros/rclnodejs-api.ts';
import { abcFromQuat } from '../../lib/kinematics/rotation.ts';
import {
  FJT_GOAL_TOLERANCE_VIOLATED,
  FJT_INVALID_GOAL,
  FJT_PATH_TOLERANCE_VIOLATED,
  FJT_SUCCESSFUL,
  type JointTrajectoryMsg,
  MOVEIT_FRAME_TRANSFORM_FAILURE,
  MOVEIT_INVALID_GROUP_NAME,
  MOVEIT_INVALID_LINK_NAME,
  MOVEIT_NO_IK_SOLUTION,
  MOVEIT_PLANNING_FAILED,
  MOVEIT_SUCCESS,
  type MotionResultMsg,
} from '../../lib/ros/messages.ts';
import type { SimContext } from '../../lib/sim/context.ts';

/** A JointState as rclnodejs delivers it. */
export interface RosJointState {
  header: { stamp: { sec: number; nanosec: number }; frame_id: string };
  name: string[];
  position: Float64Array;
  velocity: Float64Array;
  effort: Float64Array;
}

/**
 * A scripted GetPositionIK answer: the error code with, for SUCCESS, the solution's joint state
 * (names and positions, in any order, extra joints allowed); or a raw response as it is.
 */
export type IkScript =
  | {
      readonly val: number;
      readonly solution?: { readonly name: readonly string[]; readonly position: readonly number[] };
    }
  | { readonly raw: unknown };

/**
 * A scripted FollowJointTrajectory server: reject the goal; accept it and end it after `afterMs`
 * with the status (SUCCEEDED, ABORTED, or CANCELED as the controller does for a preempted goal)
 * and the result's error_code and error_string; or accept it and execute until cancelled. A
 * cancel request always ends the goal CANCELED at once (the controller holds).
 */
export type TrajectoryScript =
  | { readonly kind: 'rejected' }
  | {
      readonly kind: 'succeeded' | 'aborted' | 'canceled';
      readonly afterMs: number;
      readonly error_code: number;
      readonly error_string: string;
    }
  | { readonly kind: 'executing' }
  | { readonly kind: 'raw'; readonly status: number; readonly result: unknown };

/** The IK request and trajectory goal fields the stand-in reads, as rclnodejs hands them over. */
interface RosIkRequest {
  ik_request: {
    group_name: string;
    robot_state: { joint_state: { name: string[]; position: unknown } };
    avoid_collisions: boolean;
    ik_link_name: string;
    pose_stamped: {
      header: { frame_id: string };
      pose: {
        position: { x: number; y: number; z: number };
        orientation: { x: number; y: number; z: number; w: number };
      };
    };
  };
}

export interface StandinKnobs {
  /** ROS names whose server is absent: waitForService/waitForServer resolve false after their timeout. */
  readonly absent: Set<string>;
  /** ROS names whose server is there but never answers a request or a goal. */
  readonly silent: Set<string>;
  /** Types that are "not installed": creating an entity of that type throws, as rclnodejs does. */
  readonly missingTypes: Set<string>;
  /** Rewrites each joint-state message before delivery (reorder, add or drop joints); undefined: not delivered. */
  jointStates: ((msg: RosJointState) => RosJointState | undefined) | undefined;
  /** Every motion goal (MoveToJoints, MoveToPose) ends ABORTED with success false and this message, without moving. */
  failGoals: string | undefined;
  /** Every action goal is rejected. */
  rejectGoals: boolean;
  /** How long a motion goal's server takes to answer the goal request (a late goal response), in ms. */
  goalResponseDelayMs: number;
  /** How long an action server takes to take and answer a cancel request (a late cancel response), in ms. */
  cancelResponseDelayMs: number;
  /** The SRDF served as a string parameter of a node through `<node>/get_parameters`. */
  srdf:
    | {
        readonly node: string;
        readonly parameter: string;
        readonly xml: string;
        /** Further string parameters of the same node (robot_description). */
        readonly more?: Readonly<Record<string, string>>;
      }
    | undefined;
  /** Topics the graph shows besides the simulator's. */
  readonly extraTopics: RclNamesAndTypes[];
  /** The simulator's topics the graph does not show (full names: a stack without robot_state_publisher has no /tf). */
  readonly hiddenTopics: Set<string>;
  /** /compute_ik answers this instead of solving on the simulator. */
  ikAnswer: IkScript | undefined;
  /** The FollowJointTrajectory server follows this script instead of the simulated controller. */
  trajectoryGoals: TrajectoryScript | undefined;
  /** /apply_planning_scene answers this (a raw response) instead of success true. */
  sceneAnswer: unknown;
  /** /plan_kinematic_path answers what this makes of the request (a raw GetMotionPlan response) instead of planning on the simulator. */
  planAnswer: ((request: RosMotionPlanRequest) => unknown) | undefined;
}

/** The GetMotionPlan request fields the stand-in reads, as rclnodejs hands them over. */
export interface RosMotionPlanRequest {
  motion_plan_request: {
    start_state: { joint_state: { name: string[]; position: unknown }; is_diff: boolean };
    goal_constraints: {
      name: string;
      joint_constraints?: { joint_name: string; position: number; tolerance_above: number; tolerance_below: number }[];
      position_constraints?: {
        header: { frame_id: string };
        link_name: string;
        constraint_region: {
          primitives: { type: number; dimensions: unknown }[];
          primitive_poses: { position: { x: number; y: number; z: number } }[];
        };
      }[];
      orientation_constraints?: {
        header: { frame_id: string };
        link_name: string;
        orientation: { x: number; y: number; z: number; w: number };
      }[];
    }[];
    path_constraints?: {
      name: string;
      position_constraints: {
        constraint_region: { primitive_poses: { position: { x: number; y: number; z: number } }[] };
      }[];
    };
    pipeline_id: string;
    planner_id: string;
    group_name: string;
    num_planning_attempts: number;
    allowed_planning_time: number;
    max_velocity_scaling_factor: number;
    max_acceleration_scaling_factor: number;
  };
}

/** A GetMotionPlan response as move_group answers it, from a plain joint trajectory (or the error code alone). */
export function motionPlanResponse(
  val: number,
  trajectory?: JointTrajectoryMsg,
  message = '',
): Record<string, unknown> {
  return {
    motion_plan_response: {
      trajectory_start: { joint_state: { name: [], position: new Float64Array(0) } },
      group_name: 'iiwa_arm',
      trajectory: {
        joint_trajectory: trajectory
          ? {
              header: { stamp: { sec: 1700000000, nanosec: 0 }, frame_id: 'base_link' },
              joint_names: [...trajectory.joint_names],
              points: trajectory.points.map((p) => ({
                positions: Float64Array.from(p.positions),
                velocities: Float64Array.from(p.velocities),
                accelerations: Float64Array.from(p.accelerations),
                effort: new Float64Array(0),
                time_from_start: { ...p.time_from_start },
              })),
            }
          : { header: { stamp: { sec: 0, nanosec: 0 }, frame_id: '' }, joint_names: [], points: [] },
      },
      planning_time: 0.012,
      error_code: { val, message, source: 'standin' },
    },
  };
}

export interface Standin {
  readonly module: RclModule;
  readonly knobs: StandinKnobs;
  /** Trajectory messages published through the stand-in, as the context handed them over. */
  readonly published: unknown[];
  /** Service requests and action goals, in order. */
  readonly requests: { readonly name: string; readonly request: unknown }[];
  /** Names of actions whose goals were cancelled. */
  readonly cancels: string[];
  /** Publications and cancel requests in the order they were made: `publish <topic>`, `cancel <action>`. */
  readonly timeline: string[];
  /** Motion goals whose execution began (the server accepted them and started): action name, Date.now(). */
  readonly executions: { readonly name: string; readonly atMs: number }[];
  /** How often init() and shutdown() were called. */
  readonly lifecycle: { init: number; shutdown: number };
  /** Action clients as they were created: the node's name, the action, and how many requests had been made then. */
  readonly actionClients: { readonly node: string; readonly name: string; readonly atRequest: number }[];
}

const GOAL = { accepted: 1, executing: 2, canceling: 3, succeeded: 4, canceled: 5, aborted: 6 };
/** The joint trajectory controller's error_string for a goal a newer goal replaced. */
/** What jazzy's joint trajectory controller says when a newer goal preempts the active one (ABORTED, INVALID_GOAL). */
export const PREEMPTED_BY_NEW_GOAL = 'Current goal preempted by new incoming action.';
/** What humble's controller said for the same (CANCELED, SUCCESSFUL). */
export const PREEMPTED_BY_NEW_GOAL_HUMBLE = 'Current goal cancelled due to new incoming action.';
const full = (name: string) => (name.startsWith('/') ? name : `/${name}`);
const nums = (v: unknown): number[] => Array.from((v ?? []) as ArrayLike<number>);
const later = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Numeric arrays as Float64Array, recursively: how rclnodejs delivers float64[] fields. */
function rclShaped(value: unknown): unknown {
  if (Array.isArray(value))
    return value.length > 0 && value.every((x) => typeof x === 'number')
      ? Float64Array.from(value)
      : value.map(rclShaped);
  if (typeof value === 'object' && value !== null && !ArrayBuffer.isView(value)) {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [
        k,
        k === 'position' || k === 'velocity' || k === 'effort' ? Float64Array.from(nums(v)) : rclShaped(v),
      ]),
    );
  }
  return value;
}

function trajectoryFromRcl(raw: unknown): JointTrajectoryMsg {
  const msg = raw as { header: JointTrajectoryMsg['header']; joint_names: string[]; points: Record<string, unknown>[] };
  return {
    header: msg.header,
    joint_names: [...msg.joint_names],
    points: msg.points.map((p) => ({
      positions: nums(p.positions),
      velocities: nums(p.velocities),
      accelerations: nums(p.accelerations),
      effort: nums(p.effort),
      time_from_start: p.time_from_start as { sec: number; nanosec: number },
    })),
  };
}

/** A stand-in rclnodejs module over `sim`. */
export function createStandin(sim: SimContext): Standin {
  const knobs: StandinKnobs = {
    absent: new Set(),
    silent: new Set(),
    missingTypes: new Set(),
    jointStates: undefined,
    failGoals: undefined,
    rejectGoals: false,
    goalResponseDelayMs: 0,
    cancelResponseDelayMs: 0,
    srdf: undefined,
    extraTopics: [],
    hiddenTopics: new Set(),
    ikAnswer: undefined,
    trajectoryGoals: undefined,
    sceneAnswer: undefined,
    planAnswer: undefined,
  };
  const published: unknown[] = [];
  const requests: { name: string; request: unknown }[] = [];
  const cancels: string[] = [];
  const timeline: string[] = [];
  const executions: { name: string; atMs: number }[] = [];
  const lifecycle = { init: 0, shutdown: 0 };
  const actionClients: { node: string; name: string; atRequest: number }[] = [];
  const ifaces = sim.endpoints.interfaces;

  const servedServices = (): Map<string, string> => {
    const m = new Map(
      [
        ifaces.compute_fk,
        ifaces.compute_ik,
        ifaces.move_to_named,
        ifaces.stop,
        ifaces.apply_planning_scene,
        ifaces.plan_kinematic_path,
      ].map((i) => [full(i.name), i.type]),
    );
    if (knobs.srdf) m.set(`${full(knobs.srdf.node)}/get_parameters`, 'rcl_interfaces/srv/GetParameters');
    return m;
  };
  const servedActions = () =>
    new Map(
      [ifaces.move_to_joints, ifaces.move_to_pose, ifaces.follow_joint_trajectory].map((i) => [full(i.name), i.type]),
    );
  const available = (served: Map<string, string>, name: string, type: string) =>
    served.get(full(name)) === type && !knobs.absent.has(name) && !knobs.absent.has(full(name));
  const silent = (name: string) => knobs.silent.has(name) || knobs.silent.has(full(name));
  const checkType = (type: string) => {
    if (knobs.missingTypes.has(type)) throw new Error(`The message required does not exist: ${type}`);
  };
  const waitUntil = async (isUp: () => boolean, timeoutMs = -1): Promise<boolean> => {
    const deadline = timeoutMs < 0 ? Number.POSITIVE_INFINITY : Date.now() + timeoutMs;
    while (!isUp()) {
      if (Date.now() >= deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, Math.min(50, Math.max(1, deadline - Date.now()))));
    }
    return true;
  };

  /** GetPositionIK as move_group answers it, from the simulator's IK (or the scripted answer). */
  async function solveIk(request: RosIkRequest): Promise<unknown> {
    const script = knobs.ikAnswer;
    if (script) {
      if ('raw' in script) return script.raw;
      const { name, position } = script.solution ?? { name: [], position: [] };
      return {
        solution: { joint_state: { name: [...name], position: Float64Array.from(position) } },
        error_code: { val: script.val },
      };
    }
    const ik = request.ik_request;
    const failed = (val: number) => ({
      solution: { joint_state: { name: [], position: new Float64Array(0) } },
      error_code: { val },
    });
    const { planning_group, planning_frame, tcp_link, joint_names } = sim.endpoints;
    if (ik.group_name !== planning_group) return failed(MOVEIT_INVALID_GROUP_NAME);
    if (ik.ik_link_name !== '' && ik.ik_link_name !== tcp_link) return failed(MOVEIT_INVALID_LINK_NAME);
    const frame = ik.pose_stamped.header.frame_id;
    if (frame !== '' && frame !== planning_frame) return failed(MOVEIT_FRAME_TRANSFORM_FAILURE);
    const names = ik.robot_state.joint_state.name;
    const positions = nums(ik.robot_state.joint_state.position);
    const seed = names.length > 0 ? joint_names.map((j) => positions[names.indexOf(j)] ?? 0) : undefined;
    const { position: p, orientation } = ik.pose_stamped.pose;
    const solved = await sim.solveIk({
      x: p.x,
      y: p.y,
      z: p.z,
      ...abcFromQuat(orientation),
      collision_check: ik.avoid_collisions,
      ...(seed ? { seed } : {}),
    });
    if (!solved.ok || !solved.value.success || !solved.value.joints) return failed(MOVEIT_NO_IK_SOLUTION);
    return {
      solution: { joint_state: { name: [...joint_names], position: Float64Array.from(solved.value.joints) } },
      error_code: { val: MOVEIT_SUCCESS },
    };
  }

  /** GetMotionPlan as move_group answers it: planned on the simulator from its current state, without moving. */
  async function planPath(request: RosMotionPlanRequest): Promise<unknown> {
    if (knobs.planAnswer) return knobs.planAnswer(request);
    const r = request.motion_plan_request;
    const goal = r.goal_constraints[0];
    const speed = r.max_velocity_scaling_factor;
    const joints = goal?.joint_constraints ?? [];
    const position = goal?.position_constraints?.[0]?.constraint_region.primitive_poses[0]?.position;
    const orientation = goal?.orientation_constraints?.[0]?.orientation;
    const planner =
      r.pipeline_id === 'pilz_industrial_motion_planner' ? r.planner_id.toLowerCase() : r.pipeline_id.toLowerCase();
    const planned =
      joints.length > 0
        ? await sim.planMotion({
            kind: 'joints',
            goal: {
              joints: sim.endpoints.joint_names.map((j) => joints.find((c) => c.joint_name === j)?.position ?? 0),
              speed,
            },
          })
        : position && orientation
          ? await sim.planMotion({
              kind: 'pose',
              goal: { ...position, ...abcFromQuat(orientation), speed, planner, frame_id: '' },
            })
          : undefined;
    if (!planned) return motionPlanResponse(MOVEIT_PLANNING_FAILED, undefined, 'no goal constraints');
    if (!planned.ok || !planned.value.success)
      return motionPlanResponse(
        MOVEIT_PLANNING_FAILED,
        undefined,
        planned.ok ? planned.value.message : planned.error.message,
      );
    return motionPlanResponse(MOVEIT_SUCCESS, planned.value.trajectory);
  }

  async function answer(name: string, request: unknown): Promise<unknown> {
    const n = full(name);
    const req = request as Record<string, unknown>;
    if (n === full(ifaces.apply_planning_scene.name)) return knobs.sceneAnswer ?? { success: true };
    if (n === full(ifaces.plan_kinematic_path.name)) return planPath(req as unknown as RosMotionPlanRequest);
    if (n === full(ifaces.compute_fk.name)) {
      const r = req as {
        header: { stamp: { sec: number; nanosec: number }; frame_id: string };
        fk_link_names: string[];
        robot_state: { joint_state: { name: string[]; position: unknown } };
      };
      const fk = await sim.computeFk({
        header: r.header,
        fk_link_names: r.fk_link_names,
        robot_state: {
          joint_state: { name: r.robot_state.joint_state.name, position: nums(r.robot_state.joint_state.position) },
        },
      });
      if (!fk.ok) throw new Error(fk.error.message);
      return { ...fk.value, error_code: { val: fk.value.error_code.val, message: '', source: '' } };
    }
    if (n === full(ifaces.compute_ik.name)) return solveIk(req as unknown as RosIkRequest);
    if (n === full(ifaces.move_to_named.name)) {
      const result = await sim.moveToNamed(req as { name: string; speed: number; accel_scale: number });
      return result.ok ? result.value : { success: false, message: result.error.message };
    }
    if (n === full(ifaces.stop.name)) {
      const result = await sim.callStop();
      return result.ok ? result.value : { success: false, message: result.error.message };
    }
    const srdf = knobs.srdf;
    if (srdf && n === `${full(srdf.node)}/get_parameters`) {
      const names = (req.names ?? []) as string[];
      return {
        values: names.map((p) =>
          p === srdf.parameter
            ? { type: 4, string_value: srdf.xml }
            : srdf.more?.[p] !== undefined
              ? { type: 4, string_value: srdf.more[p] }
              : { type: 0, string_value: '' },
        ),
      };
    }
    throw new Error(`no server for ${name}`);
  }

  class StandinClient implements RclClient {
    readonly type: string;
    readonly name: string;
    constructor(type: string, name: string) {
      this.type = type;
      this.name = name;
    }
    sendRequest(request: object, callback: (response: unknown) => void): void {
      requests.push({ name: this.name, request });
      if (!this.isServiceServerAvailable() || silent(this.name)) return;
      answer(this.name, request).then(callback, () => undefined);
    }
    isServiceServerAvailable(): boolean {
      return available(servedServices(), this.name, this.type);
    }
    waitForService(timeoutMs?: number): Promise<boolean> {
      return waitUntil(() => this.isServiceServerAvailable(), timeoutMs);
    }
  }

  /** How a goal's execution ended: its final status and the action's Result message. */
  interface GoalEnd {
    readonly status: number;
    readonly result: unknown;
  }

  class StandinGoalHandle implements RclGoalHandle {
    status = GOAL.accepted;
    private readonly abort = new AbortController();
    private readonly result: Promise<unknown>;
    private readonly action: string;
    private readonly accepted: boolean;
    constructor(action: string, accepted: boolean, run: (signal: AbortSignal) => Promise<GoalEnd>) {
      this.action = action;
      this.accepted = accepted;
      // The server executes after it has answered the goal request, as an action server does;
      // the final status is set before the result arrives, as rclnodejs's result response does.
      this.result = accepted
        ? later()
            .then(() => run(this.abort.signal))
            .then((end) => {
              this.status = end.status;
              return end.result;
            })
        : Promise.resolve({});
    }
    isAccepted(): boolean {
      return this.accepted;
    }
    getResult(): Promise<unknown> {
      return this.result;
    }
    /** The server ends the goal on its own (a newer goal replaced it): its run sees `reason`. */
    preempt(reason: string): void {
      this.abort.abort(reason);
    }
    async cancelGoal(): Promise<unknown> {
      cancels.push(this.action);
      timeline.push(`cancel ${this.action}`);
      await later();
      if (knobs.cancelResponseDelayMs > 0)
        await new Promise<void>((resolve) => setTimeout(resolve, knobs.cancelResponseDelayMs));
      if (this.status >= GOAL.succeeded) return { return_code: 3, goals_canceling: [] };
      this.status = GOAL.canceling;
      this.abort.abort('cancelled');
      return { return_code: 0, goals_canceling: [{ goal_id: { uuid: new Uint8Array(16) } }] };
    }
  }

  /** A motion goal (MoveToJoints, MoveToPose) on the simulator, or failed as knobs.failGoals says. */
  function runMotion(
    name: string,
    g: Record<string, unknown>,
    onFeedback: (state: 'planning' | 'executing') => void,
  ): (signal: AbortSignal) => Promise<GoalEnd> {
    return async (signal) => {
      executions.push({ name, atMs: Date.now() });
      let r: MotionResultMsg;
      if (knobs.failGoals !== undefined) r = { success: false, message: knobs.failGoals };
      else {
        const options = { signal, onFeedback };
        const result =
          full(name) === full(ifaces.move_to_joints.name)
            ? await sim.moveToJoints({ joints: nums(g.joints), speed: g.speed as number }, options)
            : await sim.moveToPose(
                {
                  ...(g as {
                    x: number;
                    y: number;
                    z: number;
                    a: number;
                    b: number;
                    c: number;
                    speed: number;
                    planner: string;
                    frame_id: string;
                  }),
                },
                options,
              );
        r = result.ok ? result.value : { success: false, message: result.error.message };
      }
      const status = signal.aborted
        ? GOAL.canceled
        : r.success || knobs.failGoals === undefined
          ? GOAL.succeeded
          : GOAL.aborted;
      return { status, result: r };
    };
  }

  /** The trajectory goal the scripted controller executes (a newer one preempts it). */
  let activeScripted: StandinGoalHandle | undefined;

  /** Why the joint trajectory controller rejects a goal (its validate_trajectory_msg), if it does. */
  function trajectoryRejection(msg: JointTrajectoryMsg): string | undefined {
    const known = new Set(sim.endpoints.joint_names);
    if (msg.points.length === 0) return 'empty trajectory';
    if (new Set(msg.joint_names).size !== msg.joint_names.length) return 'duplicate joints';
    if (msg.joint_names.some((j) => !known.has(j))) return 'unknown joints';
    if (msg.joint_names.length !== known.size) return 'not every joint of the controller';
    return undefined;
  }

  /** A goal preempted by a newer one, as jazzy's controller ends it (ABORTED, INVALID_GOAL, its text). */
  const preemptedEnd: GoalEnd = {
    status: GOAL.aborted,
    result: { error_code: FJT_INVALID_GOAL, error_string: PREEMPTED_BY_NEW_GOAL },
  };

  /** The result a cancelled (CANCELED, SUCCESSFUL, no text) or preempted trajectory goal ends with. */
  const cancelledEnd = (signal: AbortSignal): GoalEnd =>
    signal.reason === 'preempted'
      ? preemptedEnd
      : { status: GOAL.canceled, result: { error_code: FJT_SUCCESSFUL, error_string: '' } };

  /** A FollowJointTrajectory goal as the scripted controller runs it. */
  function runScriptedTrajectory(script: Exclude<TrajectoryScript, { kind: 'rejected' }>) {
    return async (signal: AbortSignal): Promise<GoalEnd> => {
      if (script.kind === 'raw') return { status: script.status, result: script.result };
      const afterMs = script.kind === 'executing' ? Number.POSITIVE_INFINITY : script.afterMs;
      await new Promise<void>((resolve) => {
        const timer = Number.isFinite(afterMs) ? setTimeout(resolve, afterMs) : undefined;
        signal.addEventListener(
          'abort',
          () => {
            clearTimeout(timer);
            resolve();
          },
          { once: true },
        );
      });
      if (signal.aborted || script.kind === 'executing') return cancelledEnd(signal);
      const status = { succeeded: GOAL.succeeded, aborted: GOAL.aborted, canceled: GOAL.canceled }[script.kind];
      return { status, result: { error_code: script.error_code, error_string: script.error_string } };
    };
  }

  /** A FollowJointTrajectory goal on the simulated controller: its outcome as status and error_code. */
  function runSimTrajectory(msg: JointTrajectoryMsg) {
    return async (signal: AbortSignal): Promise<GoalEnd> => {
      const executed = await sim.executeTrajectory(msg, { signal });
      const o = executed.ok ? executed.value : { outcome: 'refused' as const, message: executed.error.message };
      if (signal.aborted) return cancelledEnd(signal);
      switch (o.outcome) {
        case 'finished':
          return { status: GOAL.succeeded, result: { error_code: FJT_SUCCESSFUL, error_string: '' } };
        case 'preempted':
          return preemptedEnd;
        case 'stopped':
          return { status: GOAL.aborted, result: { error_code: FJT_PATH_TOLERANCE_VIOLATED, error_string: o.message } };
        case 'timeout':
          return { status: GOAL.aborted, result: { error_code: FJT_GOAL_TOLERANCE_VIOLATED, error_string: o.message } };
        default:
          return { status: GOAL.aborted, result: { error_code: FJT_INVALID_GOAL, error_string: o.message } };
      }
    };
  }

  class StandinActionClient implements RclActionClient {
    readonly type: string;
    readonly name: string;
    constructor(node: RclNode, type: string, name: string) {
      checkType(type);
      this.type = type;
      this.name = name;
      actionClients.push({ node: (node as StandinNode).nodeName, name, atRequest: requests.length });
    }
    async sendGoal(goal: object, feedbackCallback?: (feedback: unknown) => void): Promise<RclGoalHandle> {
      requests.push({ name: this.name, request: goal });
      if (silent(this.name)) return new Promise<RclGoalHandle>(() => undefined);
      await later();
      const g = goal as Record<string, unknown>;
      if (full(this.name) === full(ifaces.follow_joint_trajectory.name)) return this.trajectoryGoal(g);
      if (knobs.goalResponseDelayMs > 0)
        await new Promise<void>((resolve) => setTimeout(resolve, knobs.goalResponseDelayMs));
      const onFeedback = (state: 'planning' | 'executing') => {
        handle.status = GOAL.executing;
        feedbackCallback?.({ state });
      };
      const handle = new StandinGoalHandle(this.name, !knobs.rejectGoals, runMotion(this.name, g, onFeedback));
      return handle;
    }
    private trajectoryGoal(g: Record<string, unknown>): RclGoalHandle {
      const msg = trajectoryFromRcl(g.trajectory);
      const script = knobs.trajectoryGoals;
      if (script?.kind === 'rejected' || knobs.rejectGoals || trajectoryRejection(msg) !== undefined)
        return new StandinGoalHandle(this.name, false, async () => ({ status: GOAL.aborted, result: {} }));
      // A newer goal preempts the active one, as the controller's goal_accepted_callback does.
      activeScripted?.preempt('preempted');
      activeScripted = undefined;
      if (!script) return new StandinGoalHandle(this.name, true, runSimTrajectory(msg));
      const handle = new StandinGoalHandle(this.name, true, runScriptedTrajectory(script));
      activeScripted = handle;
      return handle;
    }
    isActionServerAvailable(): boolean {
      return available(servedActions(), this.name, this.type);
    }
    waitForServer(timeoutMs?: number): Promise<boolean> {
      return waitUntil(() => this.isActionServerAvailable(), timeoutMs);
    }
    destroy(): void {}
  }

  class StandinNode implements RclNode {
    private readonly unsubscribes = new Map<RclEntity, () => void>();
    private destroyed = false;
    spinning = false;
    readonly nodeName: string;
    constructor(nodeName: string) {
      this.nodeName = nodeName;
    }
    createPublisher(type: string, topic: string): RclPublisher {
      checkType(type);
      return {
        publish: (message: object) => {
          published.push(message);
          timeline.push(`publish ${full(topic)}`);
          // The controller ignores an empty trajectory ("Empty trajectory received"): the arm goes on.
          const trajectory = full(topic) === full(ifaces.trajectory.name) ? trajectoryFromRcl(message) : undefined;
          if (trajectory && trajectory.points.length > 0) void sim.publishTrajectory(trajectory);
        },
      };
    }
    createSubscription(
      type: string,
      topic: string,
      options: RclOptions,
      callback: (message: unknown) => void,
    ): RclEntity {
      checkType(type);
      const entity = {};
      let cdr: MessageWriter | undefined;
      if (options.isRaw) {
        const definition = definitionFor(type);
        if (definition === undefined) throw new Error(`stand-in: no typesupport for raw ${type}`);
        cdr = new MessageWriter(parse(definition, { ros2: true }));
      }
      const isJointStates = full(topic) === full(ifaces.joint_states.name);
      const stop = sim.subscribe(topic, (msg) => {
        if (this.destroyed || !this.spinning) return;
        let delivered = rclShaped(msg);
        if (isJointStates && knobs.jointStates) delivered = knobs.jointStates(delivered as RosJointState);
        if (delivered === undefined) return;
        callback(cdr ? Buffer.from(cdr.writeMessage(delivered)) : delivered);
      });
      this.unsubscribes.set(entity, stop);
      return entity;
    }
    createClient(type: string, serviceName: string): RclClient {
      checkType(type);
      return new StandinClient(type, serviceName);
    }
    destroyPublisher(): void {}
    destroySubscription(subscription: RclEntity): void {
      this.unsubscribes.get(subscription)?.();
      this.unsubscribes.delete(subscription);
    }
    destroyClient(): void {}
    getTopicNamesAndTypes(): readonly RclNamesAndTypes[] {
      return [
        ...sim
          .topics()
          .filter((t) => !knobs.hiddenTopics.has(full(t.name)))
          .map((t) => ({ name: full(t.name), types: [t.type] })),
        { name: '/rosout', types: ['rcl_interfaces/msg/Log'] },
        ...knobs.extraTopics,
      ];
    }
    countSubscribers(topic: string): number {
      return full(topic) === full(ifaces.trajectory.name) ? 1 : 0;
    }
    spin(): void {
      this.spinning = true;
    }
    destroy(): void {
      this.destroyed = true;
      for (const stop of this.unsubscribes.values()) stop();
      this.unsubscribes.clear();
    }
  }

  const module: RclModule = {
    init: async () => {
      lifecycle.init++;
    },
    shutdown: () => {
      lifecycle.shutdown++;
    },
    Node: StandinNode,
    ActionClient: StandinActionClient,
  };
  return { module, knobs, published, requests, cancels, timeline, executions, lifecycle, actionClients };
}
