import { setTimeout as sleep } from 'node:timers/promises';
import type { DefinitionSource } from '../bag/installed.ts';
import type { Durability } from '../bag/metadata.ts';
import { type BagTopic, Rosbag2Writer } from '../bag/writer.ts';
import { moveToJointsGoalToRos, moveToPoseGoalToRos } from '../ros/convert.ts';
import { ok } from '../result.ts';
import type { EndpointsFile } from '../settings/endpoints.ts';
import { isHiddenName, RclCalls, rosName } from '../ros/rcl-calls.ts';
import { RclGoals } from '../ros/rcl-goals.ts';
import type { RclEntity, RclModule, RclNamesAndTypes, RclNode, RclOptions } from '../ros/rclnodejs-api.ts';
import { settle } from '../ros/settle.ts';
import {
  type PlainTargetGuard,
  type TargetGuard,
  targetGuardOfPlain,
  targetOutsideEnvelope,
} from '../safety/targets.ts';
import { goalOf, type SequencePoint } from './config.ts';
import {
  COMPUTED_SOURCE,
  computeRobotState,
  durabilityOf,
  ROBOT_STATE_LIST,
  type RobotStateTopic,
  TRANSIENT_LOCAL_QOS,
} from './rcl-robot-state.ts';
import type { MoveAnswer, Recording, RunnerBackend } from './backend.ts';

/** What the runner needs of the endpoints file on a ROS 2 stack (written by the supervisor as JSON). */
export interface RunnerRosSettings {
  /** Action types of the joints and pose actions (the endpoints file's move_to_joints/move_to_pose types). */
  readonly joints_type: string;
  readonly pose_type: string;
  readonly timeouts: EndpointsFile['timeouts'];
  /** The safety envelope each goal's target is checked against before it is sent; absent: none configured. */
  readonly safety?: PlainTargetGuard;
  /** The joint-state topic (the endpoints file's): armgate's forward kinematics computes /tf from it when the stack has none. */
  readonly joint_states?: { readonly name: string; readonly type: string };
  /** The robot description (URDF) /tf, /tf_static and /robot_description are computed from when the stack publishes none. */
  readonly robot_description?: string;
}

/** How often the graph is polled while discovering topics to record. */
const DISCOVERY_POLL_MS = 250;
/**
 * How long a bag waits at the end of a run for the joint states stamped up to the close to arrive: the stack's /joint_states come
 * from another process than the goals' results (ros2_control's broadcaster), so when the last result arrives the
 * states up to it may still be on their way or queued (beside two busy processes: the last recorded state of a run
 * was 220 ms short of the arm's rest).
 */
const STATES_DRAIN_MS = 500;
/** Stamps further than this from this machine's clock are not compared with it (another clock, or sim time). */
const COMPARABLE_STAMP_NS = 10_000_000_000n;

/**
 * The header stamp (ns since the epoch) of a serialized message whose first field is a std_msgs/Header (CDR with
 * its 4-byte encapsulation: little-endian when the kind's low bit is set); undefined when too short.
 */
export function headerStampNs(raw: Uint8Array): bigint | undefined {
  if (raw.length < 12) return undefined;
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  const little = ((raw[1] ?? 0) & 1) === 1;
  return BigInt(view.getInt32(4, little)) * 1_000_000_000n + BigInt(view.getUint32(8, little));
}

/** Now as ns since the epoch, to the microsecond. */
function epochNs(): bigint {
  return BigInt(Math.round((performance.timeOrigin + performance.now()) * 1000)) * 1000n;
}

/**
 * The runner's backend on a ROS 2 stack: its own rclnodejs node with action clients on the
 * actions the request names (of the endpoints file's types), goals cancelled on stop and on the
 * motion timeout, and bags recorded from serialized (raw CDR) subscriptions with schemas from the
 * installed .msg definitions, topics discovered from the graph when none are named.
 */
export class RclBackend implements RunnerBackend {
  private readonly rcl: RclModule;
  private readonly node: RclNode;
  private readonly settings: RunnerRosSettings;
  private readonly calls: RclCalls;
  private readonly goals: RclGoals;
  private readonly definitions: DefinitionSource;
  private readonly warn: (line: string) => void;
  private readonly abort = new AbortController();
  private readonly guard: TargetGuard | undefined;
  /** Set once the node is destroyed (with it, every subscription). */
  private released = false;
  /** The speed override's rate for the goals sent (0 while paused: a goal waits for the resume). */
  private rate = 1;

  private constructor(
    rcl: RclModule,
    node: RclNode,
    settings: RunnerRosSettings,
    definitions: DefinitionSource,
    log: (line: string) => void,
    warn: (line: string) => void,
  ) {
    this.rcl = rcl;
    this.node = node;
    this.settings = settings;
    this.definitions = definitions;
    this.warn = warn;
    this.calls = new RclCalls(node, rcl, settings.timeouts.server_wait_s);
    this.goals = new RclGoals(this.calls, settings.timeouts, log);
    this.guard = settings.safety ? targetGuardOfPlain(settings.safety) : undefined;
  }

  /**
   * Pause (0): the goal in flight is cancelled on the stack (it brakes) and waits; a rate above 0
   * sends it again from where the arm rests and scales the speed of every goal sent from then on.
   */
  async setRate(rate: number): Promise<void> {
    if (rate <= 0) {
      await this.goals.pauseMotions();
      return;
    }
    this.rate = Math.min(1, rate);
    this.goals.resumeMotions();
  }

  /** Initializes rclnodejs and spins a node named `nodeName`. */
  static async create(
    rcl: RclModule,
    settings: RunnerRosSettings,
    options: {
      nodeName: string;
      definitions: DefinitionSource;
      log: (line: string) => void;
      warn: (line: string) => void;
    },
  ): Promise<RclBackend> {
    await rcl.init();
    const node = new rcl.Node(options.nodeName);
    node.spin();
    return new RclBackend(rcl, node, settings, options.definitions, options.log, options.warn);
  }

  /**
   * Makes the action clients of the run now, before its bag and its first goal: Cyclone DDS drops a server's answer to
   * a client the server has not discovered yet (100 ms), so a client made at its first goal could lose that goal's
   * acknowledgement on a loaded machine. A type that is not installed shows at the goal (no_server).
   */
  prepare(actions: { readonly joints: string; readonly pose: string }): void {
    this.calls.actionClient({ name: actions.joints, type: this.settings.joints_type });
    this.calls.actionClient({ name: actions.pose, type: this.settings.pose_type });
  }

  async move(action: string, point: SequencePoint): Promise<MoveAnswer> {
    const target = goalOf(point);
    const rosGoal =
      target.kind === 'joints' ? ok(moveToJointsGoalToRos(target.goal)) : moveToPoseGoalToRos(target.goal);
    if (!rosGoal.ok) return { kind: 'result', result: { success: false, message: rosGoal.error } };
    // The stack plans the path itself: the target is what can be held to the envelope here.
    const outside = this.guard
      ? targetOutsideEnvelope(
          this.guard,
          target.kind === 'joints'
            ? { kind: 'joints', qRad: target.goal.joints }
            : { kind: 'pose', positionM: [target.goal.x, target.goal.y, target.goal.z], frameId: target.goal.frame_id },
        )
      : undefined;
    if (outside)
      return {
        kind: 'result',
        result: {
          success: false,
          message: `the target is outside the safety envelope: ${outside}; nothing was sent to ${action}`,
        },
      };
    const type = target.kind === 'joints' ? this.settings.joints_type : this.settings.pose_type;
    // Built at each sending (a resumed goal is sent again): its speed scaled by the override in force then.
    const build = () => {
      if (!(this.rate > 0 && this.rate < 1)) return rosGoal.value;
      const scaled =
        target.kind === 'joints'
          ? ok(moveToJointsGoalToRos({ ...target.goal, speed: target.goal.speed * this.rate }))
          : moveToPoseGoalToRos({ ...target.goal, speed: target.goal.speed * this.rate });
      return scaled.ok ? scaled.value : rosGoal.value;
    };
    const sent = await this.goals.runAction({ name: action, type }, build, { signal: this.abort.signal });
    return sent.ok ? { kind: 'result', result: sent.value } : { kind: 'no_server', message: sent.error.message };
  }

  /** The graph's topics (hidden ones left out) by fully qualified name; an empty map when it cannot be queried. */
  private graph(): Map<string, RclNamesAndTypes> {
    let listed: readonly RclNamesAndTypes[] = [];
    try {
      listed = this.node.getTopicNamesAndTypes();
    } catch (e) {
      this.warn(`cannot list the graph's topics: ${(e as Error).message}`);
    }
    return new Map(listed.map((t) => [rosName(t.name), t]));
  }

  /**
   * The topics to record with their types. Named topics: waited for on the graph (server_wait_s),
   * hidden ones allowed. None named: every visible topic once discovery has settled (the same
   * list in two polls) or server_wait_s has passed.
   */
  private async discover(named: readonly string[]): Promise<RclNamesAndTypes[]> {
    const waitS = this.settings.timeouts.server_wait_s;
    const deadline = Date.now() + waitS * 1000;
    let previous = '';
    for (;;) {
      const graph = this.graph();
      if (named.length > 0) {
        const missing = named.filter((n) => !graph.has(rosName(n)));
        if (missing.length === 0) return named.map((n) => graph.get(rosName(n)) as RclNamesAndTypes);
        if (Date.now() >= deadline)
          throw new Error(`topic(s) ${missing.join(', ')} not on the graph within ${waitS} s`);
      } else {
        const visible = [...graph.values()].filter((t) => !isHiddenName(t.name));
        const key = visible
          .map((t) => `${t.name} ${t.types.join(',')}`)
          .sort()
          .join('\n');
        if ((visible.length > 0 && key === previous) || Date.now() >= deadline) {
          if (visible.length === 0) throw new Error(`no topic on the graph within ${waitS} s`);
          return visible;
        }
        previous = key;
      }
      await sleep(DISCOVERY_POLL_MS);
    }
  }

  /**
   * The robot-state topics a bag of every topic computes because the graph lacks them (none when topics are named,
   * or when there is no robot description to compute them from: then a warning says so).
   */
  private missingRobotState(named: readonly string[], found: readonly RclNamesAndTypes[]): RobotStateTopic[] {
    if (named.length > 0) return [];
    const onGraph = new Set(found.map((t) => rosName(t.name)));
    const missing = ROBOT_STATE_LIST.filter((t) => !onGraph.has(t.name));
    if (missing.length === 0) return [];
    const { robot_description, joint_states } = this.settings;
    if (robot_description === undefined) {
      this.warn(`not recording ${missing.map((t) => t.name).join(', ')}: not on the graph and no robot description`);
      return [];
    }
    const computable = missing.filter((t) => t.name !== '/tf' || joint_states !== undefined);
    if (computable.length > 0)
      this.warn(
        `${computable.map((t) => t.name).join(', ')}: not on the graph; computed by armgate's forward kinematics`,
      );
    return computable;
  }

  /** The complete definition of one of `types` (the first found), or the reasons none was. */
  private definitionOf(types: readonly string[]): { type: string; definition: string } | string[] {
    const reasons: string[] = [];
    for (const type of types) {
      const definition = this.definitions.definition(type);
      if (definition.ok) {
        if (definition.value.from === 'built-in')
          this.warn(`${type}: not found in the installed packages; using armgate's built-in definition`);
        return { type, definition: definition.value.text };
      }
      reasons.push(definition.error);
    }
    return reasons;
  }

  async record(folder: string, topics: readonly string[]): Promise<Recording> {
    const found = await this.discover(topics);
    const chosen: (BagTopic & { readonly definition: string; readonly durability: Durability })[] = [];
    for (const { name, types } of found) {
      const picked = this.definitionOf(types);
      if (!Array.isArray(picked)) chosen.push({ name, ...picked, durability: durabilityOf(name) });
      else if (topics.length > 0) throw new Error(`cannot record ${name}: ${picked.join('; ')}`);
      else this.warn(`not recording ${name}: ${picked.join('; ')}`);
    }
    const computed: RobotStateTopic[] = [];
    for (const topic of this.missingRobotState(topics, found)) {
      const picked = this.definitionOf([topic.type]);
      if (Array.isArray(picked)) this.warn(`not recording ${topic.name}: ${picked.join('; ')}`);
      else {
        computed.push(topic);
        chosen.push({ name: topic.name, ...picked, durability: topic.durability, source: COMPUTED_SOURCE });
      }
    }
    if (chosen.length === 0) throw new Error('none of the topics has a message definition installed');
    const bag = await Rosbag2Writer.open(folder, chosen);
    const failed = (e: unknown) => this.warn(`bag write failed: ${(e as Error).message}`);
    const subscriptions: RclEntity[] = [];
    let malformed = false;
    const statesTopic = this.settings.joint_states ? rosName(this.settings.joint_states.name) : undefined;
    const recordsStates = chosen.some((t) => t.source === undefined && rosName(t.name) === statesTopic);
    let lastStateNs: bigint | undefined;
    try {
      for (const topic of chosen) {
        if (topic.source !== undefined) continue;
        // Transient local for the latched topics: their publishers sent them once, before this subscription.
        // The profile rides beside the checked options type (see RclQos: a declaration bug of rclnodejs 2.2.0).
        const options: RclOptions =
          topic.durability === 'transient_local' ? { isRaw: true, ...{ qos: TRANSIENT_LOCAL_QOS } } : { isRaw: true };
        subscriptions.push(
          this.node.createSubscription(topic.type, topic.name, options, (raw) => {
            if (this.released) return;
            if (!(raw instanceof Uint8Array)) {
              if (!malformed)
                this.warn(`${topic.name}: a raw subscription delivered ${typeof raw}, not bytes; not recorded`);
              malformed = true;
              return;
            }
            bag.writeSerialized(topic.name, raw, epochNs()).catch(failed);
            if (recordsStates && rosName(topic.name) === statesTopic) {
              const stamp = headerStampNs(raw);
              if (stamp !== undefined && (lastStateNs === undefined || stamp > lastStateNs)) lastStateNs = stamp;
            }
          }),
        );
      }
      const { robot_description: urdf, joint_states: jointStates } = this.settings;
      if (computed.length > 0 && urdf !== undefined) {
        const tf = computeRobotState({
          node: this.node,
          topics: computed,
          urdf,
          jointStates: jointStates ?? { name: '', type: '' },
          nowNs: epochNs,
          write: (topic, msg) => {
            if (!this.released) bag.write(topic, msg, epochNs()).catch(failed);
          },
        });
        if (tf) subscriptions.push(tf);
      }
    } catch (e) {
      for (const s of subscriptions) this.node.destroySubscription(s);
      await bag.close();
      throw new Error(`cannot subscribe: ${(e as Error).message}`);
    }
    return {
      topics: chosen.map((t) => `${t.name} (${t.type}${t.source ? ', computed by armgate' : ''})`),
      catchUp: async () => {
        // The joint states stamped up to now, so that the bag ends where the arm is (bounded; only when their stamps
        // are this machine's clock).
        const until = epochNs();
        const comparable = () =>
          lastStateNs !== undefined &&
          (until > lastStateNs ? until - lastStateNs : lastStateNs - until) < COMPARABLE_STAMP_NS;
        if (this.released || !recordsStates || !comparable()) return;
        for (const end = Date.now() + STATES_DRAIN_MS; (lastStateNs ?? 0n) < until && Date.now() < end; )
          await sleep(10);
      },
      close: async () => {
        if (!this.released) for (const s of subscriptions) this.node.destroySubscription(s);
        await bag.close();
      },
    };
  }

  async close(reason: string, withinMs: number): Promise<void> {
    this.abort.abort(reason);
    const cancelled = await settle(this.goals.cancelAll(reason), withinMs);
    if (cancelled.kind === 'timeout')
      this.warn(`the action server did not confirm the cancel within ${withinMs / 1000} s`);
    this.released = true;
    try {
      this.node.destroy();
    } finally {
      this.rcl.shutdown();
    }
  }
}
