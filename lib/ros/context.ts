import type { SafetyState } from '../safety/store.ts';
import type { JogEndReason, JogLimit, JogStepGoal, JogTarget } from '../motion/jog.ts';
import type { JointLimits } from '../robot/limits.ts';
import type { GroupState } from '../robot/srdf.ts';
import type { Result } from '../result.ts';
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

/**
 * What can hold or move the arm: a move request, a published trajectory, a sequence runner, a goal of the stack,
 * the arm still decelerating to rest after a stop or a cancel, or a paused motion (nothing preempts these two).
 */
export type ArmActivityKind = 'move' | 'trajectory' | 'sequence' | 'goal' | 'stopping' | 'paused' | 'jog';

/** Something holding or moving the arm, and what it is, in words. */
export interface ArmActivity {
  readonly kind: ArmActivityKind;
  readonly detail: string;
  /** While stopping, or while a stopped goal's cancel is unconfirmed: the seconds until the arm is at rest (retry then). */
  readonly restInS?: number;
}

/** Why a call to a ROS interface did not produce an answer. */
export interface InterfaceUnavailable {
  readonly kind: 'unavailable';
  /** The ROS name of the interface (topic, service or action). */
  readonly iface: string;
  readonly message: string;
}

/** A topic and its ROS type (pkg/msg/Type). */
export interface TopicInfo {
  readonly name: string;
  readonly type: string;
  /**
   * What its publisher offers: `transient_local` keeps the last message for late subscribers
   * (/robot_description, /tf_static); default volatile.
   */
  readonly durability?: 'volatile' | 'transient_local';
}

/** A joint-state message with its receipt time on the context's monotonic clock. */
export interface ReceivedJointState {
  readonly msg: JointStateMsg;
  readonly receivedAtMs: number;
}

/** Options of an action goal: feedback ("planning", "executing") and cancellation. */
export interface GoalOptions {
  /**
   * The goal's feedback: planning, then executing; with executing, `durationS` is how long the
   * execution is expected to take (wall seconds), when the stack says (the simulator does).
   */
  readonly onFeedback?: (state: 'planning' | 'executing', durationS?: number) => void;
  readonly signal?: AbortSignal;
}

/** Options of {@link RobotContext.solveIk}. */
export interface IkOptions {
  /** Abandons the solve (the answer is success false with the abort reason). */
  readonly signal?: AbortSignal;
}

/** A motion to plan without moving (a dry run): a joint target, a pose target or a named position. */
export type MotionPlanRequest =
  | { readonly kind: 'joints'; readonly goal: MoveToJointsGoal }
  | { readonly kind: 'pose'; readonly goal: MoveToPoseGoal }
  | { readonly kind: 'named'; readonly request: MoveToNamedRequest };

/** A dry run's answer: the trajectory the motion would execute and its planner, or why there is none. */
export type MotionPlanAnswer =
  | { readonly success: false; readonly message: string }
  | {
      readonly success: true;
      readonly message: string;
      readonly planner: string;
      /** Exactly what the move would have sent to the controller (positions, velocities, accelerations). */
      readonly trajectory: JointTrajectoryMsg;
    };

/** Options of {@link RobotContext.executeTrajectory}. */
export interface TrajectoryWaitOptions {
  /**
   * Stops the trajectory: the controller decelerates within its limits and holds (ros2: the
   * FollowJointTrajectory goal is cancelled); the outcome is `stopped` with the abort reason.
   */
  readonly signal?: AbortSignal;
  /**
   * How long to wait for the controller's outcome (s, wall clock) before stopping the trajectory
   * and answering `timeout`; default the trajectory's duration (at the simulator's time scale)
   * plus timeouts.motion_s.
   */
  readonly timeoutS?: number;
}

/**
 * The robot as handlers see it, in ROS terms: the latest joint-state message, an FK service
 * call, the robot's semantic description. The simulator and the rclnodejs context both
 * implement it and serve the interface names of the endpoints file.
 */
/** What a change of the execution rate did. */
export interface ExecutionRateAnswer {
  /** A trajectory was executing (with rate 0: it came to rest on its path and holds there). */
  readonly executing: boolean;
  readonly message: string;
}

/** Options of {@link RobotContext.publishTrajectory}. */
export interface PublishOptions {
  /** A stop's hold point: goes out at once as it is (never re-timed by an override, never refused for it). */
  readonly hold?: boolean;
}

/** Options of {@link RobotContext.callStop}. */
export interface StopCallOptions {
  /** false: a stop service that is not there now is not waited for (the shutdown's stop). Default true. */
  readonly waitForServer?: boolean;
}

/** Options of {@link RobotContext.setExecutionRate}. */
export interface ExecutionRateOptions {
  /** Ends a pause's wait for the arm to rest. */
  readonly signal?: AbortSignal;
  /** What holds the arm as the app sees it (a sequence runner's goals may not go through the context). */
  readonly holder?: ArmActivity;
  /** The holder's goals were paused where they are sent (a ros2 sequence runner's own node): wait for the rest. */
  readonly pausedElsewhere?: boolean;
}

/** A jog command as the context takes it (lib/motion/jog.ts). */
export interface JogRequest {
  readonly target: JogTarget;
  /** How long it holds (wall seconds: the dead-man); ignored for a step. */
  readonly ttlS: number;
  /** A bounded step: it ends at rest after `amount`. */
  readonly goal?: JogStepGoal;
  /** Extends the jog in force: refused (nothing starts) when that jog has ended meanwhile (its command lapsed). */
  readonly continuing?: boolean;
}

/** What a jog does now. */
export interface JogStatus {
  /** A jog is in force (moving, braking, or held at rest by a command). */
  readonly jogging: boolean;
  /** The arm moves. */
  readonly moving: boolean;
  /** Joint positions (rad, J1..J7). */
  readonly positions: readonly number[];
  /** The limit holding the jog back, if any. */
  readonly limit: JogLimit | null;
}

/** A jog's moments: it started, the arm started moving or came to rest (still commanded), it ended (and why). */
export interface JogEvent {
  readonly state: 'started' | 'moving' | 'resting' | 'ended';
  readonly reason?: JogEndReason;
  /** Ended at a limit: which. */
  readonly limit?: JogLimit;
  readonly positions: readonly number[];
}

/** The joint-state port: what the backend keeps of its joint-state topic (lib/ros/joint-state-cache.ts). */
export interface JointStatePort {
  /** The latest message received and when; undefined before the first. */
  readonly latest: ReceivedJointState | undefined;
  /** The next message to arrive, or undefined when none comes within `timeoutMs`. */
  next(timeoutMs: number): Promise<JointStateMsg | undefined>;
  /** The joint state a read answers, in J1..J7 order: the latest if under 2 s old, else the next within 2 s. */
  current(): Promise<Result<JointStateMsg, InterfaceUnavailable>>;
}

export interface RobotContext {
  /** The endpoints file in force (interface names, planning group, frames, timeouts). */
  readonly endpoints: EndpointsFile;
  /** The active joint limits file. */
  readonly limits: JointLimits;
  /** The context's monotonic clock in milliseconds (receipt times use it). */
  nowMs(): number;
  /** The joint-state topic as the operations read it (the backend's cache of it). */
  readonly jointStateCache: JointStatePort;
  /** The latest joint-state message received, if any. */
  latestJointState(): ReceivedJointState | undefined;
  /** Resolves with the next joint-state message, or undefined after `timeoutMs`. */
  nextJointState(timeoutMs: number): Promise<JointStateMsg | undefined>;
  /** Calls the FK service (moveit_msgs/srv/GetPositionFK). */
  computeFk(request: GetPositionFkRequest): Promise<Result<GetPositionFkResponse, InterfaceUnavailable>>;
  /** The planning group's named states (SRDF group states), joints in J1..J7 order. */
  groupStates(): Promise<Result<readonly GroupState[], InterfaceUnavailable>>;
  /** Human-readable description of a named state. */
  describeState(name: string): string;
  /**
   * The URDF the stack itself publishes, when the context can read it (ros2: the
   * `robot_description` parameter of the node the SRDF comes from); absent: the endpoints file's
   * `robot_description` is the model (the simulator's).
   */
  robotDescription?(): Promise<Result<string, InterfaceUnavailable>>;
  /** ros2: holds the goals' targets to the envelope with this model (start-up calls it once the model is known). */
  useSafety?(safety: SafetyState): void;
  /** Sends a MoveToJoints goal and waits for its result (the context applies the motion timeout). */
  moveToJoints(goal: MoveToJointsGoal, options?: GoalOptions): Promise<Result<MotionResultMsg, InterfaceUnavailable>>;
  /** Sends a MoveToPose goal and waits for its result. */
  moveToPose(goal: MoveToPoseGoal, options?: GoalOptions): Promise<Result<MotionResultMsg, InterfaceUnavailable>>;
  /** Calls the MoveToNamedPose service and waits for its answer. */
  moveToNamed(
    request: MoveToNamedRequest,
    options?: GoalOptions,
  ): Promise<Result<MotionResultMsg, InterfaceUnavailable>>;
  /** Publishes a JointTrajectory on the controller topic (an empty one means stop and hold). */
  publishTrajectory(msg: JointTrajectoryMsg, options?: PublishOptions): Promise<Result<void, InterfaceUnavailable>>;
  /**
   * Inverse kinematics on request: joint angles (rad, J1..J7, within the joint limits) that put
   * the TCP (`endpoints.tcp_link`; the simulator adds `sim.tool_offset`) at the pose, starting
   * from `request.seed` (default: the arm's current state), free of collisions when
   * `collision_check`. A pose that is unreachable, reachable only beyond the joint limits or only
   * in collision is `success: false` with the reason. Bounded by timeouts.ik_s; never moves the
   * arm. Simulator: lib/kinematics/ik.ts in slices; ros2: MoveIt's GetPositionIK service
   * (`interfaces.compute_ik`). The error is only for an interface that did not answer.
   */
  solveIk(request: IkRequest, options?: IkOptions): Promise<Result<IkAnswer, InterfaceUnavailable>>;
  /**
   * Executes a joint trajectory and waits for the controller's outcome: `finished` (at its last
   * point), `refused` (not accepted: limits, joints, times, a jump), `stopped` (a stop, a hold, a
   * cancel or `options.signal`), `preempted` (a newer trajectory or motion replaced it) or
   * `timeout` (no outcome within the wait, the trajectory then stopped; ros2 also: the controller
   * did not reach the goal within its goal time tolerance), with a message and the seconds from
   * sending to the outcome. Simulator: the simulated controller's events; ros2: the controller's
   * FollowJointTrajectory action (`interfaces.follow_joint_trajectory`). The error is only for an
   * interface that is not there. Without wait, use {@link publishTrajectory}.
   */
  executeTrajectory(
    msg: JointTrajectoryMsg,
    options?: TrajectoryWaitOptions,
  ): Promise<Result<TrajectoryOutcome, InterfaceUnavailable>>;
  /**
   * Plans a motion as the move would (limits, collisions, the safety envelope) without moving.
   * Simulator: its own planners; ros2: MoveIt's plan-only service (`interfaces.plan_kinematic_path`),
   * the target and the returned trajectory held to the envelope. Optional: a context without it
   * answers a dry run with success false saying so.
   */
  planMotion?(
    request: MotionPlanRequest,
    options?: { readonly signal?: AbortSignal },
  ): Promise<Result<MotionPlanAnswer, InterfaceUnavailable>>;
  /**
   * Time-scales the execution of the motion in progress and of every later one: `rate` 0 pauses
   * (the arm decelerates along its path to rest and holds there; the answer comes when it rests),
   * 0 < rate <= 1 runs at that fraction of the planned speed (resume, speed override); the change
   * stays within the acceleration limits and the path is unchanged. Simulator: the controller's
   * path rate (lib/planning/time-scaling.ts). Optional: a context without it cannot pause.
   */
  setExecutionRate?(
    rate: number,
    options?: ExecutionRateOptions,
  ): Promise<Result<ExecutionRateAnswer, InterfaceUnavailable>>;
  /**
   * Calls the planner's stop service (std_srvs/Trigger): cancels the active motion goals. `waitForServer` false (the
   * shutdown's stop): a stop service that is not there now is not waited for (goals in flight are cancelled all the same).
   */
  callStop(options?: StopCallOptions): Promise<Result<TriggerResponse, InterfaceUnavailable>>;
  /**
   * Jogs the arm (lib/motion/jog.ts), or extends the jog in force: the error says why the controller refused it (it
   * executes a trajectory, it brakes after a stop). Optional: a context without it cannot jog (ros2 streams trajectories
   * on the controller's topic: lib/ros/rcl-jog.ts).
   */
  jog?(request: JogRequest): Result<void, string>;
  /** Brakes the jog in force to rest and ends it with `reason`. */
  releaseJog?(reason: JogEndReason): void;
  /** What the jog does now. */
  jogStatus?(): JogStatus;
  /** Subscribes to the jog's moments; returns the unsubscribe. */
  onJogEvents?(listener: (event: JogEvent) => void): () => void;
  /** What moves the arm now through this context (a goal in flight, a trajectory executing), if anything. */
  armActivity(): ArmActivity | undefined;
  /** Topics the context can record: name and ROS type. */
  topics(): readonly TopicInfo[];
  /**
   * Subscribes to a topic's messages (plain objects shaped as the .msg); returns the unsubscribe. A
   * transient-local topic delivers its last message to the new subscriber at once.
   */
  subscribe(topic: string, listener: (msg: unknown) => void): () => void;
  /** Subscribes to the controller's own account of what it does (for the trajectory log). */
  onControllerLog(listener: (line: string) => void): () => void;
  /** Releases timers, nodes and processes. */
  close(): Promise<void>;
}
