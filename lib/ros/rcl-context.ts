import { DefinitionSource } from '../bag/installed.ts';
import { holdPoint, holdRestS } from '../motion/hold.ts';
import type { JogEndReason } from '../motion/jog.ts';
import type { JointLimits } from '../robot/limits.ts';
import type { GroupState } from '../robot/srdf.ts';
import { err, ok, type Result } from '../result.ts';
import type { Config } from '../settings/load.ts';
import { type SafetyState, safetyStateFor } from '../safety/store.ts';
import { createTargetGuard, type SafetyTarget, type TargetGuard, targetOutsideEnvelope } from '../safety/targets.ts';
import type {
  ArmActivity,
  ExecutionRateAnswer,
  ExecutionRateOptions,
  PublishOptions,
  GoalOptions,
  IkOptions,
  InterfaceUnavailable,
  JogEvent,
  JogRequest,
  JogStatus,
  MotionPlanAnswer,
  MotionPlanRequest,
  ReceivedJointState,
  RobotContext,
  StopCallOptions,
  TopicInfo,
  TrajectoryWaitOptions,
} from './context.ts';
import {
  followJointTrajectoryGoalToRos,
  followJointTrajectoryResultFromRos,
  jointStateByName,
  jointStateFromRos,
  jointTrajectoryToRos,
  moveToJointsGoalToRos,
  moveToNamedToRos,
  moveToPoseGoalToRos,
  triggerResponseFromRos,
} from './convert.ts';
import { trajectoryGoalOutcome } from './answers.ts';
import type { EndpointsFile } from './endpoints.ts';
import {
  durationFromS,
  FJT_SUCCESSFUL,
  type GetPositionFkRequest,
  type GetPositionFkResponse,
  type IkAnswer,
  type IkRequest,
  type JointStateMsg,
  type JointTrajectoryMsg,
  type JointTrajectoryPointMsg,
  type MotionResultMsg,
  type MoveToJointsGoal,
  type MoveToNamedRequest,
  type MoveToPoseGoal,
  secondsOf,
  type TrajectoryOutcome,
  type TriggerResponse,
} from './messages.ts';
import { JointStateCache } from './joint-state-cache.ts';
import { systemClock } from '../sim/clock.ts';
import { RclDescription } from './rcl-description.ts';
import { RclGoals, type TrajectoryGoalEnd } from './rcl-goals.ts';
import { RclJog } from './rcl-jog.ts';
import { servoFor } from './rcl-servo.ts';
import { computeFkOverRos, solveIkOverRos } from './rcl-kinematics.ts';
import { RclTopics } from './rcl-topics.ts';
import { RetimedPath } from './retimed-path.ts';
import { reasonOf } from './settle.ts';
import { REST_SPAN_RAD, RestWatch, restsAt } from './at-rest.ts';
import type { JointTrajectory } from '../planning/trajectory.ts';
import { KeepOutScene, planWithMoveIt } from './rcl-moveit.ts';
import { RclCalls, unavailable } from './rcl-calls.ts';
import { GOAL_STATUS, type RclModule, type RclNode, type RclPublisher } from './rclnodejs-api.ts';

/** The settings the rclnodejs context needs, taken from the loaded configuration. */
export type RclConfig = Pick<
  Config,
  'endpoints' | 'limits' | 'groupStates' | 'robot' | 'safety' | 'robotDescriptionXml' | 'sim'
> &
  Partial<Pick<Config, 'jog'>>;

export interface RclContextOptions {
  /** Name of armgate's node on the graph (default `armgate`). */
  readonly nodeName?: string;
  /** Where message definitions of recordable topics are found (default: AMENT_PREFIX_PATH, then built-in). */
  readonly definitions?: DefinitionSource;
  /**
   * Where start-up lines for the operator go (the keep-out boxes in MoveIt's planning scene, or
   * why not); default: stderr. They are in the trajectory log too.
   */
  readonly notice?: (line: string) => void;
}

/** How long a motion's answer waits for a joint state received after it (a few periods of a 100 Hz topic). */
const FRESH_STATE_MS = 50;

/** A joint state older than this (ms) does not tell whether the arm is at rest (as the stop's own freshness rule). */
const REST_STATE_MS = 500;

const DEFAULT_DESCRIPTION = 'Named position of the planning group, defined in the robot description (SRDF).';

/**
 * The context against a real ROS 2 stack through rclnodejs: one node, spun for the life of the
 * server. Joint states come from the joint-state topic (taken by name), FK from MoveIt's
 * GetPositionFK, motion from the stack's action servers and MoveToNamedPose service (cancelled on
 * stop and on the motion timeout), trajectories go to the controller topic, stop is the Trigger
 * service. Every ROS message is converted at this boundary (lib/ros/convert.ts): nothing
 * ROS-typed reaches a handler.
 */
/** A trajectory goal a request waits on (see RclContext.goalRun). */
interface GoalRun {
  readonly path: RetimedPath;
  /** The request's signal or a stop. */
  readonly signal: AbortSignal;
  readonly stop: AbortController;
  /** The re-timed rest sent as a new goal, which the request waits on next. */
  next: Promise<Result<TrajectoryGoalEnd, InterfaceUnavailable>> | undefined;
  /** Wakes the request waiting at rest after a pause (a resume sent `next`). */
  wake: (() => void) | undefined;
}

export class RclContext implements RobotContext {
  readonly endpoints: EndpointsFile;
  readonly limits: JointLimits;
  private readonly config: RclConfig;
  private readonly rcl: RclModule;
  private readonly node: RclNode;
  private readonly calls: RclCalls;
  private readonly goals: RclGoals;
  private readonly publisher: Result<RclPublisher, string>;
  /** The topics a sequence records, and their subscriptions. */
  private readonly topicHub: RclTopics;
  private readonly logListeners = new Set<(line: string) => void>();
  /** The latest joint state and the callers waiting for the next. */
  private readonly jointStates = new JointStateCache(systemClock);
  private trajectoryEndsAtMs = 0;
  /** The last published trajectory was a hold point (a stop): until trajectoryEndsAtMs the arm brakes. */
  private holding = false;
  /** The execution rate (0..1): the speed override scales the speed of the goals sent (0 while paused). */
  private rate = 1;
  /** The trajectory armgate published on the controller's topic, followed in plan time (pause, resume, override). */
  private path: RetimedPath | undefined;
  /**
   * The FollowJointTrajectory goal a request waits on, followed in plan time: a pause, a resume or the
   * override sends the re-timed rest as a new goal (the controller replaces the old one), and the
   * request waits on that one instead.
   */
  private goalRun: GoalRun | undefined;
  /** The SRDF's named positions and the URDF, read from the stack once. */
  private readonly description: RclDescription;
  private malformedLogged = false;
  /** The safety envelope the targets are held to; undefined: none configured. */
  private guard: TargetGuard | undefined;
  /** Keeps the keep-out boxes in MoveIt's planning scene (when there are any). */
  keepOutScene: KeepOutScene | undefined;
  private readonly notice: (line: string) => void;
  /** The node spins: a keep-out scene set from now on starts at once. */
  private spinning = false;
  /** Jogging: short trajectories streamed on the controller's topic (lib/ros/rcl-jog.ts). */
  private readonly jogger: RclJog;

  private constructor(
    config: RclConfig,
    rcl: RclModule,
    node: RclNode,
    definitions: DefinitionSource,
    notice: (line: string) => void,
  ) {
    this.config = config;
    this.endpoints = config.endpoints;
    this.limits = config.limits;
    this.rcl = rcl;
    this.node = node;
    this.topicHub = new RclTopics(node, this.endpoints, definitions);
    const log = (line: string) => this.log(line);
    this.calls = new RclCalls(node, rcl, this.endpoints.timeouts.server_wait_s);
    this.goals = new RclGoals(this.calls, this.endpoints.timeouts, log);
    this.description = new RclDescription(this.calls, this.endpoints, config.groupStates);
    const { joint_states, trajectory, move_to_joints, move_to_pose } = this.endpoints.interfaces;
    node.createSubscription(joint_states.type, joint_states.name, { enableTypedArray: true }, (raw) =>
      this.onJointState(raw),
    );
    let publisher: Result<RclPublisher, string>;
    try {
      // Created at start-up so the controller has matched it before the first trajectory.
      publisher = ok(node.createPublisher(trajectory.type, trajectory.name));
    } catch (e) {
      publisher = err((e as Error).message);
    }
    this.publisher = publisher;
    // Action clients early too (discovery takes a moment); a type that is not installed shows as a 503 on use.
    this.calls.actionClient(move_to_joints);
    this.calls.actionClient(move_to_pose);
    this.notice = notice;
    // When the envelope's TCP chain is not in the endpoints file's URDF (the stack's `tcp` link), start-up reads
    // the stack's robot_description and calls useSafety with the model it yields.
    const safety = safetyStateFor(config);
    this.jogger = this.createJogger(safety.ok ? ok(safety.value) : safety);
    if (safety.ok) this.useSafety(safety.value);
  }

  /** The jog's port on this context: the limits, the joint states, the controller's topic, the execution rate. */
  private createJogger(safety: Result<SafetyState, string>): RclJog {
    const jog = this.config.jog ?? { joint_speed: 0.25, tcp_speed: 0.25, tcp_angular_speed: 0.5 };
    const names = this.endpoints.joint_names;
    const inOrder = (msg: JointStateMsg | undefined) => {
      const state = msg ? jointStateByName(msg, names) : undefined;
      return state?.ok ? state.value : undefined;
    };
    const port = {
      limits: this.limits,
      jointNames: names,
      nowMs: () => this.nowMs(),
      state: () => this.freshState(),
      nextState: async (timeoutMs: number) => inOrder(await this.nextJointState(timeoutMs)),
      publish: (msg: JointTrajectoryMsg): Result<void, string> => {
        if (!this.publisher.ok)
          return err(`cannot publish on ${this.endpoints.interfaces.trajectory.name}: ${this.publisher.error}`);
        try {
          this.publisher.value.publish(jointTrajectoryToRos(msg));
        } catch (e) {
          return err(`publishing on ${this.endpoints.interfaces.trajectory.name} failed: ${(e as Error).message}`);
        }
        // The jog's trajectory replaces what the controller had: nothing published before is followed any more.
        this.path = undefined;
        this.trajectoryEndsAtMs = 0;
        return ok(undefined);
      },
      rate: () => this.rate,
      log: (line: string) => this.log(line),
      servo: servoFor(this.node, this.endpoints, (line) => this.log(line)),
    };
    const speeds = {
      jointSpeed: jog.joint_speed,
      tcpSpeedMS: jog.tcp_speed,
      tcpAngularSpeedRadS: jog.tcp_angular_speed,
    };
    return new RclJog(port, speeds, safety);
  }

  /** Holds the targets of the goals this context sends to the envelope, and puts the keep-out boxes in MoveIt's scene. */
  useSafety(safety: SafetyState): void {
    const envelope = safety.envelope;
    this.jogger.useSafety(safety.chain, envelope);
    this.guard = envelope ? createTargetGuard(safety.chain, envelope, this.endpoints.planning_frame) : undefined;
    this.keepOutScene?.close();
    this.keepOutScene =
      envelope && envelope.keepOut.length > 0
        ? new KeepOutScene(this.calls, this.endpoints, envelope.keepOut, (line) => {
            this.notice(line);
            this.log(line);
          })
        : undefined;
    if (this.spinning) this.keepOutScene?.start();
  }

  /** Initializes rclnodejs, creates armgate's node and spins it. */
  static async create(config: RclConfig, rcl: RclModule, options: RclContextOptions = {}): Promise<RclContext> {
    await rcl.init();
    const node = new rcl.Node(options.nodeName ?? 'armgate');
    try {
      const notice = options.notice ?? ((line: string) => process.stderr.write(`armgate: ${line}\n`));
      const definitions = options.definitions ?? DefinitionSource.fromEnv(process.env);
      const context = new RclContext(config, rcl, node, definitions, notice);
      node.spin();
      context.spinning = true;
      context.keepOutScene?.start();
      return context;
    } catch (e) {
      node.destroy();
      rcl.shutdown();
      throw e;
    }
  }

  private log(line: string): void {
    for (const listener of this.logListeners) listener(line);
  }

  private onJointState(raw: unknown): void {
    const received = jointStateFromRos(raw);
    if (!received.ok) {
      if (!this.malformedLogged)
        this.log(
          `ignoring malformed joint states on ${this.endpoints.interfaces.joint_states.name}: ${received.error}`,
        );
      this.malformedLogged = true;
      return;
    }
    // In J1..J7 order when every joint is there; otherwise as received, so a read names the missing joints.
    const ordered = jointStateByName(received.value, this.endpoints.joint_names);
    const msg = ordered.ok ? ordered.value : received.value;
    this.jointStates.put(msg);
    this.topicHub.jointState(received.value);
  }

  nowMs(): number {
    return systemClock.nowMs();
  }

  latestJointState(): ReceivedJointState | undefined {
    return this.jointStates.latest;
  }

  nextJointState(timeoutMs: number): Promise<JointStateMsg | undefined> {
    return this.jointStates.next(timeoutMs);
  }

  /** The latest joint state received. */
  private get latest(): ReceivedJointState | undefined {
    return this.jointStates.latest;
  }

  computeFk(request: GetPositionFkRequest): Promise<Result<GetPositionFkResponse, InterfaceUnavailable>> {
    return computeFkOverRos(this.calls, this.endpoints, request);
  }

  groupStates(): Promise<Result<readonly GroupState[], InterfaceUnavailable>> {
    return this.description.groupStates();
  }

  robotDescription(): Promise<Result<string, InterfaceUnavailable>> {
    return this.description.robotDescription();
  }

  describeState(name: string): string {
    return this.config.robot.positionDescriptions[name] ?? DEFAULT_DESCRIPTION;
  }

  /**
   * The refusal of a target outside the safety envelope (nothing is sent to `iface`), or undefined
   * when it is inside or no envelope is configured. The stack plans the path itself: only the
   * target can be checked here.
   */
  private outsideEnvelope(target: SafetyTarget, iface: string): MotionResultMsg | undefined {
    const why = this.guard ? targetOutsideEnvelope(this.guard, target) : undefined;
    if (!why) return undefined;
    this.log(`goal for ${iface} refused: outside the safety envelope: ${why}`);
    return {
      success: false,
      message: `the target is outside the safety envelope: ${why}; nothing was sent to ${iface}, nothing moved`,
    };
  }

  async moveToJoints(
    goal: MoveToJointsGoal,
    options: GoalOptions = {},
  ): Promise<Result<MotionResultMsg, InterfaceUnavailable>> {
    const iface = this.endpoints.interfaces.move_to_joints;
    const refused = this.outsideEnvelope({ kind: 'joints', qRad: goal.joints }, iface.name);
    if (refused) return ok(refused);
    if (this.restsAt(goal.joints)) {
      const message = `already at the target (every joint within ${REST_SPAN_RAD} rad, at rest): nothing was sent to ${iface.name}`;
      this.log(`goal for ${iface.name}: ${message}`);
      return ok({ success: true, message });
    }
    return this.fresh(await this.goals.runAction(iface, () => moveToJointsGoalToRos(this.scaled(goal)), options));
  }

  /**
   * The arm rests at `target` by a joint state of the last {@link FRESH_STATE_MS} and nothing moves it (no goal,
   * trajectory, jog, pause or stop's brake): a motion there has nothing to do, and the stack's round trips
   * (its plan, a controller goal, the result) cost about 100 ms over DDS for it. Found on a real graph.
   */
  private restsAt(target: readonly number[]): boolean {
    const latest = this.latest;
    if (!latest || this.nowMs() - latest.receivedAtMs > FRESH_STATE_MS || this.armActivity()) return false;
    const state = jointStateByName(latest.msg, this.endpoints.joint_names);
    return state.ok && restsAt(state.value.position, state.value.velocity, target);
  }

  /** A goal with its speed scaled by the override in force (a paused goal is sent again at the rate of its resume). */
  private scaled<G extends { readonly speed: number }>(goal: G): G {
    return this.rate > 0 && this.rate < 1 ? { ...goal, speed: goal.speed * this.rate } : goal;
  }

  /**
   * Pause, resume and the speed override on the ros2 backend (issue 24). The stack plans and executes
   * a motion goal itself and Jazzy's joint trajectory controller has no speed scaling, so: rate 0
   * (pause) cancels the motion goals in flight (the stack brakes; a named-pose call: the stop
   * service) and answers once the arm rests; their requests wait, and a rate above 0 (resume) sends
   * the same goals again from where the arm rests (the stack plans again: the path may differ). A
   * rate below 1 (the override) scales the speed of every goal sent from then on; a goal in progress
   * keeps its own. A trajectory armgate published or sent as a FollowJointTrajectory goal is followed
   * in plan time and its rest re-timed here on the same path (lib/ros/retimed-path.ts). A sequence
   * runner's goals (sent by the runner's own node) are paused by the runner itself, told over IPC
   * before this is called (lib/motion/pause.ts waits for its acknowledgement). What cannot be paused
   * (a trajectory with a future header stamp) is a 503, and POST /stop stops it.
   */
  async setExecutionRate(
    rate: number,
    options: ExecutionRateOptions = {},
  ): Promise<Result<ExecutionRateAnswer, InterfaceUnavailable>> {
    const percent = Math.round(rate * 100);
    if (this.jogger.active()) {
      // A jog: the engine takes the rate every period (0: it brakes to rest and holds while commanded).
      this.rate = Math.min(1, Math.max(0, rate));
      return ok(await this.jogger.rateChanged(this.rate, options.signal));
    }
    const path = this.activePath();
    if (rate > 0) {
      this.rate = Math.min(1, rate);
      const resumed = this.goals.resumeMotions();
      if (resumed > 0) this.log(`resume: ${resumed} paused goal(s) sent again at ${percent} % of their speed`);
      const run = this.activeGoalRun();
      if (run) {
        this.retimeGoal(run, this.rate);
        this.log(`the trajectory goal in progress re-timed to ${percent} % from where it is (a new goal)`);
        return ok({ executing: true, message: `the trajectory in progress runs at ${percent} %` });
      }
      if (path) {
        // The rest of the published trajectory, re-timed from where it is (at rest when paused) to this rate.
        const published = this.publishOnTopic(this.messageOf(path.retime(this.nowMs(), this.rate)));
        if (!published.ok) return published;
        this.log(`the trajectory in progress re-timed to ${percent} % from where it is`);
        return ok({ executing: true, message: `the trajectory in progress runs at ${percent} %` });
      }
      return ok({
        executing: resumed > 0 || this.goals.motions > 0,
        message:
          resumed > 0
            ? `${resumed} paused goal(s) sent again at ${percent} % of their speed (the stack plans again from where the arm rests)`
            : `goals sent from now on run at ${percent} % of their speed (a goal in progress keeps its own)`,
      });
    }
    const run = this.activeGoalRun();
    if (run && options.holder?.kind !== 'sequence') {
      this.rate = 0;
      this.retimeGoal(run, 0);
      return ok(
        await this.restAnswer(
          options.signal,
          `pause: the trajectory goal brakes on its path (a new goal)`,
          'the trajectory came to rest on its path and holds there',
          'the trajectory was re-timed to rest on its path; no joint state at rest was seen within the motion timeout',
        ),
      );
    }
    if (path && options.holder?.kind !== 'sequence') {
      this.rate = 0;
      // The rest of the published trajectory re-timed to come to rest on its path within the limits.
      const published = this.publishOnTopic(this.messageOf(path.retime(this.nowMs(), 0)));
      if (!published.ok) return published;
      return ok(
        await this.restAnswer(
          options.signal,
          `pause: the trajectory on the topic brakes on its path`,
          'the trajectory came to rest on its path and holds there',
          'the trajectory was re-timed to rest on its path; no joint state at rest was seen within the motion timeout',
        ),
      );
    }
    if (options.holder?.kind === 'sequence' && options.pausedElsewhere) {
      // The runner cancelled its goal on the stack (it brakes) and waits for the resume.
      this.rate = 0;
      return ok(
        await this.restAnswer(
          options.signal,
          `pause: the sequence runner's goal cancelled on the stack`,
          "the sequence runner's goal was cancelled on the stack, which brought the arm to rest; resume sends it again",
          "the sequence runner's goal was cancelled on the stack; no joint state at rest was seen within the motion timeout",
        ),
      );
    }
    const activity = options.holder?.kind === 'sequence' ? options.holder : this.armActivity();
    if (this.goals.motions === 0 && activity) {
      const what = activity.kind === 'stopping' ? 'the arm braking after a stop' : activity.detail;
      return err(
        unavailable(
          this.endpoints.interfaces.trajectory.name,
          `pause on the ros2 backend holds armgate's motion goals only; ${what} cannot be paused on its path here (the controller has no speed scaling): POST /stop stops it`,
        ),
      );
    }
    this.rate = 0;
    // Goals sent from now on (a move between its checks and its goal) wait for the resume before they go.
    const paused = await this.goals.pauseMotions();
    if (paused === 0 && this.goals.paused === 0) return ok({ executing: false, message: 'no motion goal executes' });
    const answer = await this.restAnswer(
      options.signal,
      `pause: ${paused} motion goal(s) cancelled on the stack`,
      'the motion goal was cancelled on the stack, which brought the arm to rest; resume sends it again',
      'the motion goal was cancelled on the stack; no joint state at rest was seen within the motion timeout',
    );
    return ok({ ...answer, executing: this.goals.paused > 0 });
  }

  /** A pause's answer once the arm rests (or the wait ended): logged with `what`, the message as it came out. */
  private async restAnswer(
    signal: AbortSignal | undefined,
    what: string,
    rested: string,
    unseen: string,
  ): Promise<ExecutionRateAnswer> {
    const atRest = await this.waitAtRest(signal);
    this.log(`${what}; ${atRest ? 'the arm rests' : 'not seen at rest'}`);
    return { executing: true, message: atRest ? rested : unseen };
  }

  /** Waits (at most timeouts.motion_s, or until `signal`) for joint states that say the arm rests (lib/ros/at-rest.ts). */
  private async waitAtRest(signal?: AbortSignal): Promise<boolean> {
    const deadline = this.nowMs() + this.endpoints.timeouts.motion_s * 1000;
    const rest = new RestWatch();
    while (this.nowMs() < deadline && !signal?.aborted) {
      const msg = await this.nextJointState(200);
      if (!msg) continue;
      const state = jointStateByName(msg, this.endpoints.joint_names);
      if (state.ok && rest.observe(this.nowMs(), state.value.position, state.value.velocity)) return true;
    }
    return false;
  }

  /**
   * A motion's answer once a joint state received after it has arrived (at most {@link FRESH_STATE_MS}):
   * the stack answers when its controller is done, and its /joint_states may lag that by a period, so a
   * read right after the answer would show the arm short of its goal. Found on a real graph.
   */
  private async fresh<T>(answer: T): Promise<T> {
    await this.nextJointState(FRESH_STATE_MS);
    return answer;
  }

  async moveToPose(
    goal: MoveToPoseGoal,
    options: GoalOptions = {},
  ): Promise<Result<MotionResultMsg, InterfaceUnavailable>> {
    const iface = this.endpoints.interfaces.move_to_pose;
    const rosGoal = moveToPoseGoalToRos(goal);
    if (!rosGoal.ok) return ok({ success: false, message: rosGoal.error });
    const build = () => {
      const scaled = moveToPoseGoalToRos(this.scaled(goal));
      return scaled.ok ? scaled.value : rosGoal.value;
    };
    const refused = this.outsideEnvelope(
      { kind: 'pose', positionM: [goal.x, goal.y, goal.z], frameId: goal.frame_id },
      iface.name,
    );
    if (refused) return ok(refused);
    return this.fresh(await this.goals.runAction(iface, build, options));
  }

  async moveToNamed(
    request: MoveToNamedRequest,
    options: GoalOptions = {},
  ): Promise<Result<MotionResultMsg, InterfaceUnavailable>> {
    const iface = this.endpoints.interfaces.move_to_named;
    if (this.guard) {
      // The named position's joint angles are the target: read from the SRDF MoveIt runs with.
      const states = await this.groupStates();
      if (!states.ok) return states;
      const state = states.value.find((s) => s.name === request.name);
      const refused = state ? this.outsideEnvelope({ kind: 'joints', qRad: state.jointsRad }, iface.name) : undefined;
      if (refused) return ok(refused);
    }
    return this.fresh(
      await this.goals.runService(
        iface,
        () => moveToNamedToRos(this.scaled(request)),
        options,
        () => this.callTrigger(this.endpoints.timeouts.server_wait_s),
      ),
    );
  }

  /**
   * A dry run through MoveIt's plan-only service (`interfaces.plan_kinematic_path`): see
   * {@link planWithMoveIt}. Nothing is sent to the controller.
   */
  planMotion(
    request: MotionPlanRequest,
    options: { readonly signal?: AbortSignal } = {},
  ): Promise<Result<MotionPlanAnswer, InterfaceUnavailable>> {
    const deps = {
      calls: this.calls,
      endpoints: this.endpoints,
      guard: this.guard,
      latest: () => {
        const latest = this.latest ? jointStateByName(this.latest.msg, this.endpoints.joint_names) : undefined;
        return latest?.ok ? latest.value : undefined;
      },
      groupStates: () => this.groupStates(),
    };
    return planWithMoveIt(deps, request, options.signal);
  }

  async publishTrajectory(
    msg: JointTrajectoryMsg,
    options: PublishOptions = {},
  ): Promise<Result<void, InterfaceUnavailable>> {
    const { name } = this.endpoints.interfaces.trajectory;
    // A stop's hold point (or any trajectory) takes the controller from a jog: the jog streams nothing more.
    this.jogger.halt();
    if (!this.publisher.ok) return err(unavailable(name, `cannot publish on ${name}: ${this.publisher.error}`));
    if (msg.points.length === 0) {
      // ros2_controllers' JTC ignores an empty trajectory ("Empty trajectory received"): the arm would go
      // on. Stop and hold means a hold point at the current state, decelerating within the limits.
      const hold = this.holdAtCurrentState();
      if (!hold)
        return err(
          unavailable(
            name,
            `an empty trajectory stops nothing on ${name} (the controller ignores it) and there is no current joint state to hold at`,
          ),
        );
      this.log(
        `an empty trajectory: a hold point at the current state goes to ${name} instead (the controller ignores empty ones)`,
      );
      msg = { ...msg, joint_names: [...this.endpoints.joint_names], points: [hold] };
      this.path = undefined;
      return this.publishOnTopic(msg, true);
    } else {
      // Followed in plan time, so that a pause, a resume or the override can re-time its rest; under an
      // override below 100 % it goes out re-timed at once.
      // A stop's hold point (said by the stop, whatever its distance) is never followed, re-timed or refused.
      const hold = options.hold === true || this.isHoldPoint(msg);
      this.path = hold ? undefined : this.pathOf(msg);
      if (!hold) {
        const timed = this.underOverride(msg, this.path, name);
        if (!timed.ok) return timed;
        msg = timed.value;
      }
      return this.publishOnTopic(msg, hold);
    }
  }

  /**
   * The trajectory to send under the override in force: as it is at 100 %, else its path re-timed to the
   * override; never faster than the override: one that cannot be re-timed is refused (nothing is sent).
   */
  private underOverride(
    msg: JointTrajectoryMsg,
    path: RetimedPath | undefined,
    iface: string,
  ): Result<JointTrajectoryMsg, InterfaceUnavailable> {
    if (!(this.rate > 0 && this.rate < 1)) return ok(msg);
    if (!path)
      return err(
        unavailable(
          iface,
          `the speed override is ${Math.round(this.rate * 100)} % and this trajectory cannot be re-timed to it (a future header stamp, joints not named as the controller's, or no joint state of the last ${REST_STATE_MS} ms): nothing was sent`,
        ),
      );
    return ok(this.messageOf(path.retime(this.nowMs(), this.rate)));
  }

  /** The latest joint state in the endpoints' joint order if at most {@link REST_STATE_MS} old, else undefined. */
  private freshState(): JointStateMsg | undefined {
    const latest = this.latest;
    if (!latest || this.nowMs() - latest.receivedAtMs > REST_STATE_MS) return undefined;
    const state = jointStateByName(latest.msg, this.endpoints.joint_names);
    return state.ok ? state.value : undefined;
  }

  /** A hold point (what a stop publishes: one point where the arm is): no path to pause, never refused. */
  private isHoldPoint(msg: JointTrajectoryMsg): boolean {
    if (msg.points.length !== 1) return false;
    const state = this.freshState();
    // Without a current state nothing can tell: a lone point is let through as before (a stop must never be refused).
    if (!state) return true;
    return holdRestS(msg.points, state.position, state.velocity ?? []) !== undefined;
  }

  /** The trajectory as the controller will follow it, from the current state (its t = 0), or undefined. */
  private pathOf(msg: JointTrajectoryMsg): RetimedPath | undefined {
    if (msg.header.stamp.sec !== 0 || msg.header.stamp.nanosec !== 0) return undefined;
    const names = this.endpoints.joint_names;
    const index = names.map((n) => msg.joint_names.indexOf(n));
    if (index.some((i) => i < 0)) return undefined;
    const state = this.freshState();
    if (!state) return undefined;
    const pick = (values: readonly number[]) =>
      values.length === msg.joint_names.length ? index.map((i) => values[i] ?? 0) : undefined;
    const points = msg.points.map((p) => {
      const velocities = pick(p.velocities);
      const accelerations = velocities ? pick(p.accelerations) : undefined;
      return {
        positions: index.map((i) => p.positions[i] ?? 0),
        ...(velocities ? { velocities } : {}),
        ...(accelerations ? { accelerations } : {}),
        timeFromStartS: secondsOf(p.time_from_start),
      };
    });
    const first = points[0];
    if (!first) return undefined;
    // The controller joins from the state at receipt to a first point later than 0.
    if (first.timeFromStartS > 0) {
      const velocity = state.velocity;
      points.unshift({
        positions: [...state.position],
        ...(velocity && velocity.length === names.length ? { velocities: [...velocity] } : {}),
        timeFromStartS: 0,
      });
    }
    return new RetimedPath({ jointNames: names, points }, this.limits, this.nowMs());
  }

  /** A trajectory of the endpoints' joints as the controller's message (times from its receipt). */
  private messageOf(trajectory: JointTrajectory): JointTrajectoryMsg {
    return {
      header: { stamp: { sec: 0, nanosec: 0 }, frame_id: '' },
      joint_names: [...this.endpoints.joint_names],
      points: trajectory.points.map((p) => ({
        positions: [...p.positions],
        velocities: [...(p.velocities ?? [])],
        accelerations: [...(p.accelerations ?? [])],
        effort: [],
        time_from_start: durationFromS(p.timeFromStartS),
      })),
    };
  }

  /**
   * Publishes on the controller's topic and notes until when the trajectory holds the arm; `hold`: it is a hold
   * point (a trajectory goal it replaces on the controller then ends there, and is not cancelled).
   */
  private publishOnTopic(msg: JointTrajectoryMsg, hold = false): Result<void, InterfaceUnavailable> {
    const { name } = this.endpoints.interfaces.trajectory;
    if (!this.publisher.ok) return err(unavailable(name, `cannot publish on ${name}: ${this.publisher.error}`));
    try {
      this.publisher.value.publish(jointTrajectoryToRos(msg));
    } catch (e) {
      return err(unavailable(name, `publishing on ${name} failed: ${(e as Error).message}`));
    }
    this.goals.topicTrajectory(hold);
    const last = msg.points.at(-1);
    const durationS = last ? secondsOf(last.time_from_start) : 0;
    // A hold point (what a stop publishes) holds the arm only while it brakes: at rest it is free at once.
    const state = this.freshState();
    const holdS = state ? holdRestS(msg.points, state.position, state.velocity ?? []) : undefined;
    this.holding = holdS !== undefined;
    this.trajectoryEndsAtMs = msg.points.length === 0 ? 0 : this.nowMs() + (holdS ?? durationS) * 1000;
    this.log(
      msg.points.length === 0
        ? `published an empty trajectory on ${name}: the controller stops and holds`
        : `published ${msg.points.length} point(s) (${durationS.toFixed(3)} s) on ${name}`,
    );
    if (this.subscriberCount(name) === 0)
      this.log(`no subscriber on ${name}: is the joint trajectory controller running?`);
    return ok(undefined);
  }

  /** The hold point at the latest joint state (at most {@link REST_STATE_MS} old), or undefined without one. */
  private holdAtCurrentState(): JointTrajectoryPointMsg | undefined {
    const state = this.freshState();
    return state ? holdPoint(state.position, state.velocity, this.limits) : undefined;
  }

  /**
   * Inverse kinematics through MoveIt's GetPositionIK (`interfaces.compute_ik`): the pose of
   * `tcp_link` in frame_id (default the planning frame), seeded with `request.seed` or the latest
   * joint state, avoid_collisions as asked, MoveIt's own timeout timeouts.ik_s (the call waits
   * fk_s longer). MoveIt's error codes become success false with the reason.
   */
  solveIk(request: IkRequest, options: IkOptions = {}): Promise<Result<IkAnswer, InterfaceUnavailable>> {
    return solveIkOverRos(this.calls, this.endpoints, this.latest, request, options);
  }

  /**
   * Executes a trajectory through the controller's FollowJointTrajectory action
   * (`interfaces.follow_joint_trajectory`) and maps how the goal ended to an outcome: rejected ->
   * refused; otherwise as {@link trajectoryGoalOutcome} says (a newer goal -> preempted, path
   * tolerance -> stopped, ...); cancelled here by `options.signal` or stop -> stopped, by the
   * wait's limit -> timeout. An empty trajectory (which the controller rejects as a goal) goes to
   * publishTrajectory, which holds the arm where it is, and answers stopped, as the simulator does.
   */
  async executeTrajectory(
    msg: JointTrajectoryMsg,
    options: TrajectoryWaitOptions = {},
  ): Promise<Result<TrajectoryOutcome, InterfaceUnavailable>> {
    const iface = this.endpoints.interfaces.follow_joint_trajectory;
    const startedMs = this.nowMs();
    const answer = (outcome: TrajectoryOutcome['outcome'], message: string): Result<TrajectoryOutcome, never> =>
      ok({ outcome, message, duration_s: Math.round(this.nowMs() - startedMs) / 1000 });
    if (options.signal?.aborted)
      return answer(
        'stopped',
        `${typeof options.signal.reason === 'string' ? options.signal.reason : 'stopped'}: nothing was sent`,
      );
    // The controller rejects an empty goal; on its topic an empty trajectory means stop and hold.
    if (msg.points.length === 0) {
      const published = await this.publishTrajectory(msg);
      return published.ok ? answer('stopped', 'an empty trajectory: the controller stops and holds') : published;
    }
    // The controller replaces what it executes: a topic trajectory followed before is gone.
    this.path = undefined;
    const path = this.isHoldPoint(msg) ? undefined : this.pathOf(msg);
    const timed = this.underOverride(msg, path, iface.name);
    if (!timed.ok) return timed;
    msg = timed.value;
    const last = msg.points.at(-1);
    const durationS = last ? secondsOf(last.time_from_start) : 0;
    const timeoutS = options.timeoutS ?? durationS + this.endpoints.timeouts.motion_s;
    const previousEnd = this.trajectoryEndsAtMs;
    const endsAtMs = this.nowMs() + durationS * 1000;
    this.trajectoryEndsAtMs = endsAtMs;
    // Only while no newer trajectory has been sent since: its end is then the one that counts.
    const settleEnd = (value: number) => {
      if (this.trajectoryEndsAtMs === endsAtMs) this.trajectoryEndsAtMs = value;
    };
    const stopped = new AbortController();
    const signal = options.signal ? AbortSignal.any([options.signal, stopped.signal]) : stopped.signal;
    const run: GoalRun | undefined = path
      ? { path, signal, stop: stopped, next: undefined, wake: undefined }
      : undefined;
    this.goalRun = run;
    let ended: Result<TrajectoryGoalEnd, InterfaceUnavailable>;
    try {
      let current = this.goals.runTrajectoryGoal(iface, followJointTrajectoryGoalToRos(msg), { signal, timeoutS });
      for (;;) {
        ended = await current;
        const next = run?.next;
        if (run && next) {
          // Replaced by its own re-timed rest (a pause, a resume, the override): wait on that goal instead.
          run.next = undefined;
          current = next;
          continue;
        }
        if (run?.path.paused && ended.ok && ended.value.kind === 'result' && !signal.aborted) {
          // The pause's goal brought the arm to rest on the path: wait for the resume's goal, or a stop.
          const resumed = await new Promise<boolean>((resolve) => {
            const onAbort = () => resolve(false);
            if (signal.aborted) return resolve(false);
            signal.addEventListener('abort', onAbort, { once: true });
            run.wake = () => {
              signal.removeEventListener('abort', onAbort);
              resolve(true);
            };
          });
          run.wake = undefined;
          const resumedGoal = run.next;
          if (resumed && resumedGoal) {
            run.next = undefined;
            current = resumedGoal;
            continue;
          }
          ended = ok({ kind: 'aborted', reason: reasonOf(signal), by: 'stop' });
        }
        break;
      }
    } finally {
      if (this.goalRun === run) this.goalRun = undefined;
    }
    ended = await this.fresh(ended);
    if (!ended.ok) {
      settleEnd(previousEnd);
      return ended;
    }
    const end = ended.value;
    if (end.kind === 'rejected') {
      // A rejected goal leaves what the controller was executing as it was.
      settleEnd(previousEnd);
      return answer(
        'refused',
        `the controller rejected the trajectory goal on ${iface.name} (joints, times or limits)`,
      );
    }
    settleEnd(0);
    if (end.kind === 'aborted')
      return answer(end.by === 'timeout' ? 'timeout' : 'stopped', `${end.reason}; the controller stops and holds`);
    const result = followJointTrajectoryResultFromRos(end.result);
    const { outcome, message } = trajectoryGoalOutcome({
      succeeded: end.status === GOAL_STATUS.succeeded,
      canceled: end.status === GOAL_STATUS.canceled,
      errorCode: result.ok ? result.value.error_code : FJT_SUCCESSFUL,
      errorString: result.ok ? result.value.error_string : '',
    });
    return answer(outcome, message);
  }

  private subscriberCount(topic: string): number | undefined {
    try {
      return this.node.countSubscribers(topic);
    } catch {
      return undefined;
    }
  }

  private async callTrigger(serverWaitS: number): Promise<Result<TriggerResponse, InterfaceUnavailable>> {
    const iface = this.endpoints.interfaces.stop;
    const timeoutMs = this.endpoints.timeouts.server_wait_s * 1000;
    const answer = await this.calls.call(iface, 'stop service', {}, timeoutMs, serverWaitS);
    if (!answer.ok) return answer;
    const response = triggerResponseFromRos(answer.value);
    if (!response.ok)
      return err(unavailable(iface.name, `stop service ${iface.name} gave a malformed response: ${response.error}`));
    this.log(
      `stop service ${iface.name}: ${response.value.success ? 'success' : 'failure'}${response.value.message ? `: ${response.value.message}` : ''}`,
    );
    return response;
  }

  /**
   * Cancels the goals in flight and calls the stop service at once, then waits for both: the servers confirming
   * the cancels, the stop service (waited for server_wait_s to appear, unless `waitForServer` is false: the
   * shutdown's stop).
   */
  async callStop(options: StopCallOptions = {}): Promise<Result<TriggerResponse, InterfaceUnavailable>> {
    // A paused trajectory goal waiting for its resume ends here too; no re-timed rest is sent after a stop.
    this.jogger.halt();
    const run = this.goalRun;
    this.goalRun = undefined;
    run?.stop.abort('stopped');
    // The cancels and the stop service go out together (each a round trip to the stack, about 2 to 20 ms over DDS
    // on a loaded machine): the stop answers after the slower of the two, not after both in turn.
    const t0 = performance.now();
    const since = (t: number) => (t - t0).toFixed(2);
    const cancels = this.goals.cancelAll('stopped').then((n) => ({ n, ms: since(performance.now()) }));
    const triggered = this.callTrigger(options.waitForServer === false ? 0 : this.endpoints.timeouts.server_wait_s);
    const trigger = await triggered;
    const stopMs = since(performance.now());
    const { n: cancelled, ms: cancelMs } = await cancels;
    this.log(`stop timings ms: cancels confirmed ${cancelMs}, stop service answered ${stopMs}`);
    if (!trigger.ok || cancelled === 0) return trigger;
    return ok({
      success: trigger.value.success,
      message: `cancelled ${cancelled} motion goal(s); ${trigger.value.message}`,
    });
  }

  /** The trajectory goal a request waits on, unless a stop or its caller ended it. */
  private activeGoalRun(): GoalRun | undefined {
    const run = this.goalRun;
    return run && !run.signal.aborted ? run : undefined;
  }

  /** Sends the rest of the goal's path re-timed to `rate` as a new goal; its request waits on that one. */
  private retimeGoal(run: GoalRun, rate: number): void {
    const msg = this.messageOf(run.path.retime(this.nowMs(), rate));
    const durationS = secondsOf(msg.points.at(-1)?.time_from_start ?? { sec: 0, nanosec: 0 });
    this.trajectoryEndsAtMs = this.nowMs() + durationS * 1000;
    run.next = this.goals.runTrajectoryGoal(
      this.endpoints.interfaces.follow_joint_trajectory,
      followJointTrajectoryGoalToRos(msg),
      {
        signal: run.signal,
        timeoutS: durationS + this.endpoints.timeouts.motion_s,
      },
    );
    run.wake?.();
  }

  /** The published trajectory still to be executed (paused, or before its end), if any. */
  private activePath(): RetimedPath | undefined {
    const path = this.path;
    if (!path) return undefined;
    if (path.finishedAt(this.nowMs())) {
      this.path = undefined;
      return undefined;
    }
    return path;
  }

  /** Jogs by streaming short trajectories on the controller's topic (lib/ros/rcl-jog.ts). */
  jog(request: JogRequest): Result<void, string> {
    if (!this.publisher.ok)
      return err(`cannot publish on ${this.endpoints.interfaces.trajectory.name}: ${this.publisher.error}`);
    if (!this.jogger.active()) {
      const busy = this.armActivity();
      if (busy) return err(busy.detail);
    }
    return this.jogger.jog(request);
  }

  releaseJog(reason: JogEndReason): void {
    if (reason === 'stop') this.jogger.halt();
    else this.jogger.release(reason);
  }

  jogStatus(): JogStatus {
    return this.jogger.status();
  }

  onJogEvents(listener: (event: JogEvent) => void): () => void {
    return this.jogger.onEvents(listener);
  }

  armActivity(): ArmActivity | undefined {
    if (this.jogger.active()) return { kind: 'jog', detail: 'the arm is being jogged' };
    if (this.goals.motions > 0) return { kind: 'goal', detail: 'a motion goal is executing' };
    // A trajectory sent with wait is a trajectory, as on the simulator: a newer one preempts it.
    if (this.goals.size > 0) return { kind: 'trajectory', detail: 'a trajectory goal is executing' };
    if (this.activePath()?.paused || this.activeGoalRun()?.path.paused)
      return { kind: 'trajectory', detail: 'a paused trajectory holds its place on its path' };
    const leftMs = this.trajectoryEndsAtMs - this.nowMs();
    if (leftMs > 0 && this.holding)
      return { kind: 'stopping', detail: 'the arm is still decelerating to rest after a stop', restInS: leftMs / 1000 };
    if (leftMs > 0)
      return { kind: 'trajectory', detail: 'a published trajectory has not reached its last time_from_start yet' };
    return undefined;
  }

  /** The topics a sequence can record (lib/ros/rcl-topics.ts). */
  topics(): readonly TopicInfo[] {
    return this.topicHub.topics();
  }

  subscribe(topic: string, listener: (msg: unknown) => void): () => void {
    return this.topicHub.subscribe(topic, listener);
  }

  onControllerLog(listener: (line: string) => void): () => void {
    this.logListeners.add(listener);
    return () => this.logListeners.delete(listener);
  }

  async close(): Promise<void> {
    this.jogger.close();
    this.keepOutScene?.close();
    await this.goals.cancelAll('the server is shutting down');
    this.logListeners.clear();
    this.topicHub.close();
    try {
      this.node.destroy();
    } finally {
      this.rcl.shutdown();
    }
  }
}
