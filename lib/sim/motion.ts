import type { Chain } from '../kinematics/chain.ts';
import { matFromAbc } from '../kinematics/rotation.ts';
import { tcpPose } from '../planning/cartesian.ts';
import type { MotionScales } from '../planning/limits.ts';
import type { CircAux } from '../planning/paths.ts';
import { type PlanCollisions, type PlanEnv, plannerFor } from '../planning/planners.ts';
import { planPtp, ptpDurationS } from '../planning/ptp.ts';
import type { JointTrajectory } from '../planning/trajectory.ts';
import { createSample, sampleTrajectory, trajectoryDuration } from '../planning/trajectory.ts';
import { describeLimitViolation, findLimitViolation, type JointLimits } from '../robot/limits.ts';
import type { GroupState } from '../robot/srdf.ts';
import type { MotionResultMsg, MoveToJointsGoal, MoveToNamedRequest, MoveToPoseGoal } from '../ros/messages.ts';
import { err, ok, type Result } from '../result.ts';
import type { ControllerEvent, TrajectoryController } from './controller.ts';
import type { SimDriver } from './driver.ts';
import { runSliced, sliceCheckpoint } from './sliced.ts';
import type { EnvelopeChecker } from '../safety/envelope.ts';

/** What the planners need of the collision model. */
export type CollisionChecker = PlanCollisions;

/** Planning settings of the simulator. */
export interface SimPlanningOptions {
  readonly planningFrame: string;
  /** Budget of a sampling or optimizing planner (s). */
  readonly planningTimeS: number;
  /** The motion timeout (wall s): a motion planned to take longer fails before it is sampled. */
  readonly motionTimeoutS: number;
  /** Simulated seconds per wall second (sim.time_scale): a motion of d sim seconds takes d / timeScale wall seconds. */
  readonly timeScale: number;
  /** The safety envelope every planned motion is held to (checked along the path; ompl plans around it). */
  readonly envelope?: EnvelopeChecker;
  /** Called with each trajectory a goal hands to the controller (the simulator publishes it on the trajectory topic). */
  readonly onExecute?: (trajectory: JointTrajectory) => void;
}

/** A motion to plan: a joint target, a pose target or a named position. */
export type SimPlanRequest =
  | { readonly kind: 'joints'; readonly goal: MoveToJointsGoal }
  | { readonly kind: 'pose'; readonly goal: MoveToPoseGoal }
  | { readonly kind: 'named'; readonly request: MoveToNamedRequest };

/** The collision model with the envelope in front: a configuration outside it counts as a contact with its zone. */
function withEnvelope(collisions: CollisionChecker, envelope: EnvelopeChecker | undefined): CollisionChecker {
  if (!envelope) return collisions;
  return {
    collisionAt(qRad) {
      const violation = envelope.check(qRad);
      if (violation)
        return {
          a: violation.link,
          b: violation.kind === 'workspace' ? 'the workspace boundary' : `the keep-out zone '${violation.zone}'`,
          distM: 0,
        };
      return collisions.collisionAt(qRad);
    },
    obstacleCost: (qRad, epsilonM, gradOut) => collisions.obstacleCost(qRad, epsilonM, gradOut),
  };
}

/** Feedback and cancellation of one goal, as an action client would give them. */
export interface GoalHandlers {
  readonly onFeedback?: (state: 'planning' | 'executing', durationS?: number) => void;
  /** Aborting cancels the goal; the reason becomes the result message. */
  readonly signal?: AbortSignal;
}

/** How close (rad) the joint state must come to the goal for success. */
export const GOAL_TOLERANCE_RAD = 1e-3;
const now = () => performance.now();

const fail = (message: string): MotionResultMsg => ({ success: false, message });
const seconds = (s: number) => (Number.isFinite(s) ? s.toPrecision(3) : 'more than 1e308');

interface Waiting {
  readonly id: number;
  readonly resolve: (outcome: 'finished' | 'cancelled' | 'preempted') => void;
}

/**
 * The simulator's motion action servers (move_to_joints, move_to_pose, move_to_named): plan
 * with the requested planner, execute on the trajectory controller, and answer when the joint
 * state is at the goal, or when the goal is cancelled.
 */
export class SimMotionServer {
  private readonly chain: Chain;
  private readonly limits: JointLimits;
  private readonly controller: TrajectoryController;
  private readonly driver: SimDriver;
  private readonly states: readonly GroupState[];
  /** The collision model as it is: the path check tests the envelope itself, with its own message. */
  private readonly model: CollisionChecker;
  /** The collision model with the envelope's zones as contacts, for the planners that plan around them. */
  private readonly collisions: CollisionChecker;
  private readonly options: SimPlanningOptions;
  private waiting: Waiting | undefined;
  /** Set by shutdown: the MuJoCo model is freed after it, so nothing may look at it any more. */
  private closed = false;

  constructor(
    chain: Chain,
    limits: JointLimits,
    controller: TrajectoryController,
    driver: SimDriver,
    states: readonly GroupState[],
    collisions: CollisionChecker,
    options: SimPlanningOptions,
  ) {
    this.chain = chain;
    this.limits = limits;
    this.controller = controller;
    this.driver = driver;
    this.states = states;
    this.model = collisions;
    this.collisions = withEnvelope(collisions, options.envelope);
    this.options = options;
  }

  /** Controller events reach waiting goals through here. */
  onControllerEvent(event: ControllerEvent): void {
    const w = this.waiting;
    if (!w) return;
    if (event.kind === 'finished' && event.id === w.id) w.resolve('finished');
    if (event.kind === 'preempted' && event.id === w.id) w.resolve('preempted');
    if (event.kind === 'hold' && this.controller.activeId() !== w.id) w.resolve('cancelled');
  }

  async moveToJoints(goal: MoveToJointsGoal, handlers: GoalHandlers = {}): Promise<MotionResultMsg> {
    handlers.onFeedback?.('planning');
    const checked = await this.planJoints(goal);
    if (!checked.ok) return fail(checked.error);
    return this.execute(checked.value, goal.joints, handlers);
  }

  /** Plans a MoveToJoints goal (PTP) from the current state and checks it, without moving. */
  private async planJoints(goal: MoveToJointsGoal): Promise<Result<JointTrajectory, string>> {
    const bad = this.outsideLimits(goal.joints);
    if (bad) return err(bad);
    const planned = this.ptp(this.currentQ(), goal.joints, { speed: goal.speed, accelScale: goal.accel_scale ?? 0 });
    if (!planned.ok) return planned;
    return this.collisionFree('ptp', planned.value);
  }

  /**
   * Plans a motion from the current state exactly as the move would (limits, collisions, the
   * envelope), without moving: the trajectory the move would have executed and its planner.
   */
  async plan(
    request: SimPlanRequest,
    signal?: AbortSignal,
  ): Promise<Result<{ trajectory: JointTrajectory; planner: string }, string>> {
    if (request.kind === 'joints') {
      const planned = await this.planJoints(request.goal);
      return planned.ok ? ok({ trajectory: planned.value, planner: 'ptp' }) : planned;
    }
    if (request.kind === 'named') {
      const planned = await this.planNamed(request.request);
      return planned.ok ? ok({ trajectory: planned.value.trajectory, planner: 'ptp' }) : planned;
    }
    const planned = await this.planPoseGoal(request.goal, signal);
    if (!planned.ok) return err(signal?.aborted ? reasonOf(signal) : planned.error);
    return ok({ trajectory: planned.value, planner: request.goal.planner.toLowerCase() });
  }

  /** A PTP trajectory, or why not: one longer than the motion timeout fails before it is sampled. */
  private ptp(
    start: readonly number[],
    target: readonly number[],
    scales: MotionScales,
  ): Result<JointTrajectory, string> {
    const durationS = ptpDurationS(start, target, this.limits, scales) / this.options.timeScale;
    const timeoutS = this.options.motionTimeoutS;
    if (!(durationS <= timeoutS)) return err(this.tooLong(durationS, scales));
    return ok(planPtp(start, target, this.limits, scales));
  }

  /** Why a motion of `durationS` wall seconds is refused. */
  private tooLong(durationS: number, scales: MotionScales): string {
    const accel = scales.accelScale > 0;
    const at = `speed ${scales.speed}${accel ? `, accel_scale ${scales.accelScale}` : ''}`;
    return `the motion would take ${seconds(durationS)} s at ${at}, longer than the motion timeout (${this.options.motionTimeoutS} s); raise the speed${accel ? ' or accel_scale' : ''}`;
  }

  async moveToNamed(request: MoveToNamedRequest, handlers: GoalHandlers = {}): Promise<MotionResultMsg> {
    handlers.onFeedback?.('planning');
    const planned = await this.planNamed(request);
    if (!planned.ok) return fail(planned.error);
    return this.execute(planned.value.trajectory, planned.value.target, handlers);
  }

  /** Plans a MoveToNamedPose request (PTP) and checks it, without moving. */
  private async planNamed(
    request: MoveToNamedRequest,
  ): Promise<Result<{ trajectory: JointTrajectory; target: number[] }, string>> {
    const state = this.states.find((s) => s.name === request.name);
    if (!state)
      return err(`unknown named position '${request.name}' (known: ${this.states.map((s) => s.name).join(', ')})`);
    const target = [...state.jointsRad];
    const bad = this.outsideLimits(target);
    if (bad) return err(`named position '${request.name}': ${bad}`);
    const planned = this.ptp(this.currentQ(), target, { speed: request.speed, accelScale: request.accel_scale });
    if (!planned.ok) return planned;
    const checked = await this.collisionFree('ptp', planned.value);
    return checked.ok ? ok({ trajectory: checked.value, target }) : checked;
  }

  async moveToPose(goal: MoveToPoseGoal, handlers: GoalHandlers = {}): Promise<MotionResultMsg> {
    handlers.onFeedback?.('planning');
    const checked = await this.planPoseGoal(goal, handlers.signal);
    if (!checked.ok) return fail(handlers.signal?.aborted ? reasonOf(handlers.signal) : checked.error);
    const last = checked.value.points.at(-1)?.positions ?? this.currentQ();
    return this.execute(checked.value, last, handlers);
  }

  /** Plans a MoveToPose goal from the current state and checks it for collisions, without moving. */
  async planPoseGoal(goal: MoveToPoseGoal, signal?: AbortSignal): Promise<Result<JointTrajectory, string>> {
    const frame = this.options.planningFrame;
    if (goal.frame_id !== '' && goal.frame_id !== frame)
      return err(`unknown frame '${goal.frame_id}' (known: '' or '${frame}')`);
    const planned = await this.planPose(goal, signal);
    if (!planned.ok) return planned;
    const durationS = trajectoryDuration(planned.value) / this.options.timeScale;
    if (durationS > this.options.motionTimeoutS)
      return err(this.tooLong(durationS, { speed: goal.speed, accelScale: 0 }));
    return this.collisionFree(goal.planner.toLowerCase(), planned.value);
  }

  /** The trajectory when every sample (and the goal) is free of collisions, or where it collides; checked in slices. */
  private async collisionFree(planner: string, trajectory: JointTrajectory): Promise<Result<JointTrajectory, string>> {
    // The model is freed when the server shuts down: a plan that finishes after that checks nothing and moves nothing.
    if (this.closed) return err(SHUT_DOWN);
    const goal = trajectory.points.at(-1)?.positions ?? [];
    const envelope = this.options.envelope;
    const outside = envelope?.check(goal);
    if (outside) return err(`the target is outside the safety envelope: ${outside.message}; nothing moved`);
    const atGoal = this.model.collisionAt(goal);
    if (atGoal) return err(`the target is in collision (${atGoal.a} with ${atGoal.b}); choose another target`);
    const duration = trajectoryDuration(trajectory);
    const sample = createSample(this.limits.jointNames.length);
    const steps = Math.max(1, Math.ceil(duration / 0.01));
    const checkpoint = sliceCheckpoint(now);
    for (let k = 0; k <= steps; k++) {
      await checkpoint();
      if (this.closed) return err(SHUT_DOWN);
      sampleTrajectory(trajectory, (duration * k) / steps, sample);
      const leaves = envelope?.check(sample.q);
      if (leaves)
        return err(
          `the ${planner} path would leave the safety envelope ${Math.round((100 * k) / steps)} % along it: ${leaves.message}; nothing moved`,
        );
      const contact = this.model.collisionAt(sample.q);
      if (contact) {
        const hint =
          planner === 'ompl' || planner === 'chomp' ? '' : '; try planner ompl, which plans around obstacles';
        const tcp = tcpPose(this.chain, sample.q)
          .position.map((v) => v.toFixed(3))
          .join(', ');
        return err(
          `the ${planner} path would collide (${contact.a} with ${contact.b}) ${Math.round((100 * k) / steps)} % along it, with the TCP at (${tcp}) m${hint}`,
        );
      }
    }
    return ok(trajectory);
  }

  /** Plans a pose goal with the planner its name picks from the table (lib/planning/planners.ts), in slices. */
  private async planPose(
    goal: MoveToPoseGoal,
    signal: AbortSignal | undefined,
  ): Promise<Result<JointTrajectory, string>> {
    const planner = plannerFor(goal.planner);
    if (!planner.ok) return planner;
    const scales: MotionScales = { speed: goal.speed, accelScale: 0 };
    const circ: CircAux | undefined = goal.circ_center
      ? { center: [goal.circ_center.x, goal.circ_center.y, goal.circ_center.z] }
      : goal.circ_interim
        ? { interim: [goal.circ_interim.x, goal.circ_interim.y, goal.circ_interim.z] }
        : undefined;
    const request = {
      startRad: this.currentQ(),
      position: [goal.x, goal.y, goal.z],
      rotation: matFromAbc(new Float64Array(9), goal.a, goal.b, goal.c),
      abc: [goal.a, goal.b, goal.c] as const,
      scales,
      ...(circ ? { circ } : {}),
    };
    const env: PlanEnv = {
      chain: this.chain,
      limits: this.limits,
      collisions: this.collisions,
      planningTimeS: this.options.planningTimeS,
      maxDurationS: this.options.motionTimeoutS * this.options.timeScale,
      nowMs: now,
      random: Math.random,
    };
    const planned = await runSliced(planner.value(request, env), now, signal);
    if (!planned.ok) return planned;
    if (planned.value.ok) return planned.value;
    const failure = planned.value.error;
    if (failure.kind === 'too_long') return err(this.tooLong(failure.durationS / this.options.timeScale, scales));
    return err(failure.message);
  }

  /** Ends a waiting goal at once (the simulator is closing and will not tick again). */
  shutdown(): void {
    this.closed = true;
    this.waiting?.resolve('cancelled');
  }

  /** Cancels the goal in progress, if any (the controller decelerates and holds). */
  cancelActive(): void {
    this.controller.cancel();
    this.driver.wake();
  }

  private async execute(
    trajectory: JointTrajectory,
    goalRad: readonly number[],
    handlers: GoalHandlers,
  ): Promise<MotionResultMsg> {
    const signal = handlers.signal;
    if (signal?.aborted) return fail(reasonOf(signal));
    handlers.onFeedback?.('executing', trajectoryDuration(trajectory) / this.options.timeScale);
    if (trajectoryDuration(trajectory) === 0) {
      const q = this.currentQ();
      const offset = Math.max(...goalRad.map((g, i) => Math.abs(g - (q[i] ?? 0))));
      if (offset <= GOAL_TOLERANCE_RAD && !this.controller.isMoving())
        return { success: true, message: 'already at the goal' };
    }
    const accepted = this.controller.follow(trajectory, this.driver.nowS());
    if (!accepted.ok) return fail(`the controller refused the trajectory: ${accepted.error}`);
    this.options.onExecute?.(trajectory);
    this.driver.wake();
    const outcome = await new Promise<'finished' | 'cancelled' | 'preempted'>((resolve) => {
      const previous = this.waiting;
      this.waiting = { id: accepted.value, resolve };
      previous?.resolve('preempted');
      signal?.addEventListener('abort', () => this.cancelActive(), { once: true });
    });
    if (this.waiting?.id === accepted.value) this.waiting = undefined;
    if (outcome === 'preempted') return fail('preempted by a newer goal');
    if (outcome === 'cancelled') return fail(signal?.aborted ? reasonOf(signal) : 'cancelled');
    const q = this.currentQ();
    const offset = Math.max(...goalRad.map((g, i) => Math.abs(g - (q[i] ?? 0))));
    if (offset > GOAL_TOLERANCE_RAD) return fail(`the arm stopped ${offset.toFixed(4)} rad from the goal`);
    return { success: true, message: 'motion finished at the goal' };
  }

  private currentQ(): number[] {
    return Array.from(this.controller.state.q);
  }

  private outsideLimits(q: readonly number[]): string | undefined {
    const violation = findLimitViolation(this.limits, q);
    return violation && describeLimitViolation(violation);
  }
}

/** What a plan still being checked when the server shuts down answers. */
const SHUT_DOWN = 'the server is shutting down; nothing moved';

function reasonOf(signal: AbortSignal): string {
  return typeof signal.reason === 'string' ? signal.reason : 'cancelled';
}
