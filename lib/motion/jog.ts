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
import type { EnvelopeChecker } from '../safety/envelope.ts';

/** The jog speeds (armgate.jog). */
export interface JogSpeeds {
  /** Fraction of each joint's velocity limit at input 1. */
  readonly jointSpeed: number;
  /** TCP speed at input 1 (m/s). */
  readonly tcpSpeedMS: number;
  /** TCP angular speed at input 1 (rad/s). */
  readonly tcpAngularSpeedRadS: number;
}

/** What a jog asks: joint velocity fractions, or a TCP twist as fractions (each in [-1, 1]). */
export type JogTarget =
  | { readonly kind: 'joints'; readonly fractions: readonly number[] }
  | {
      readonly kind: 'cartesian';
      readonly linear: readonly number[];
      readonly angular: readonly number[];
      readonly frame: 'base' | 'tool';
    };

/**
 * A bounded step (the MCP tool): move by `amount` (rad of the one joint, or m / rad along the one Cartesian axis of
 * the target) and end at rest there, or at a limit.
 */
export interface JogStepGoal {
  readonly amount: number;
}

/** Why a jog cannot go on as asked. */
export type JogLimitKind = 'joint_limit' | 'workspace' | 'keep_out' | 'singularity' | 'collision';

/** A limit in force: its kind and a sentence. */
export interface JogLimit {
  readonly kind: JogLimitKind;
  readonly detail: string;
}

/** Why a jog ended (at rest). */
export type JogEndReason = 'released' | 'ttl' | 'socket closed' | 'stop' | 'limit';

/** What the engine checks beside the joint limits. */
export interface JogGuards {
  /** The safety envelope on the TCP chain. */
  readonly envelope?: EnvelopeChecker;
  /** The collision model: the limit when `qRad` is in contact (self, floor, an obstacle, a keep-out box), else undefined. */
  readonly collision?: (qRad: ArrayLike<number>) => JogLimit | undefined;
}

/** What one period did. */
export interface JogStepReport {
  /** Some joint moves after the period. */
  readonly moving: boolean;
  /** The limit that held the jog back in this period, if any. */
  readonly limit: JogLimit | undefined;
  /** Set once, in the period the jog came to rest for good: why it ended. */
  readonly ended: JogEndReason | undefined;
}

/** Smallest singular value of the Jacobian below which a Cartesian jog toward a singularity slows down. */
export const SINGULAR_SLOW = 0.06;
/** Smallest singular value a Cartesian jog never goes below (it stops before). */
export const SINGULAR_STOP = 0.02;
/** Largest damping (squared) of the least squares near a singularity. */
const DAMPING2_MAX = 0.002;
/** Share of each joint's acceleration limit a joint jog ramps and brakes with (the drive takes the exact command). */
const JOINT_ACC_SHARE = 0.9;
/** Share of the acceleration limits the Cartesian speed ramps with; the rest is for the Jacobian's change. */
const CARTESIAN_ACC_SHARE = 0.8;
/** Share of each joint's velocity limit a Cartesian jog may ask of it. */
const CARTESIAN_VEL_SHARE = 0.5;
/** Gain (1/s) pulling the TCP back to its reference pose (line and orientation). */
const POSE_GAIN = 20;
/** The TCP speed (m/s) the pull back onto the reference may always use (a step's last fraction of a millimetre). */
const PULL_SPEED_MS = 0.01;
/** Distance (rad) a Cartesian jog keeps from the joint limits where it stops. */
const JOINT_MARGIN_RAD = 0.01;
/** A step goal is reached within this (rad or m), with the pose error below it too. */
const GOAL_TOLERANCE = 2e-5;
/** The collision model is asked every this many periods (a check costs ~0.2 ms), about the stop point that much later. */
const COLLISION_EVERY = 5;
/** Joint speed (rad/s) counted as at rest at the end of a jog. */
const REST_SPEED = 1e-4;

/**
 * Largest velocity toward a limit `distance` away after one period of `dtS` that still allows a stop before it at
 * `acc` (trapezoid integration of the period and of the braking after it).
 */
function brakingBound(distance: number, v: number, acc: number, dtS: number): number {
  const radicand = acc * acc * dtS * dtS + 8 * acc * (distance - (v * dtS) / 2);
  return Math.max(0, (-acc * dtS + Math.sqrt(Math.max(0, radicand))) / 2);
}

interface Command {
  readonly target: JogTarget;
  /** Sim time the command lapses at (the dead-man); Infinity for a step. */
  untilS: number;
  readonly goal: JogStepGoal | undefined;
  /** All fractions 0: brake and end. */
  readonly zero: boolean;
}

/** The jog engine of one arm (see the module comment). */
export class JogEngine {
  private readonly chain: Chain;
  private readonly limits: JointLimits;
  private readonly guards: JogGuards;
  private speeds: JogSpeeds;
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
  private readonly qFar: Float64Array;
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
    this.qFar = new Float64Array(this.n);
    this.zeros = new Float64Array(this.n);
  }

  /** Replaces the speeds (settings). */
  setSpeeds(speeds: JogSpeeds): void {
    this.speeds = speeds;
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
    this.collisionCountdown = 0;
    this.collisionHit = undefined;
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
    const limit =
      command.target.kind === 'joints'
        ? this.jointStep(command.target, command.goal, live, r, state, dtS)
        : this.cartesianStep(command.target, command.goal, live, r, state, dtS);
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

  private jointStep(
    target: Extract<JogTarget, { kind: 'joints' }>,
    goal: JogStepGoal | undefined,
    live: boolean,
    rate: number,
    state: JointSample,
    dtS: number,
  ): JogLimit | undefined {
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
    this.ramp(state, u, JOINT_ACC_SHARE, dtS);
    // Where the arm would stop braking right after this period: inside the envelope and free of collisions.
    if (this.guards.envelope || this.guards.collision) {
      let tStop = 0;
      for (let j = 0; j < n; j++)
        tStop = Math.max(tStop, Math.abs(this.qdNext[j] ?? 0) / ((maxAccRadS2[j] ?? 1) * JOINT_ACC_SHARE));
      for (let j = 0; j < n; j++) this.qStop[j] = (this.qNext[j] ?? 0) + (this.qdNext[j] ?? 0) * (tStop / 2 + dtS);
      const unsafe = this.moving() ? this.guardAt(this.qStop, dtS) : undefined;
      if (unsafe) {
        u.fill(0);
        this.ramp(state, u, JOINT_ACC_SHARE, dtS);
        return unsafe;
      }
    }
    return limit;
  }

  private moving(): boolean {
    for (let j = 0; j < this.n; j++) if (this.qdNext[j] !== 0) return true;
    return false;
  }

  /**
   * Sets qdNext toward `u` with every joint's change within its (scaled) acceleration limit, the change scaled
   * uniformly (the direction of the change kept), and qNext by the trapezoid of the period.
   */
  private ramp(state: JointSample, u: ArrayLike<number>, share: number, dtS: number): void {
    let k = 1;
    for (let j = 0; j < this.n; j++) {
      const dv = Math.abs((u[j] ?? 0) - (state.qd[j] ?? 0));
      const most = (this.limits.maxAccRadS2[j] ?? 0) * share * dtS;
      if (dv > most) k = Math.min(k, most / dv);
    }
    for (let j = 0; j < this.n; j++) {
      const v = state.qd[j] ?? 0;
      let next = v + k * ((u[j] ?? 0) - v);
      if (Math.abs(next) < 1e-12) next = 0;
      this.qdNext[j] = next;
      const q = (state.q[j] ?? 0) + ((v + next) / 2) * dtS;
      this.qNext[j] = Math.min(this.limits.maxRad[j] ?? q, Math.max(this.limits.minRad[j] ?? q, q));
    }
  }

  /**
   * The first guard the stop point `q` fails (envelope, collision), as a limit. The collision model (the costlier
   * check) is asked every {@link COLLISION_EVERY} periods, about the farthest stop the arm could reach before the next.
   */
  private guardAt(q: Float64Array, dtS: number): JogLimit | undefined {
    const violation = this.guards.envelope?.check(q);
    if (violation)
      return {
        kind: violation.kind === 'workspace' ? 'workspace' : 'keep_out',
        detail: violation.message.replace(' would ', ' would soon '),
      };
    const collision = this.guards.collision;
    if (!collision) return undefined;
    if (--this.collisionCountdown <= 0) {
      this.collisionCountdown = COLLISION_EVERY;
      // Where the arm could stop at the latest if it sped up at its limit until the next check (braking at half of it).
      const ahead = COLLISION_EVERY * dtS;
      for (let j = 0; j < this.n; j++) {
        const v = this.qdNext[j] ?? 0;
        const a = this.limits.maxAccRadS2[j] ?? 1;
        const fastest = Math.abs(v) + a * ahead;
        this.qFar[j] = (this.qNext[j] ?? 0) + Math.sign(v) * ((fastest * fastest) / a + fastest * ahead);
      }
      this.collisionHit = collision(this.qFar);
    }
    return this.collisionHit;
  }

  private collisionCountdown = 0;
  private collisionHit: JogLimit | undefined;

  private cartesianStep(
    target: Extract<JogTarget, { kind: 'cartesian' }>,
    goal: JogStepGoal | undefined,
    live: boolean,
    rate: number,
    state: JointSample,
    dtS: number,
  ): JogLimit | undefined {
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
      this.ramp(state, this.zeros, 1, dtS);
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
    this.advanceRef(this.refPos, this.refRot, ((sNow + sNext) / 2) * dtS, this.scratchPos, this.scratchRot);
    poseError(this.err, this.ws.tipPos, this.ws.tipRot, this.scratchPos, this.scratchRot);
    // Feedback on the error left at the end of the period: error / dt would be a dead-beat; POSE_GAIN damps it.
    const gain = Math.min(POSE_GAIN, 1 / dtS);
    for (let i = 0; i < 6; i++) this.corrTwist[i] = sNext * (this.twist[i] ?? 0) + gain * (this.err[i] ?? 0);
    // The TCP never goes faster than the jog asks (the pull back onto the line included).
    const asked = Math.max(
      sNext * Math.hypot(this.twist[0] ?? 0, this.twist[1] ?? 0, this.twist[2] ?? 0),
      PULL_SPEED_MS,
    );
    const linear = Math.hypot(this.corrTwist[0] ?? 0, this.corrTwist[1] ?? 0, this.corrTwist[2] ?? 0);
    if (linear > asked) for (let i = 0; i < 3; i++) this.corrTwist[i] = ((this.corrTwist[i] ?? 0) * asked) / linear;
    dampedPinvApply(this.ws.jacobian, this.n, this.corrTwist, this.damping, this.corr, this.pinvWork);
    this.ramp(state, this.corr, 1, dtS);
    return sNext;
  }

  /** The damping of the least squares at the current period (0 away from singularities). */
  private damping = 0;

  private readonly scratchPos = new Float64Array(3);
  private readonly scratchRot = new Float64Array(9);
  private readonly corrTwist = new Float64Array(6);
  private readonly zeros: Float64Array;
  private readonly rotStep = new Float64Array(9);

  /** `outPos/outRot` = the reference moved along the full twist for `sTimesDt` (speed x seconds). */
  private advanceRef(
    pos: Float64Array,
    rot: Float64Array,
    sTimesDt: number,
    outPos: Float64Array,
    outRot: Float64Array,
  ): void {
    for (let a = 0; a < 3; a++) outPos[a] = (pos[a] ?? 0) + (this.twist[a] ?? 0) * sTimesDt;
    const wx = (this.twist[3] ?? 0) * sTimesDt;
    const wy = (this.twist[4] ?? 0) * sTimesDt;
    const wz = (this.twist[5] ?? 0) * sTimesDt;
    const angle = Math.hypot(wx, wy, wz);
    if (angle === 0) {
      outRot.set(rot);
      return;
    }
    const kx = wx / angle;
    const ky = wy / angle;
    const kz = wz / angle;
    const c = Math.cos(angle);
    const s = Math.sin(angle);
    const v = 1 - c;
    const m = this.rotStep;
    m[0] = c + kx * kx * v;
    m[1] = kx * ky * v - kz * s;
    m[2] = kx * kz * v + ky * s;
    m[3] = ky * kx * v + kz * s;
    m[4] = c + ky * ky * v;
    m[5] = ky * kz * v - kx * s;
    m[6] = kz * kx * v - ky * s;
    m[7] = kz * ky * v + kx * s;
    m[8] = c + kz * kz * v;
    for (let i = 0; i < 3; i++)
      for (let j = 0; j < 3; j++)
        outRot[3 * i + j] =
          (m[3 * i] ?? 0) * (rot[j] ?? 0) +
          (m[3 * i + 1] ?? 0) * (rot[3 + j] ?? 0) +
          (m[3 * i + 2] ?? 0) * (rot[6 + j] ?? 0);
  }

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
    const { minRad, maxRad } = this.limits;
    // Braking at alpha takes sNext / alpha; the arm covers half of its speed times that.
    const tStop = sNext / alpha;
    for (let j = 0; j < n; j++) this.qStop[j] = (this.qNext[j] ?? 0) + (this.qdNext[j] ?? 0) * (tStop / 2 + dtS);
    for (let j = 0; j < n; j++) {
      const q = this.qStop[j] ?? 0;
      const moving = (this.qdNext[j] ?? 0) - (state.qd[j] ?? 0) !== 0 || (this.qdNext[j] ?? 0) !== 0;
      if (!moving) continue;
      const v = this.qdNext[j] ?? 0;
      if ((v > 0 && q > (maxRad[j] ?? 0) - JOINT_MARGIN_RAD) || (v < 0 && q < (minRad[j] ?? 0) + JOINT_MARGIN_RAD))
        return {
          kind: 'joint_limit',
          detail: `${this.limits.jointNames[j]} would reach its ${v > 0 ? 'upper' : 'lower'} position limit`,
        };
    }
    forwardKinematics(this.chain, this.qStop, this.probe, true);
    if (minSingularValue6(this.probe.jacobian, n, this.work) < SINGULAR_STOP && sNext > 0)
      return { kind: 'singularity', detail: 'the arm would come too near a singularity: the jog stops before it' };
    return this.guardAt(this.qStop, dtS);
  }
}

function sameTarget(a: JogTarget, b: JogTarget): boolean {
  if (a.kind === 'joints' && b.kind === 'joints') return a.fractions.every((f, i) => f === b.fractions[i]);
  if (a.kind === 'cartesian' && b.kind === 'cartesian')
    return (
      a.frame === b.frame &&
      a.linear.every((f, i) => f === b.linear[i]) &&
      a.angular.every((f, i) => f === b.angular[i])
    );
  return false;
}
