import { chainFromUrdf, withToolOffset } from '../kinematics/chain.ts';
import { matFromAbc } from '../kinematics/rotation.ts';
import type { JointLimits } from '../robot/limits.ts';
import type { GroupState } from '../robot/srdf.ts';
import type {
  ArmActivity,
  ExecutionRateAnswer,
  GoalOptions,
  IkOptions,
  InterfaceUnavailable,
  JogEvent,
  JogRequest,
  JogStatus,
  ReceivedJointState,
  RobotContext,
  TopicInfo,
  TrajectoryWaitOptions,
} from '../ros/context.ts';
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
} from '../ros/messages.ts';
import type { JointTrajectory } from '../planning/trajectory.ts';
import { err, ok, type Result } from '../result.ts';
import type { Config } from '../settings/load.ts';
import { jointStateMsg } from './arm.ts';
import { type Clock, systemClock, type Timer } from '../clock.ts';
import { type ControllerEvent, TrajectoryController } from './controller.ts';
import { describeControllerEvent } from './controller-log.ts';
import { JointStateCache } from '../ros/joint-state-cache.ts';
import { jogCollision, sceneOf } from './scene.ts';
import { ProgressDeadline } from './deadline.ts';
import { SimDriver } from './driver.ts';
import { changeExecutionRate, type RatePorts } from './execution-rate.ts';
import { SimFkService } from './fk-service.ts';
import { SimIkService } from './ik-service.ts';
import { ArmModel } from './model.ts';
import { SimMotionServer } from './motion.ts';
import { ROBOT_STATE_TOPICS, RobotStateMessages } from './robot-state.ts';
import { executeOnController, type ExecutionPorts } from './trajectory-execution.ts';
import { trajectoryMsg } from './trajectory-msg.ts';
import { createEnvelopeChecker, envelopeFromSettings } from '../safety/envelope.ts';
import { JogEngine, type JogEndReason } from '../motion/jog.ts';
import type { MotionPlanAnswer, MotionPlanRequest } from '../ros/context.ts';
import { timeFromMs } from '../ros/messages.ts';

/** The settings the simulated stack needs, taken from the loaded configuration (`safety`: the envelope, when set). */
export type SimConfig = Pick<Config, 'endpoints' | 'limits' | 'robotDescriptionXml' | 'groupStates' | 'sim' | 'robot'> &
  Partial<Pick<Config, 'safety' | 'jog'>>;

/** The jog speeds when the configuration has none (armgate.jog's defaults). */
const DEFAULT_JOG = { joint_speed: 0.25, tcp_speed: 0.25, tcp_angular_speed: 0.5, ttl_ms: 200 };

const DEFAULT_DESCRIPTION = 'Named position of the planning group, defined in the robot description (SRDF).';

/**
 * The embedded simulated stack: a MuJoCo model of the iiwa 7 (FK service, efforts), a joint
 * trajectory controller, the motion action servers and the stop service, serving the interface
 * names of the endpoints file. A real implementation of the context, not a mock: tests use it as
 * they would a robot.
 */
export class SimContext implements RobotContext {
  readonly endpoints: EndpointsFile;
  readonly limits: JointLimits;
  private readonly model: ArmModel;
  private readonly clock: Clock;
  private readonly config: SimConfig;
  private readonly states: readonly GroupState[];
  private readonly toolPos: Float64Array;
  private readonly toolRot: Float64Array;
  private readonly controller: TrajectoryController;
  private readonly driver: SimDriver;
  private readonly motion: SimMotionServer;
  private readonly ik: SimIkService;
  private readonly listeners = new Set<(event: ControllerEvent) => void>();
  private readonly subscribers = new Map<string, Set<(msg: unknown) => void>>();
  /** The last message of each transient-local topic, given to every new subscriber. */
  private readonly latched = new Map<string, unknown>();
  private readonly robotState: RobotStateMessages;
  private readonly goalsInFlight = new Set<AbortController>();
  private readonly deadlines = new Set<ProgressDeadline>();
  /** Ends of the pauses still waiting for the arm to come to rest. */
  private readonly pauseWaits = new Set<() => void>();
  readonly jointStateCache: JointStateCache;
  /** The last joint state's stamp (ms since the epoch): stamps never go back. */
  private lastStampMs = 0;
  private publishTimer: Timer | undefined;
  private readonly fk: SimFkService;
  /** What the execution rate and a trajectory's execution reach of this context. */
  private readonly ports: RatePorts & ExecutionPorts;
  private readonly effort: Float64Array;

  private constructor(config: SimConfig, model: ArmModel, clock: Clock, driveClock: Clock) {
    this.config = config;
    this.endpoints = config.endpoints;
    this.limits = config.limits;
    this.model = model;
    this.clock = clock;
    this.jointStateCache = new JointStateCache(clock, config.endpoints);
    this.states = config.groupStates ?? [];
    this.effort = new Float64Array(config.limits.jointNames.length);
    const initial = config.sim.initial_position;
    const initialRad = typeof initial === 'string' ? this.states.find((s) => s.name === initial)?.jointsRad : initial;
    if (!initialRad) throw new Error(`sim.initial_position '${String(initial)}' is not a named position`);
    const t = config.sim.tool_offset;
    this.toolPos = Float64Array.from([t.x, t.y, t.z]);
    this.toolRot = matFromAbc(new Float64Array(9), t.a, t.b, t.c);
    const chain = chainFromUrdf(
      config.robotDescriptionXml,
      config.endpoints.planning_frame,
      config.endpoints.tcp_link,
      config.endpoints.joint_names,
    );
    if (!chain.ok) throw new Error(`robot description: ${chain.error}`);
    this.controller = new TrajectoryController(config.limits, initialRad, (event) => this.onControllerEvent(event));
    this.driver = new SimDriver(driveClock, config.sim.time_scale, config.sim.controller_rate_hz, (nowS, dtS) => {
      this.controller.update(nowS, dtS);
      return this.controller.needsUpdates();
    });
    const tcpChain = withToolOffset(chain.value, this.toolPos, this.toolRot);
    this.ik = new SimIkService(tcpChain, config.limits, model, () => clock.nowMs());
    const envelope = config.safety ? envelopeFromSettings(config.safety) : undefined;
    this.robotState = new RobotStateMessages(config.robotDescriptionXml);
    this.motion = new SimMotionServer(tcpChain, config.limits, this.controller, this.driver, this.states, model, {
      planningFrame: config.endpoints.planning_frame,
      planningTimeS: config.sim.planning_time_s,
      motionTimeoutS: config.endpoints.timeouts.motion_s,
      timeScale: config.sim.time_scale,
      // What a goal hands to the controller goes out on its trajectory topic, as a command would arrive.
      onExecute: (trajectory) => this.deliver(this.endpoints.interfaces.trajectory.name, trajectoryMsg(trajectory)),
      ...(envelope ? { envelope: createEnvelopeChecker(tcpChain, envelope) } : {}),
    });
    // The jog engine: the same envelope as the planned motions, and the collision model (self, floor, obstacles).
    const jog = config.jog ?? DEFAULT_JOG;
    this.controller.useJogEngine(
      new JogEngine(
        tcpChain,
        config.limits,
        { jointSpeed: jog.joint_speed, tcpSpeedMS: jog.tcp_speed, tcpAngularSpeedRadS: jog.tcp_angular_speed },
        {
          ...(envelope ? { envelope: createEnvelopeChecker(tcpChain, envelope) } : {}),
          collision: jogCollision(model),
        },
      ),
    );
    this.fk = new SimFkService(model, config.endpoints, this.toolPos, this.toolRot);
    this.ports = {
      controller: this.controller,
      driver: this.driver,
      deadlines: this.deadlines,
      pauseWaits: this.pauseWaits,
      timeScale: config.sim.time_scale,
      motionTimeoutS: config.endpoints.timeouts.motion_s,
      nowMs: () => clock.nowMs(),
      onControllerEvents: (listener) => this.onControllerEvents(listener),
      deadline: (budgetS, onExpire) => this.deadline(budgetS, onExpire),
      deliverTrajectory: (msg) => this.deliver(this.endpoints.interfaces.trajectory.name, msg),
      publishTrajectory: (msg) => this.publishTrajectory(msg),
    };
    const contact = model.collisionAt(initialRad);
    if (contact) throw new Error(`sim.initial_position is in collision (${contact.a} with ${contact.b})`);
  }

  /**
   * Loads the model and starts the joint-state publisher (unless `sim.publish_joint_states` is false).
   * `clock`: the time the context runs on (its timers, timeouts, stamps); `driveClock`: the time the simulated
   * drive runs on, the same unless a test slows it to stall the arm (a drive slower than planned).
   */
  static async create(config: SimConfig, clock: Clock = systemClock, driveClock: Clock = clock): Promise<SimContext> {
    const scene = sceneOf(config);
    const model = await ArmModel.load(config.robotDescriptionXml, config.endpoints.joint_names, scene);
    const context = new SimContext(config, model, clock, driveClock);
    context.start();
    return context;
  }

  private start(): void {
    // robot_state_publisher's latched topics: the description and the fixed joints, once.
    this.latched.set(ROBOT_STATE_TOPICS.robot_description.name, this.robotState.description);
    this.latched.set(ROBOT_STATE_TOPICS.tf_static.name, this.robotState.tfStatic(timeFromMs(this.clock.epochMs())));
    if (!this.config.sim.publish_joint_states) return;
    const periodMs = 1000 / this.config.sim.joint_state_rate_hz;
    this.publishJointState();
    this.publishTimer = this.clock.every(periodMs, () => this.publishJointState());
  }

  /** Publishes the joint state; from the timer it first runs the controller updates due (`catchUp`). */
  private publishJointState(catchUp = true): void {
    if (catchUp && this.controller.isMoving()) this.driver.tick();
    // Stamped when its state was current (the last controller update), as a driver stamps what it read.
    const stampMs = Math.max(this.lastStampMs, this.clock.epochMs() - this.driver.stateAgeMs());
    this.lastStampMs = stampMs;
    const msg = jointStateMsg(this.model, this.controller.state, stampMs, this.effort);
    this.jointStateCache.put(msg);
    this.deliver(this.endpoints.interfaces.joint_states.name, msg);
    if (this.subscribers.get(ROBOT_STATE_TOPICS.tf.name)?.size)
      this.deliver(ROBOT_STATE_TOPICS.tf.name, this.robotState.tf(msg));
  }

  private onControllerEvent(event: ControllerEvent): void {
    // The arm came to rest: publish at once, so a read right after a motion's result shows the goal.
    // So too when a paused trajectory rests on its path, or a jog (the pause answers then). Inside an update: no catch-up.
    const rested =
      event.kind === 'hold' || event.kind === 'paused' || (event.kind === 'jog' && event.state === 'resting');
    if (rested && this.publishTimer) this.publishJointState(false);
    this.motion.onControllerEvent(event);
    for (const listener of this.listeners) listener(event);
  }

  /** Subscribes to what the simulated controller does (accepted, refused, finished, ...). */
  onControllerEvents(listener: (event: ControllerEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  nowMs(): number {
    return this.clock.nowMs();
  }

  latestJointState(): ReceivedJointState | undefined {
    return this.jointStateCache.latest;
  }

  nextJointState(timeoutMs: number): Promise<JointStateMsg | undefined> {
    return this.jointStateCache.next(timeoutMs);
  }

  async computeFk(request: GetPositionFkRequest): Promise<Result<GetPositionFkResponse, InterfaceUnavailable>> {
    return this.fk.compute(request, this.controller.state.q);
  }

  async groupStates(): Promise<Result<readonly GroupState[], InterfaceUnavailable>> {
    return ok(this.states);
  }

  describeState(name: string): string {
    return this.config.robot.positionDescriptions[name] ?? DEFAULT_DESCRIPTION;
  }

  /**
   * A motion timeout of `budgetS` that counts execution progress (lib/sim/deadline.ts): spent at the
   * rate the trajectory runs at (0 while paused), at 1 before it executes.
   */
  private deadline(budgetS: number, onExpire: () => void): { cancel(): void } {
    const deadline: ProgressDeadline = new ProgressDeadline(
      budgetS,
      () => this.controller.currentRate(),
      () => this.controller.rateTargetNow() >= 1 && this.controller.currentRate() >= 1,
      () => {
        this.deadlines.delete(deadline);
        onExpire();
      },
      // The context's clock (wall time in production), as the timeouts are: a simulation's time_scale may run slower.
      this.clock,
    );
    this.deadlines.add(deadline);
    return {
      cancel: () => {
        this.deadlines.delete(deadline);
        deadline.cancel();
      },
    };
  }

  /**
   * Time-scales the execution (lib/sim/execution-rate.ts): the trajectory in progress and every later one run at
   * `rate` (0..1) of their planned speed; 0 pauses (the answer comes when the arm rests).
   */
  setExecutionRate(
    rate: number,
    options: { readonly signal?: AbortSignal } = {},
  ): Promise<Result<ExecutionRateAnswer, InterfaceUnavailable>> {
    return changeExecutionRate(this.ports, rate, options);
  }

  /** Runs a goal with the motion timeout and makes it cancellable by the stop service. */
  private async runGoal(
    options: GoalOptions,
    run: (signal: AbortSignal) => Promise<MotionResultMsg>,
  ): Promise<Result<MotionResultMsg, InterfaceUnavailable>> {
    const abort = new AbortController();
    const timeoutS = this.endpoints.timeouts.motion_s;
    // Counts execution progress: a paused goal does not time out, one under an override gets its share more.
    const timer = this.deadline(timeoutS, () => abort.abort(`timed out after ${timeoutS} s: the motion was cancelled`));
    const forward = () => abort.abort(options.signal?.reason ?? 'cancelled');
    // A lease revoked before the goal starts (a call cancelled before it began) cancels it at once.
    if (options.signal?.aborted) forward();
    else options.signal?.addEventListener('abort', forward, { once: true });
    this.goalsInFlight.add(abort);
    try {
      return ok(await run(abort.signal));
    } finally {
      timer.cancel();
      options.signal?.removeEventListener('abort', forward);
      this.goalsInFlight.delete(abort);
    }
  }

  moveToJoints(
    goal: MoveToJointsGoal,
    options: GoalOptions = {},
  ): Promise<Result<MotionResultMsg, InterfaceUnavailable>> {
    return this.runGoal(options, (signal) =>
      this.motion.moveToJoints(goal, { signal, ...(options.onFeedback ? { onFeedback: options.onFeedback } : {}) }),
    );
  }

  moveToPose(goal: MoveToPoseGoal, options: GoalOptions = {}): Promise<Result<MotionResultMsg, InterfaceUnavailable>> {
    return this.runGoal(options, (signal) =>
      this.motion.moveToPose(goal, { signal, ...(options.onFeedback ? { onFeedback: options.onFeedback } : {}) }),
    );
  }

  moveToNamed(
    request: MoveToNamedRequest,
    options: GoalOptions = {},
  ): Promise<Result<MotionResultMsg, InterfaceUnavailable>> {
    return this.runGoal(options, (signal) =>
      this.motion.moveToNamed(request, { signal, ...(options.onFeedback ? { onFeedback: options.onFeedback } : {}) }),
    );
  }

  /** The joint states, the controller's trajectory topic, and what robot_state_publisher would offer. */
  topics(): readonly TopicInfo[] {
    const { joint_states, trajectory } = this.endpoints.interfaces;
    const { robot_description, tf_static, tf } = ROBOT_STATE_TOPICS;
    return [
      { name: joint_states.name, type: joint_states.type },
      { name: trajectory.name, type: trajectory.type },
      robot_description,
      tf_static,
      tf,
    ];
  }

  subscribe(topic: string, listener: (msg: unknown) => void): () => void {
    const set = this.subscribers.get(topic) ?? new Set();
    set.add(listener);
    this.subscribers.set(topic, set);
    if (this.latched.has(topic)) listener(this.latched.get(topic));
    return () => set.delete(listener);
  }

  private deliver(topic: string, msg: unknown): void {
    for (const listener of this.subscribers.get(topic) ?? []) listener(msg);
  }

  /**
   * Plans a motion exactly as the move would (limits, collisions, the safety envelope) and answers
   * the trajectory it would execute, without moving (a dry run). Cancelled by `options.signal`.
   */
  async planMotion(
    request: MotionPlanRequest,
    options: { readonly signal?: AbortSignal } = {},
  ): Promise<Result<MotionPlanAnswer, InterfaceUnavailable>> {
    const planned = await this.motion.plan(request, options.signal);
    if (!planned.ok) return ok({ success: false, message: planned.error });
    const { trajectory, planner } = planned.value;
    return ok({ success: true, message: `planned with ${planner}`, planner, trajectory: trajectoryMsg(trajectory) });
  }

  /** Plans a pose goal from the current state without moving (benchmarks and diagnostics). */
  planPoseGoal(goal: MoveToPoseGoal): Promise<Result<JointTrajectory, string>> {
    return this.motion.planPoseGoal(goal);
  }

  async publishTrajectory(msg: JointTrajectoryMsg): Promise<Result<void, InterfaceUnavailable>> {
    this.deliver(this.endpoints.interfaces.trajectory.name, msg);
    // An empty trajectory is the controller's "stop and hold here".
    if (msg.points.length === 0) this.motion.cancelActive();
    // Checked in slices (a 100,000-point trajectory does not hold the event loop); a later command supersedes it.
    else if ((await this.controller.followMessage(msg, () => this.driver.nowS())).ok) this.driver.wake();
    return ok(undefined);
  }

  /**
   * Inverse kinematics of the TCP (tcp_link plus sim.tool_offset) from the seed or the current
   * state, within timeouts.ik_s, in slices (lib/sim/ik-service.ts); never moves the arm.
   */
  async solveIk(request: IkRequest, options: IkOptions = {}): Promise<Result<IkAnswer, InterfaceUnavailable>> {
    const frame = request.frame_id ?? '';
    const planning = this.endpoints.planning_frame;
    if (frame !== '' && frame !== planning)
      return ok({
        success: false,
        message: `unknown frame '${frame}': the simulator knows its planning frame '${planning}' only`,
      });
    const { x, y, z, a, b, c } = request;
    if (![x, y, z, a, b, c].every(Number.isFinite))
      return ok({ success: false, message: 'the pose needs finite x, y, z (m) and a, b, c (rad)' });
    const n = this.limits.jointNames.length;
    const seed = request.seed ?? Array.from(this.controller.state.q);
    if (seed.length !== n || !seed.every(Number.isFinite))
      return ok({ success: false, message: `the seed needs ${n} finite joint angles (rad), got ${seed.length}` });
    const rotation = matFromAbc(new Float64Array(9), a, b, c);
    const budgetMs = this.endpoints.timeouts.ik_s * 1000;
    return ok(
      await this.ik.solve({ positionM: [x, y, z], rotation }, seed, request.collision_check, budgetMs, options.signal),
    );
  }

  /** Executes a trajectory on the simulated controller and answers with its outcome (lib/sim/trajectory-execution.ts). */
  executeTrajectory(
    msg: JointTrajectoryMsg,
    options: TrajectoryWaitOptions = {},
  ): Promise<Result<TrajectoryOutcome, InterfaceUnavailable>> {
    return executeOnController(this.ports, msg, options);
  }

  async callStop(): Promise<Result<TriggerResponse, InterfaceUnavailable>> {
    const cancelled = this.goalsInFlight.size;
    for (const goal of this.goalsInFlight) goal.abort('stopped');
    this.motion.cancelActive();
    return ok({
      success: true,
      message: cancelled > 0 ? `cancelled ${cancelled} motion goal(s)` : 'no motion goal was active',
    });
  }

  jog(request: JogRequest): Result<void, string> {
    // The periods due so far run with the command in force until now.
    if (this.controller.isMoving()) this.driver.tick();
    // The jog this command was to extend ended meanwhile (it lapsed in the periods just run): nothing starts here.
    if (request.continuing && !this.controller.isJogging()) return err('the jog in force ended before this command');
    const untilS = request.goal
      ? Number.POSITIVE_INFINITY
      : this.driver.nowS() + request.ttlS * this.config.sim.time_scale;
    const taken = this.controller.jog(request.target, untilS, request.goal);
    if (taken.ok) this.driver.wake();
    return taken;
  }

  releaseJog(reason: JogEndReason): void {
    this.controller.releaseJog(reason);
  }

  jogStatus(): JogStatus {
    const limit = this.controller.jogLimit();
    return {
      jogging: this.controller.isJogging(),
      moving: this.controller.state.qd.some((v) => v !== 0),
      positions: Array.from(this.controller.state.q),
      limit: limit ?? null,
    };
  }

  onJogEvents(listener: (event: JogEvent) => void): () => void {
    return this.onControllerEvents((event) => {
      if (event.kind === 'jog')
        listener({
          state: event.state,
          positions: event.positions,
          ...(event.reason ? { reason: event.reason } : {}),
          ...(event.limit ? { limit: event.limit } : {}),
        });
    });
  }

  armActivity(): ArmActivity | undefined {
    // First: a stopped goal stays in flight until the arm is at rest, and the time left is what a client needs.
    const restS = this.controller.timeToRestS();
    if (restS !== undefined)
      return {
        kind: 'stopping',
        detail: 'the arm is still decelerating to rest after a stop or a cancel',
        restInS: restS / this.config.sim.time_scale,
      };
    if (this.controller.isJogging()) return { kind: 'jog', detail: 'the arm is being jogged' };
    if (this.goalsInFlight.size > 0) return { kind: 'goal', detail: 'a motion goal is executing' };
    if (this.controller.isMoving())
      return { kind: 'trajectory', detail: 'the joint trajectory controller is executing a trajectory' };
    return undefined;
  }

  onControllerLog(listener: (line: string) => void): () => void {
    return this.onControllerEvents((event) => listener(describeControllerEvent(event)));
  }

  async close(): Promise<void> {
    for (const goal of this.goalsInFlight) goal.abort('the server is shutting down');
    this.motion.shutdown();
    this.publishTimer?.cancel();
    this.publishTimer = undefined;
    this.driver.sleep();
    this.model.dispose();
  }
}
