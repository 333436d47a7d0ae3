/**
 * The jog engine: moving the arm by hand, as a pendant does. Given the arm's state and the jog command in force, it
 * works out the next commanded state at every control period: joint velocities as fractions of the jog speed, or a
 * TCP twist (linear m/s, angular rad/s, in the base or the tool frame) through the Jacobian. Pure: no clock (the
 * caller passes its time), no I/O; the caller's drive follows the state it commands.
 *
 * What it holds to, every period:
 * - acceleration: joints ramp up and brake within their acceleration limits (a Cartesian jog at 0.8 of them, the
 *   rest kept for the Jacobian's own change);
 * - joint limits: a joint brakes to stop at its position limit, never beyond (the drive's braking curve);
 * - a Cartesian jog keeps the TCP on its line and its orientation (closed loop on a reference pose integrated from the
 *   commanded twist), slows where the Jacobian's smallest singular value falls (moving toward a singularity) and stops
 *   before {@link SINGULAR_STOP};
 * - the safety envelope and the collision model: before a period speeds the arm up or keeps its speed, the place the
 *   arm would stop if it braked right after is checked (joint limits, workspace, keep-out boxes, self and floor
 *   collisions, singularity); where it fails, the arm brakes now, and the status says why;
 * - the dead-man: a command holds until its time (`untilS`); then, as on an all-zero command, the arm brakes to rest.
 * `rate` (0..1) scales the speed: the override, 0 while paused.
 */
import type { Chain } from '../kinematics/chain.ts';
import { createFkWorkspace, type FkWorkspace, forwardKinematics, poseError } from '../kinematics/fk.ts';
import { dampedPinvApply, minSingularValue6 } from '../kinematics/linalg.ts';
import type { JointSample } from '../planning/trajectory.ts';
import type { JointLimits } from '../robot/limits.ts';
import { StopPointGuard } from './jog-guard.ts';
import { advanceAlongTwist, brakingBound, capNorm, rampToward, sameTarget, stopPointAtJointLimit } from './jog-math.ts';
import type {
  JogEndReason,
  JogGuards,
  JogLimit,
  JogSpeeds,
  JogStepGoal,
  JogStepReport,
  JogTarget,
} from './jog-types.ts';
import {
  CARTESIAN_ACC_SHARE,
  CARTESIAN_VEL_SHARE,
  DAMPING2_MAX,
  GOAL_TOLERANCE,
  JOINT_ACC_SHARE,
  POSE_GAIN,
  PULL_RATE_RAD_S,
  PULL_SPEED_MS,
  REST_SPEED,
  SINGULAR_SLOW,
  SINGULAR_STOP,
} from './jog-tuning.ts';

export type * from './jog-types.ts';
export { SINGULAR_SLOW, SINGULAR_STOP } from './jog-tuning.ts';

interface Command {
  readonly target: JogTarget;
  /** Sim time the command lapses at (the dead-man); Infinity for a step. */
  untilS: number;
  readonly goal: JogStepGoal | undefined;
  /** All fractions 0: brake and end. */
  readonly zero: boolean;
}

/** One control period as the joint and Cartesian steps see it: live false brakes to rest; rate is the override, 0..1. */
interface Period {
  readonly goal: JogStepGoal | undefined;
  readonly live: boolean;
  readonly rate: number;
  readonly state: JointSample;
  readonly dtS: number;
}

/** The jog engine of one arm (see the module comment). */
export class JogEngine {
  private readonly chain: Chain;
  private readonly limits: JointLimits;
  private readonly guards: JogGuards;
  private readonly speeds: JogSpeeds;
  private readonly n: number;
  private readonly ws: FkWorkspace;
  private readonly probe: FkWorkspace;
  private readonly work = new Float64Array(72);
  private readonly pinvWork = new Float64Array(42);
  private command: Command | undefined;
  /** The reason the jog ends with once at rest (set when the command lapses or is released). */
  private ending: JogEndReason | undefined;
  /** Cartesian: speed along the twist (0..rate) and the reference pose the TCP is held to. */
  private s = 0;
  private readonly refPos = new Float64Array(3);
  private readonly refRot = new Float64Array(9);
  private readonly anchorRot = new Float64Array(9);
  private hasRef = false;
  /** Cartesian step: how far the reference has come (m or rad). */
  private progress = 0;
  private lastLimit: JogLimit | undefined;
  /** The last limit that held the command in force back (what a jog that ends at a limit reports). */
  private heldBy: JogLimit | undefined;
  private readonly twist = new Float64Array(6);
  private readonly w: Float64Array;
  private readonly qdNext: Float64Array;
  private readonly qNext: Float64Array;
  private readonly qStop: Float64Array;
  private readonly stopGuard: StopPointGuard;
  private readonly err = new Float64Array(6);
  private readonly corr: Float64Array;

  constructor(chain: Chain, limits: JointLimits, speeds: JogSpeeds, guards: JogGuards = {}) {
    this.chain = chain;
    this.limits = limits;
    this.speeds = speeds;
    this.guards = guards;
    this.n = limits.jointNames.length;
    this.ws = createFkWorkspace(chain);
    this.probe = createFkWorkspace(chain);
    this.w = new Float64Array(this.n);
    this.qdNext = new Float64Array(this.n);
    this.qNext = new Float64Array(this.n);
    this.qStop = new Float64Array(this.n);
    this.corr = new Float64Array(this.n);
    this.stopGuard = new StopPointGuard(guards, limits);
    this.zeros = new Float64Array(this.n);
  }

  /** True while a command is in force or the arm brakes after one. */
  active(): boolean {
    return this.command !== undefined;
  }

  /** The limit that held the jog back in the last period. */
  limit(): JogLimit | undefined {
    return this.lastLimit;
  }

  /**
   * Takes a command at `q` (the arm's position now), in force until `untilS` (sim seconds; Infinity for a step with
   * `goal`). The same target again only extends it (the TCP's line and reference stay); another target starts from
   * the pose the arm has now, at the speed it has.
   */
  take(target: JogTarget, untilS: number, q: ArrayLike<number>, goal?: JogStepGoal): void {
    const zero =
      target.kind === 'joints'
        ? target.fractions.every((f) => f === 0)
        : target.linear.every((f) => f === 0) && target.angular.every((f) => f === 0);
    if (zero) {
      this.release('released');
      return;
    }
    const same = this.command !== undefined && !this.command.goal && !goal && sameTarget(this.command.target, target);
    if (same && this.command) {
      this.command.untilS = untilS;
      this.ending = undefined;
      return;
    }
    this.command = { target, untilS, goal, zero: false };
    this.ending = undefined;
    this.heldBy = undefined;
    this.progress = 0;
    if (target.kind === 'cartesian') {
      forwardKinematics(this.chain, q, this.ws);
      this.refPos.set(this.ws.tipPos);
      this.refRot.set(this.ws.tipRot);
      this.anchorRot.set(this.ws.tipRot);
      this.hasRef = true;
    } else if (target.kind === 'joints') {
      this.hasRef = false;
      this.s = 0;
    }
  }

  /** Brakes to rest and ends with `reason` (a released button, a socket closed). */
  release(reason: JogEndReason): void {
    if (!this.command) return;
    this.command = { ...this.command, zero: true };
    this.ending ??= reason;
  }

  /** Forgets the jog at once (a stop took over the arm: its own braking follows). */
  reset(): void {
    this.command = undefined;
    this.ending = undefined;
    this.s = 0;
    this.hasRef = false;
    this.lastLimit = undefined;
    this.heldBy = undefined;
    this.stopGuard.reset();
  }

  /**
   * One control period of `dtS` at sim time `nowS`, speed scaled by `rate` (0..1): writes the commanded state for the
   * end of the period into `out` (positions, velocities, accelerations) from the arm's `state`.
   */
  step(state: JointSample, nowS: number, dtS: number, rate: number, out: JointSample): JogStepReport {
    const command = this.command;
    out.q.set(state.q);
    out.qd.fill(0);
    out.qdd.fill(0);
    if (!command) return { moving: false, limit: undefined, ended: undefined };
    if (!command.zero && nowS > command.untilS) {
      command.untilS = Number.NEGATIVE_INFINITY;
      this.ending ??= this.lastLimit ? 'limit' : 'ttl';
    }
    const live = !command.zero && nowS <= command.untilS;
    const r = Math.min(1, Math.max(0, Number.isFinite(rate) ? rate : 0));
    const period: Period = { goal: command.goal, live, rate: r, state, dtS };
    const limit =
      command.target.kind === 'joints'
        ? this.jointStep(command.target, period)
        : this.cartesianStep(command.target, period);
    this.lastLimit = live ? limit : undefined;
    if (live && limit) this.heldBy = limit;
    let moving = false;
    let settled = true;
    for (let j = 0; j < this.n; j++) {
      const v = this.qdNext[j] as number;
      if (v !== 0) moving = true;
      if (Math.abs(v) > REST_SPEED) settled = false;
    }
    const atRest = settled && this.atRest(state);
    // At rest for good: the last crumbs of speed (the pose loop's) go to zero in this period.
    const finishing = !live && atRest;
    for (let j = 0; j < this.n; j++) {
      const v = finishing ? 0 : (this.qdNext[j] as number);
      const from = state.qd[j] ?? 0;
      out.qd[j] = v;
      out.q[j] = finishing ? (state.q[j] ?? 0) + (from / 2) * dtS : (this.qNext[j] as number);
      out.qdd[j] = (v - from) / dtS;
    }
    // A step ends at its goal, or at rest against a limit (an agent cannot push on).
    if (live && command.goal && atRest && (limit || this.goalReached(command, state))) {
      command.untilS = Number.NEGATIVE_INFINITY;
      this.ending = limit ? 'limit' : 'released';
    }
    if (finishing) {
      const ended = this.ending ?? 'released';
      const heldBy = ended === 'limit' ? this.heldBy : limit;
      this.reset();
      return { moving: false, limit: heldBy, ended };
    }
    return { moving, limit, ended: undefined };
  }

  private atRest(state: JointSample): boolean {
    for (let j = 0; j < this.n; j++) if (Math.abs(state.qd[j] ?? 0) > REST_SPEED) return false;
    return true;
  }

  private goalReached(command: Command, state: JointSample): boolean {
    const goal = command.goal;
    if (!goal) return false;
    if (command.target.kind === 'joints') return this.jointGoalLeft(state) === 0;
    if (this.progress < goal.amount - GOAL_TOLERANCE || !this.atRest(state)) return false;
    forwardKinematics(this.chain, state.q, this.ws);
    poseError(this.err, this.ws.tipPos, this.ws.tipRot, this.refPos, this.refRot);
    return Math.hypot(this.err[0] ?? 0, this.err[1] ?? 0, this.err[2] ?? 0) < GOAL_TOLERANCE && this.rotErr() < 1e-4;
  }

  private rotErr(): number {
    return Math.hypot(this.err[3] ?? 0, this.err[4] ?? 0, this.err[5] ?? 0);
  }

  /** Joint step: 0 once every joint is within the tolerance of its goal, else the largest distance. */
  private jointGoalLeft(state: JointSample): number {
    const goals = this.jointGoals;
    let left = 0;
    for (let j = 0; j < this.n; j++) {
      const g = goals?.[j];
      if (g === undefined) continue;
      const d = Math.abs(g - (state.q[j] ?? 0));
      if (d > GOAL_TOLERANCE) left = Math.max(left, d);
    }
    return left;
  }

  /** The goal positions of a joint step (set at its first period). */
  private jointGoals: (number | undefined)[] | undefined;
  private jointGoalsOf: Command | undefined;

  private jointStep(target: Extract<JogTarget, { kind: 'joints' }>, period: Period): JogLimit | undefined {
    const { goal, live, rate, state, dtS } = period;
    const { maxVelRadS, maxAccRadS2, minRad, maxRad } = this.limits;
    const n = this.n;
    if (goal && this.jointGoalsOf !== this.command) {
      this.jointGoalsOf = this.command;
      this.jointGoals = target.fractions.map((f, j) =>
        f === 0 ? undefined : (state.q[j] ?? 0) + Math.sign(f) * goal.amount,
      );
    }
    let limit: JogLimit | undefined;
    const u = this.w;
    for (let j = 0; j < n; j++) {
      const f = target.fractions[j] ?? 0;
      const q = state.q[j] ?? 0;
      const v = state.qd[j] ?? 0;
      const acc = (maxAccRadS2[j] ?? 0) * JOINT_ACC_SHARE;
      let want = live ? f * this.speeds.jointSpeed * (maxVelRadS[j] ?? 0) * rate : 0;
      // The braking curve to the position limit the joint moves toward (and to a step's goal).
      const hi = maxRad[j] ?? 0;
      const lo = minRad[j] ?? 0;
      const upCap = brakingBound(hi - q, v, acc, dtS);
      const downCap = brakingBound(q - lo, -v, acc, dtS);
      if (want > upCap || want < -downCap) {
        if (live && f !== 0)
          limit = {
            kind: 'joint_limit',
            detail: `${this.limits.jointNames[j]} is at its ${want > 0 ? 'upper' : 'lower'} position limit`,
          };
        want = Math.min(upCap, Math.max(-downCap, want));
      }
      const g = goal ? this.jointGoals?.[j] : undefined;
      if (live && g !== undefined) {
        const d = g - q;
        const cap = brakingBound(Math.abs(d), Math.sign(d) * v, acc, dtS);
        want = Math.abs(d) <= GOAL_TOLERANCE / 2 ? 0 : Math.sign(d) * Math.min(Math.abs(want), cap);
      }
      u[j] = want;
    }
    rampToward(this.limits, state, u, JOINT_ACC_SHARE, dtS, this.qdNext, this.qNext);
    // Where the arm would stop braking right after this period: inside the envelope and free of collisions.
    if (this.guards.envelope || this.guards.collision) {
      let tStop = 0;
      for (let j = 0; j < n; j++)
        tStop = Math.max(tStop, Math.abs(this.qdNext[j] ?? 0) / ((maxAccRadS2[j] ?? 1) * JOINT_ACC_SHARE));
      for (let j = 0; j < n; j++) this.qStop[j] = (this.qNext[j] ?? 0) + (this.qdNext[j] ?? 0) * (tStop / 2 + dtS);
      const unsafe = this.moving() ? this.stopGuard.check(this.qStop, this.qNext, this.qdNext, dtS) : undefined;
      if (unsafe) {
        u.fill(0);
        rampToward(this.limits, state, u, JOINT_ACC_SHARE, dtS, this.qdNext, this.qNext);
        return unsafe;
      }
    }
    return limit;
  }

  private moving(): boolean {
    for (let j = 0; j < this.n; j++) if (this.qdNext[j] !== 0) return true;
    return false;
  }

  private cartesianStep(target: Extract<JogTarget, { kind: 'cartesian' }>, period: Period): JogLimit | undefined {
    const { goal, live, rate, state, dtS } = period;
    const n = this.n;
    const { maxVelRadS, maxAccRadS2 } = this.limits;
    if (!this.hasRef) {
      forwardKinematics(this.chain, state.q, this.ws);
      this.refPos.set(this.ws.tipPos);
      this.refRot.set(this.ws.tipRot);
      this.anchorRot.set(this.ws.tipRot);
      this.hasRef = true;
    }
    // The full-speed twist in the base frame (a tool-frame jog along the tool's axes where the jog began).
    const frame = target.frame === 'tool' ? this.anchorRot : undefined;
    const lin = this.speeds.tcpSpeedMS;
    const ang = this.speeds.tcpAngularSpeedRadS;
    for (let a = 0; a < 3; a++) {
      let l = 0;
      let w = 0;
      for (let b = 0; b < 3; b++) {
        const m = frame ? (frame[3 * a + b] ?? 0) : a === b ? 1 : 0;
        l += m * (target.linear[b] ?? 0);
        w += m * (target.angular[b] ?? 0);
      }
      this.twist[a] = l * lin;
      this.twist[3 + a] = w * ang;
    }
    // A step's speed along its one axis at s = 1 (m/s or rad/s).
    const axisSpeed = Math.hypot(...this.twist);
    forwardKinematics(this.chain, state.q, this.ws, true);
    const sigma = minSingularValue6(this.ws.jacobian, n, this.work);
    this.damping = sigma >= SINGULAR_SLOW ? 0 : DAMPING2_MAX * (1 - (sigma / SINGULAR_SLOW) ** 2);
    dampedPinvApply(this.ws.jacobian, n, this.twist, this.damping, this.w, this.pinvWork);
    let wMax = 0;
    let alpha = Number.POSITIVE_INFINITY;
    let sCap = rate;
    for (let j = 0; j < n; j++) {
      const wj = Math.abs(this.w[j] ?? 0);
      wMax = Math.max(wMax, wj);
      if (wj > 0) {
        alpha = Math.min(alpha, ((maxAccRadS2[j] ?? 0) * CARTESIAN_ACC_SHARE) / wj);
        sCap = Math.min(sCap, ((maxVelRadS[j] ?? 0) * CARTESIAN_VEL_SHARE) / wj);
      }
    }
    if (!Number.isFinite(alpha)) alpha = 1e6;
    let limit: JogLimit | undefined;
    // Near a singularity, and moving toward it: slower the nearer, at rest before SINGULAR_STOP.
    if (sigma < SINGULAR_SLOW && wMax > 0) {
      const h = 0.02 / wMax;
      for (let j = 0; j < n; j++) this.qStop[j] = (state.q[j] ?? 0) + (this.w[j] ?? 0) * h;
      forwardKinematics(this.chain, this.qStop, this.probe, true);
      const ahead = minSingularValue6(this.probe.jacobian, n, this.work);
      if (ahead < sigma) {
        const scale = Math.max(0, Math.min(1, (sigma - SINGULAR_STOP) / (SINGULAR_SLOW - SINGULAR_STOP)));
        sCap = Math.min(sCap, rate * scale);
        if (live)
          limit = { kind: 'singularity', detail: 'the arm is near a singularity: the jog slows and stops before it' };
      }
    }
    let want = live ? sCap : 0;
    if (live && goal && axisSpeed > 0) {
      const left = Math.max(0, goal.amount - this.progress) / axisSpeed;
      want = Math.min(want, brakingBound(left, this.s, alpha, dtS));
    }
    const sNow = this.s;
    let sNext = this.plan(sNow, want, alpha, dtS, state, goal ? axisSpeed : 0);
    const unsafe = sNext > 0 || this.moving() ? this.cartesianGuard(sNext, alpha, state, dtS) : undefined;
    if (unsafe) {
      sNext = this.plan(sNow, 0, alpha, dtS, state, goal ? axisSpeed : 0);
      limit = unsafe;
    }
    // Held before a singularity: the reference is where the arm is (the damped solution lags it; pulling the arm onto
    // it would creep into the singularity).
    if (limit?.kind === 'singularity' && sNow === 0 && sNext === 0) {
      this.scratchPos.set(this.ws.tipPos);
      this.scratchRot.set(this.ws.tipRot);
      rampToward(this.limits, state, this.zeros, 1, dtS, this.qdNext, this.qNext);
    }
    this.commit(sNext, dtS, goal ? axisSpeed : 0);
    return limit;
  }

  /** The speed after the period toward `want`, and the commanded joint state for it (qNext, qdNext). */
  private plan(sNow: number, want: number, alpha: number, dtS: number, state: JointSample, axisSpeed: number): number {
    let sNext = want > sNow ? Math.min(want, sNow + alpha * dtS) : Math.max(want, sNow - alpha * dtS);
    // A step's reference ends exactly at its goal.
    const goal = this.command?.goal;
    if (goal && axisSpeed > 0) {
      const left = Math.max(0, goal.amount - this.progress) / axisSpeed;
      if (((sNow + sNext) / 2) * dtS >= left) sNext = Math.max(0, Math.min(sNext, (2 * left) / dtS - sNow));
    }
    // The reference pose at the end of the period; the TCP is pulled onto it.
    advanceAlongTwist(
      this.twist,
      this.rotStep,
      this.refPos,
      this.refRot,
      ((sNow + sNext) / 2) * dtS,
      this.scratchPos,
      this.scratchRot,
    );
    poseError(this.err, this.ws.tipPos, this.ws.tipRot, this.scratchPos, this.scratchRot);
    // Feedback on the error left at the end of the period: error / dt would be a dead-beat; POSE_GAIN damps it.
    const gain = Math.min(POSE_GAIN, 1 / dtS);
    for (let i = 0; i < 6; i++) this.corrTwist[i] = sNext * (this.twist[i] ?? 0) + gain * (this.err[i] ?? 0);
    // The TCP never moves or turns faster than the jog asks (the pull back onto the line and the orientation included).
    capNorm(
      this.corrTwist,
      0,
      sNext * Math.hypot(this.twist[0] ?? 0, this.twist[1] ?? 0, this.twist[2] ?? 0),
      PULL_SPEED_MS,
    );
    capNorm(
      this.corrTwist,
      3,
      sNext * Math.hypot(this.twist[3] ?? 0, this.twist[4] ?? 0, this.twist[5] ?? 0),
      PULL_RATE_RAD_S,
    );
    dampedPinvApply(this.ws.jacobian, this.n, this.corrTwist, this.damping, this.corr, this.pinvWork);
    rampToward(this.limits, state, this.corr, 1, dtS, this.qdNext, this.qNext);
    return sNext;
  }

  /** The damping of the least squares at the current period (0 away from singularities). */
  private damping = 0;

  private readonly scratchPos = new Float64Array(3);
  private readonly scratchRot = new Float64Array(9);
  private readonly corrTwist = new Float64Array(6);
  private readonly zeros: Float64Array;
  private readonly rotStep = new Float64Array(9);

  /** Takes the planned period: the speed and the reference move on. */
  private commit(sNext: number, dtS: number, axisSpeed: number): void {
    const travelled = ((this.s + sNext) / 2) * dtS;
    this.refPos.set(this.scratchPos);
    this.refRot.set(this.scratchRot);
    this.progress = Math.min(
      this.command?.goal?.amount ?? Number.POSITIVE_INFINITY,
      this.progress + travelled * axisSpeed,
    );
    this.s = sNext;
  }

  /** Why braking right after a period at speed `sNext` would not stop the arm in a safe place, if it would not. */
  private cartesianGuard(sNext: number, alpha: number, state: JointSample, dtS: number): JogLimit | undefined {
    const n = this.n;
    // Braking at alpha takes sNext / alpha; the arm covers half of its speed times that.
    const tStop = sNext / alpha;
    for (let j = 0; j < n; j++) this.qStop[j] = (this.qNext[j] ?? 0) + (this.qdNext[j] ?? 0) * (tStop / 2 + dtS);
    const atLimit = stopPointAtJointLimit(this.limits, this.qStop, this.qdNext, state.qd);
    if (atLimit) return atLimit;
    forwardKinematics(this.chain, this.qStop, this.probe, true);
    if (minSingularValue6(this.probe.jacobian, n, this.work) < SINGULAR_STOP && sNext > 0)
      return { kind: 'singularity', detail: 'the arm would come too near a singularity: the jog stops before it' };
    return this.stopGuard.check(this.qStop, this.qNext, this.qdNext, dtS);
  }
}
