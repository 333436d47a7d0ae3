import { DefinitionSource } from '../bag/installed.ts';
import type { JogEndReason } from '../motion/jog.ts';
import type { JointLimits } from '../robot/limits.ts';
import type { GroupState } from '../robot/srdf.ts';
import { err, ok, type Result } from '../result.ts';
import type { Config } from '../settings/load.ts';
import { type SafetyState, safetyStateFor } from '../safety/store.ts';
import { createTargetGuard } from '../safety/targets.ts';
import { type Clock, systemClock } from '../clock.ts';
import type {
  ArmActivity,
  ExecutionRateAnswer,
  ExecutionRateOptions,
  PublishOptions,
  GoalOptions,
  IkOptions,
  InterfaceUnavailable,
  JogEvent,
  JointStatePort,
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
import type { EndpointsFile } from '../settings/endpoints.ts';
import type {
  GetPositionFkRequest,
  GetPositionFkResponse,
  IkAnswer,
  IkRequest,
  JointStateMsg,
  JointTrajectoryMsg,
  MotionResultMsg,
  MoveToJointsGoal,
  MoveToNamedRequest,
  MoveToPoseGoal,
  TrajectoryOutcome,
  TriggerResponse,
} from './messages.ts';
import { RclDescription } from './rcl-description.ts';
import { RclExecutionRate } from './rcl-execution-rate.ts';
import { RclGoals } from './rcl-goals.ts';
import { RclJog } from './rcl-jog.ts';
import { RclJointStates } from './rcl-joint-states.ts';
import { RclMotionGoals } from './rcl-motion-goals.ts';
import { RclStop } from './rcl-stop.ts';
import { servoFor } from './rcl-servo.ts';
import { computeFkOverRos, solveIkOverRos } from './rcl-kinematics.ts';
import { RclTopics } from './rcl-topics.ts';
import { RclTrajectoryChannel } from './rcl-trajectory-channel.ts';
import { RclTrajectoryGoal } from './rcl-trajectory-goal.ts';
import { KeepOutScene, planWithMoveIt } from './rcl-moveit.ts';
import { RclCalls } from './rcl-calls.ts';
import type { RclModule, RclNode } from './rclnodejs-api.ts';

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
  /** The context's clock: joint states' arrival, the waits, the jog's period (default: the process clock). */
  readonly clock?: Clock;
}

const DEFAULT_DESCRIPTION = 'Named position of the planning group, defined in the robot description (SRDF).';

/**
 * The context against a real ROS 2 stack through rclnodejs: one node, spun for the life of the
 * server. Joint states come from the joint-state topic (taken by name), FK from MoveIt's
 * GetPositionFK, motion from the stack's action servers and MoveToNamedPose service (cancelled on
 * stop and on the motion timeout), trajectories go to the controller topic, stop is the Trigger
 * service. Every ROS message is converted at this boundary (lib/ros/convert.ts): nothing
 * ROS-typed reaches a handler. Composed of parts, one job each: the joint states
 * (lib/ros/rcl-joint-states.ts), the controller's topic (lib/ros/rcl-trajectory-channel.ts), a trajectory goal
 * followed in plan time (lib/ros/rcl-trajectory-goal.ts), the motion goals (lib/ros/rcl-motion-goals.ts) and
 * their flights (lib/ros/rcl-goals.ts), the execution rate (lib/ros/rcl-execution-rate.ts), the stop
 * (lib/ros/rcl-stop.ts), the jog (lib/ros/rcl-jog.ts), the recorded topics (lib/ros/rcl-topics.ts) and MoveIt's
 * services.
 */
export class RclContext implements RobotContext {
  readonly endpoints: EndpointsFile;
  readonly limits: JointLimits;
  readonly jointStateCache: JointStatePort;
  private readonly config: RclConfig;
  private readonly rcl: RclModule;
  private readonly node: RclNode;
  private readonly clock: Clock;
  private readonly calls: RclCalls;
  private readonly goals: RclGoals;
  /** The topics a sequence records, and their subscriptions. */
  private readonly topicHub: RclTopics;
  private readonly logListeners = new Set<(line: string) => void>();
  /** The latest joint state and the callers waiting for the next. */
  private readonly jointStates: RclJointStates;
  /** The controller's trajectory topic: what armgate published there, followed in plan time. */
  private readonly channel: RclTrajectoryChannel;
  /** The FollowJointTrajectory goal a request waits on, followed in plan time. */
  private readonly trajectoryGoal: RclTrajectoryGoal;
  private readonly motionGoals: RclMotionGoals;
  /** Pause, resume and the speed override. */
  private readonly rate: RclExecutionRate;
  /** The stop: the goals cancelled and the stack's stop service called together. */
  private readonly stopper: RclStop;
  /** The SRDF's named positions and the URDF, read from the stack once. */
  private readonly description: RclDescription;
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
    clock: Clock,
  ) {
    this.clock = clock;
    this.config = config;
    this.endpoints = config.endpoints;
    this.limits = config.limits;
    this.rcl = rcl;
    this.node = node;
    this.topicHub = new RclTopics(node, this.endpoints, definitions);
    const log = (line: string) => this.log(line);
    this.calls = new RclCalls(node, rcl, this.endpoints.timeouts.server_wait_s);
    this.goals = new RclGoals(this.calls, this.endpoints.timeouts, log, this.clock);
    this.description = new RclDescription(this.calls, this.endpoints, config.groupStates);
    const { joint_states, move_to_joints, move_to_pose } = this.endpoints.interfaces;
    this.jointStates = new RclJointStates(this.endpoints, this.clock, log, (msg) => this.topicHub.jointState(msg));
    this.jointStateCache = this.jointStates.cache;
    node.createSubscription(joint_states.type, joint_states.name, { enableTypedArray: true }, (raw) =>
      this.jointStates.receive(raw),
    );
    const { endpoints, limits, goals, jointStates } = this;
    // The publisher is made at start-up so the controller has matched it before the first trajectory.
    this.channel = new RclTrajectoryChannel({
      endpoints,
      limits,
      node,
      clock,
      jointStates,
      topicTrajectory: (hold) => goals.topicTrajectory(hold),
      rate: () => this.rate.value,
      log,
    });
    const channel = this.channel;
    // Action clients early too (discovery takes a moment); a type that is not installed shows as a 503 on use.
    this.calls.actionClient(move_to_joints);
    this.calls.actionClient(move_to_pose);
    this.notice = notice;
    this.trajectoryGoal = new RclTrajectoryGoal({
      endpoints,
      clock,
      goals,
      channel,
      jointStates,
      publishTrajectory: (msg) => this.publishTrajectory(msg),
    });
    const armActivity = () => this.armActivity();
    this.motionGoals = new RclMotionGoals({
      endpoints,
      goals,
      jointStates,
      scaled: (goal) => this.rate.scaled(goal),
      armActivity,
      groupStates: () => this.groupStates(),
      callTrigger: () => this.stopper.callTrigger(this.endpoints.timeouts.server_wait_s),
      log,
    });
    // When the envelope's TCP chain is not in the endpoints file's URDF (the stack's `tcp` link), start-up reads
    // the stack's robot_description and calls useSafety with the model it yields.
    const safety = safetyStateFor(config);
    this.jogger = this.createJogger(safety.ok ? ok(safety.value) : safety);
    const { trajectoryGoal, jogger } = this;
    this.stopper = new RclStop({ endpoints, calls: this.calls, goals, jogger, trajectoryGoal, log });
    this.rate = new RclExecutionRate({
      endpoints,
      goals,
      channel,
      trajectoryGoal,
      jointStates,
      jogger,
      armActivity,
      log,
    });
    if (safety.ok) this.useSafety(safety.value);
  }

  /** The jog's port on this context: the limits, the joint states, the controller's topic, the execution rate. */
  private createJogger(safety: Result<SafetyState, string>): RclJog {
    const jog = this.config.jog ?? { joint_speed: 0.25, tcp_speed: 0.25, tcp_angular_speed: 0.5 };
    const port = {
      limits: this.limits,
      jointNames: this.endpoints.joint_names,
      nowMs: () => this.nowMs(),
      after: (ms: number, fn: () => void) => this.clock.after(ms, fn),
      state: () => this.jointStates.fresh(),
      nextState: (timeoutMs: number) => this.jointStates.nextInOrder(timeoutMs),
      publish: (msg: JointTrajectoryMsg) => this.channel.publishJog(msg),
      rate: () => this.rate.value,
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
    this.motionGoals.guard = envelope
      ? createTargetGuard(safety.chain, envelope, this.endpoints.planning_frame)
      : undefined;
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
      const context = new RclContext(config, rcl, node, definitions, notice, options.clock ?? systemClock);
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

  nowMs(): number {
    return this.clock.nowMs();
  }

  latestJointState(): ReceivedJointState | undefined {
    return this.jointStates.latest;
  }

  nextJointState(timeoutMs: number): Promise<JointStateMsg | undefined> {
    return this.jointStates.next(timeoutMs);
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

  /** Through the stack's action server (lib/ros/rcl-motion-goals.ts). */
  moveToJoints(
    goal: MoveToJointsGoal,
    options: GoalOptions = {},
  ): Promise<Result<MotionResultMsg, InterfaceUnavailable>> {
    return this.motionGoals.moveToJoints(goal, options);
  }

  /** Through the stack's action server (lib/ros/rcl-motion-goals.ts). */
  moveToPose(goal: MoveToPoseGoal, options: GoalOptions = {}): Promise<Result<MotionResultMsg, InterfaceUnavailable>> {
    return this.motionGoals.moveToPose(goal, options);
  }

  /** Through the stack's MoveToNamedPose service (lib/ros/rcl-motion-goals.ts). */
  moveToNamed(
    request: MoveToNamedRequest,
    options: GoalOptions = {},
  ): Promise<Result<MotionResultMsg, InterfaceUnavailable>> {
    return this.motionGoals.moveToNamed(request, options);
  }

  /** Pause, resume and the speed override on the ros2 backend (issue 24; lib/ros/rcl-execution-rate.ts). */
  setExecutionRate(
    rate: number,
    options: ExecutionRateOptions = {},
  ): Promise<Result<ExecutionRateAnswer, InterfaceUnavailable>> {
    return this.rate.set(rate, options);
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
      guard: this.motionGoals.guard,
      latest: () => this.jointStates.latestInOrder(),
      groupStates: () => this.groupStates(),
    };
    return planWithMoveIt(deps, request, options.signal);
  }

  /** On the controller's topic (lib/ros/rcl-trajectory-channel.ts); it takes the controller from a jog. */
  async publishTrajectory(
    msg: JointTrajectoryMsg,
    options: PublishOptions = {},
  ): Promise<Result<void, InterfaceUnavailable>> {
    // A stop's hold point (or any trajectory) takes the controller from a jog: the jog streams nothing more.
    this.jogger.halt();
    return this.channel.publishTrajectory(msg, options);
  }

  /**
   * Inverse kinematics through MoveIt's GetPositionIK (`interfaces.compute_ik`): the pose of
   * `tcp_link` in frame_id (default the planning frame), seeded with `request.seed` or the latest
   * joint state, avoid_collisions as asked, MoveIt's own timeout timeouts.ik_s (the call waits
   * fk_s longer). MoveIt's error codes become success false with the reason.
   */
  solveIk(request: IkRequest, options: IkOptions = {}): Promise<Result<IkAnswer, InterfaceUnavailable>> {
    return solveIkOverRos(this.calls, this.endpoints, this.jointStates.latest, request, options);
  }

  /** Through the controller's FollowJointTrajectory action, followed in plan time (lib/ros/rcl-trajectory-goal.ts). */
  executeTrajectory(
    msg: JointTrajectoryMsg,
    options: TrajectoryWaitOptions = {},
  ): Promise<Result<TrajectoryOutcome, InterfaceUnavailable>> {
    return this.trajectoryGoal.execute(msg, options);
  }

  /**
   * Cancels the goals in flight and calls the stop service at once (lib/ros/rcl-stop.ts): the jog and a trajectory
   * goal's request end first.
   */
  callStop(options: StopCallOptions = {}): Promise<Result<TriggerResponse, InterfaceUnavailable>> {
    return this.stopper.callStop(options);
  }

  /** Jogs by streaming short trajectories on the controller's topic (lib/ros/rcl-jog.ts). */
  jog(request: JogRequest): Result<void, string> {
    const broken = this.channel.broken;
    if (broken) return err(broken);
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
    const motions = this.goals.motions;
    // A stop answers before the stack confirms its cancels: until then no new goal goes out (the cancel comes first).
    if (motions > 0 && motions === this.goals.stopping)
      return {
        kind: 'goal',
        detail: 'a stopped motion goal is being cancelled on the stack (not confirmed yet)',
        restInS: Math.max(0, this.channel.endsAtMs - this.nowMs()) / 1000,
      };
    if (motions > 0) return { kind: 'goal', detail: 'a motion goal is executing' };
    // A trajectory sent with wait is a trajectory, as on the simulator: a newer one preempts it.
    if (this.goals.size > 0) return { kind: 'trajectory', detail: 'a trajectory goal is executing' };
    if (this.channel.activePath()?.paused || this.trajectoryGoal.active()?.path.paused)
      return { kind: 'trajectory', detail: 'a paused trajectory holds its place on its path' };
    const leftMs = this.channel.endsAtMs - this.nowMs();
    if (leftMs > 0 && this.channel.holding)
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
