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
 * - `<node>/get_parameters` answers the SRDF parameter when `knobs.srdf` is set;
 * - a server is "available" only when it serves the name with the same type, as in ROS 2;
 * - `isRaw` subscriptions deliver each message serialized to CDR (a Buffer with the encapsulation
 *   header), with armgate's built-in definition of the type as typesupport.
 *
 * Knobs simulate what a real graph does to the context: absent or silent servers (timeouts),
 * reordered, extra or missing joints, goals that fail or are rejected, types not installed.
 *
 * It does NOT cover: DDS discovery and matching delays, QoS (reliability, durability, history
 * depth), real message typesupport (no generated classes: type names are only compared, fields
 * are not checked against .msg files; raw CDR comes from @foxglove/rosmsg2-serialization, not from
 * a DDS implementation), the rcl
 * executor and its threads, goal status topics and goal UUIDs, name remapping and namespaces,
 * parameters other than the one GetParameters answer, sim time, lifecycle nodes, and rclnodejs's
 * init/shutdown rules. The live suite (tests/ros/live.test.ts) covers those on a real graph.
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
import type { JointTrajectoryMsg, MotionResultMsg } from '../../lib/ros/messages.ts';
import type { SimContext } from '../../lib/sim/context.ts';

/** A JointState as rclnodejs delivers it. */
export interface RosJointState {
  header: { stamp: { sec: number; nanosec: number }; frame_id: string };
  name: string[];
  position: Float64Array;
  velocity: Float64Array;
  effort: Float64Array;
}

export interface StandinKnobs {
  /** ROS names whose server is absent: waitForService/waitForServer resolve false after their timeout. */
  readonly absent: Set<string>;
  /** ROS names whose server is there but never answers a request or a goal. */
  readonly silent: Set<string>;
  /** Types that are "not installed": creating an entity of that type throws, as rclnodejs does. */
  readonly missingTypes: Set<string>;
  /** Rewrites each joint-state message before delivery (reorder, add or drop joints). */
  jointStates: ((msg: RosJointState) => RosJointState) | undefined;
  /** Every action goal ends ABORTED with success false and this message, without moving. */
  failGoals: string | undefined;
  /** Every action goal is rejected. */
  rejectGoals: boolean;
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
  /** How often init() and shutdown() were called. */
  readonly lifecycle: { init: number; shutdown: number };
}

const GOAL = { accepted: 1, executing: 2, canceling: 3, succeeded: 4, canceled: 5, aborted: 6 };
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
    srdf: undefined,
    extraTopics: [],
  };
  const published: unknown[] = [];
  const requests: { name: string; request: unknown }[] = [];
  const cancels: string[] = [];
  const lifecycle = { init: 0, shutdown: 0 };
  const ifaces = sim.endpoints.interfaces;

  const servedServices = (): Map<string, string> => {
    const m = new Map([ifaces.compute_fk, ifaces.move_to_named, ifaces.stop].map((i) => [full(i.name), i.type]));
    if (knobs.srdf) m.set(`${full(knobs.srdf.node)}/get_parameters`, 'rcl_interfaces/srv/GetParameters');
    return m;
  };
  const servedActions = () => new Map([ifaces.move_to_joints, ifaces.move_to_pose].map((i) => [full(i.name), i.type]));
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

  async function answer(name: string, request: unknown): Promise<unknown> {
    const n = full(name);
    const req = request as Record<string, unknown>;
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

  class StandinGoalHandle implements RclGoalHandle {
    status = GOAL.accepted;
    private readonly abort = new AbortController();
    private readonly result: Promise<MotionResultMsg>;
    private readonly action: string;
    private readonly accepted: boolean;
    constructor(action: string, accepted: boolean, run: (signal: AbortSignal) => Promise<MotionResultMsg>) {
      this.action = action;
      this.accepted = accepted;
      // The server executes after it has answered the goal request, as an action server does.
      this.result = accepted
        ? later()
            .then(() => run(this.abort.signal))
            .then((r) => this.finish(r))
        : Promise.resolve({ success: false, message: 'rejected' });
    }
    private finish(r: MotionResultMsg): MotionResultMsg {
      if (this.abort.signal.aborted) this.status = GOAL.canceled;
      else this.status = r.success || knobs.failGoals === undefined ? GOAL.succeeded : GOAL.aborted;
      return r;
    }
    isAccepted(): boolean {
      return this.accepted;
    }
    getResult(): Promise<unknown> {
      return this.result;
    }
    async cancelGoal(): Promise<unknown> {
      cancels.push(this.action);
      await later();
      if (this.status >= GOAL.succeeded) return { return_code: 3, goals_canceling: [] };
      this.status = GOAL.canceling;
      this.abort.abort('cancelled');
      return { return_code: 0, goals_canceling: [{ goal_id: { uuid: new Uint8Array(16) } }] };
    }
  }

  class StandinActionClient implements RclActionClient {
    readonly type: string;
    readonly name: string;
    constructor(_node: RclNode, type: string, name: string) {
      checkType(type);
      this.type = type;
      this.name = name;
    }
    async sendGoal(goal: object, feedbackCallback?: (feedback: unknown) => void): Promise<RclGoalHandle> {
      requests.push({ name: this.name, request: goal });
      if (silent(this.name)) return new Promise<RclGoalHandle>(() => undefined);
      await later();
      const g = goal as Record<string, unknown>;
      const onFeedback = (state: 'planning' | 'executing') => {
        handle.status = GOAL.executing;
        feedbackCallback?.({ state });
      };
      const handle = new StandinGoalHandle(this.name, !knobs.rejectGoals, async (signal) => {
        if (knobs.failGoals !== undefined) return { success: false, message: knobs.failGoals };
        const options = { signal, onFeedback };
        const result =
          full(this.name) === full(ifaces.move_to_joints.name)
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
        return result.ok ? result.value : { success: false, message: result.error.message };
      });
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
          if (full(topic) === full(ifaces.trajectory.name)) void sim.publishTrajectory(trajectoryFromRcl(message));
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
        ...sim.topics().map((t) => ({ name: full(t.name), types: [t.type] })),
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
  return { module, knobs, published, requests, cancels, lifecycle };
}
