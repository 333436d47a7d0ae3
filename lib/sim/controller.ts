import { createSample, type JointSample, type JointTrajectory, trajectoryDuration } from '../planning/trajectory.ts';
import type { JointLimits } from '../robot/limits.ts';
import { err, ok, type Result } from '../result.ts';
import type { JointTrajectoryMsg } from '../ros/messages.ts';
import { START_TOLERANCE_RAD, HOLD_TOLERANCE_RAD } from '../planning/dynamics.ts';
import { advancePath, type PathProgress } from '../planning/time-scaling.ts';
import type { ControllerEvent } from './controller-events.ts';
import { type ClipInfo, createClipInfo, driveStep } from './drive.ts';
import { yieldToLoop } from './sliced.ts';
import {
  checkRequested,
  checkStart,
  messageSource,
  type PointSource,
  type Requested,
  trajectorySource,
} from './trajectory-check.ts';
import type { JogEngine, JogEndReason, JogLimit, JogStepGoal, JogTarget } from '../motion/jog.ts';

export { type ControllerEvent, describeClip } from './controller-events.ts';
export { SLICE_POINTS } from './trajectory-check.ts';

type Mode =
  | { readonly kind: 'hold' }
  | {
      readonly kind: 'executing';
      readonly id: number;
      readonly trajectory: JointTrajectory;
      readonly durationS: number;
      /** Where on the trajectory (plan time) and at what rate it executes (time-scaling: pause, override). */
      readonly progress: PathProgress;
      /** The 'paused' event was sent for the current rest at rate 0. */
      pausedReported: boolean;
    }
  | { readonly kind: 'stopping'; readonly id: number | undefined }
  /** Moved by hand: the jog engine commands each period (lib/motion/jog.ts). */
  | { readonly kind: 'jogging' };

export { START_TOLERANCE_RAD, HOLD_TOLERANCE_RAD };

/**
 * The simulated joint trajectory controller, with ros2_controllers' semantics: one active
 * trajectory, a new one preempts, interpolation from the current state to the first point, hold
 * position on start-up, on completion and on cancel. It refuses what it could not follow within
 * the position and velocity limits (checked analytically per segment), so it never jumps; its
 * drives follow each commanded state exactly when that is within the acceleration limits and
 * otherwise with limited acceleration and velocity (reported once per trajectory, a `clipped`
 * event). A cancel, an empty trajectory or a hold point (one point at t = 0 near the current
 * position) decelerates each joint within its acceleration limit and then holds. Time is given by
 * the caller (`update(nowS)`).
 */
export class TrajectoryController {
  readonly state: JointSample;
  private readonly limits: JointLimits;
  private readonly onEvent: (event: ControllerEvent) => void;
  private mode: Mode = { kind: 'hold' };
  private nextId = 1;
  /** The state the trajectory commands at the current update (the drives follow it). */
  private readonly command: JointSample;
  private readonly clip: ClipInfo = createClipInfo();
  /** Id of the trajectory whose clipping was already reported. */
  private clipReported = 0;
  /** Counts follows and cancels: a sliced check that sees it change was superseded. */
  private generation = 0;
  /** The rate (0..1) executing trajectories are driven to: 0 while paused, else the speed override. */
  private rateTarget = 1;
  /** The path derivatives at the current plan time (scratch of the time-scaling). */
  private readonly pathScratch: JointSample;
  /** The jog engine, when the arm can be jogged (the simulator gives it one). */
  private jogEngine: JogEngine | undefined;
  /** The jog's arm moved in the last period (for its moving and resting events). */
  private jogMoving = false;

  constructor(limits: JointLimits, initialRad: readonly number[], onEvent: (event: ControllerEvent) => void) {
    this.limits = limits;
    this.onEvent = onEvent;
    this.state = createSample(limits.jointNames.length);
    this.state.q.set(initialRad);
    this.command = createSample(limits.jointNames.length);
    this.pathScratch = createSample(limits.jointNames.length);
  }

  /** Gives the controller a jog engine (without one, {@link jog} refuses). */
  useJogEngine(engine: JogEngine): void {
    this.jogEngine = engine;
  }

  /**
   * Jogs the arm (or extends the jog in force): `target` until `untilS` (sim seconds; a step: Infinity with `goal`). A
   * trajectory executing or an arm still braking after a cancel refuses it; so does a controller without an engine.
   */
  jog(target: JogTarget, untilS: number, goal?: JogStepGoal): Result<void, string> {
    const engine = this.jogEngine;
    if (!engine) return err('this controller cannot jog');
    if (this.mode.kind === 'executing') return err('the controller is executing a trajectory');
    if (this.mode.kind === 'stopping') return err('the arm is still braking to rest after a stop or a cancel');
    const starting = this.mode.kind !== 'jogging';
    if (starting) {
      this.generation++;
      engine.reset();
      this.mode = { kind: 'jogging' };
      this.jogMoving = false;
      this.onEvent({ kind: 'jog', state: 'started', positions: Array.from(this.state.q) });
    }
    engine.take(target, untilS, this.state.q, goal);
    return ok(undefined);
  }

  /** Brakes the jog in force to rest and ends it with `reason` (a released button, a socket closed). */
  releaseJog(reason: JogEndReason): void {
    if (this.mode.kind === 'jogging') this.jogEngine?.release(reason);
  }

  /** True while jogging (moving, braking or held by a command at rest). */
  isJogging(): boolean {
    return this.mode.kind === 'jogging';
  }

  /** The limit holding the jog back, if any. */
  jogLimit(): JogLimit | undefined {
    return this.mode.kind === 'jogging' ? this.jogEngine?.limit() : undefined;
  }

  /** Ends a jog that something else takes over from (a cancel, a trajectory): the engine forgets it. */
  private endJog(reason: JogEndReason): void {
    if (this.mode.kind !== 'jogging') return;
    this.jogEngine?.reset();
    this.onEvent({ kind: 'jog', state: 'ended', reason, positions: Array.from(this.state.q) });
  }

  /**
   * Sets the rate executing trajectories are driven to, 0..1 (0 pauses: the arm decelerates along
   * its path to rest and holds there; 1 executes as planned; p/100 is an override of p %). The
   * change itself stays within the acceleration limits (lib/planning/time-scaling.ts); a
   * trajectory that starts later starts at this rate.
   */
  setRateTarget(target: number): void {
    this.rateTarget = Math.min(1, Math.max(0, Number.isFinite(target) ? target : 1));
    if (this.mode.kind === 'executing' && this.rateTarget > 0) this.mode.pausedReported = false;
  }

  /** The rate executing trajectories are driven to. */
  rateTargetNow(): number {
    return this.rateTarget;
  }

  /** The rate the executing trajectory runs at (0 when paused at rest); 1 when nothing executes. */
  currentRate(): number {
    return this.mode.kind === 'executing' ? this.mode.progress.rate : 1;
  }

  /** True while a trajectory is held at rest on its path (rate 0, target 0). */
  isPausedAtRest(): boolean {
    return this.mode.kind === 'executing' && this.rateTarget === 0 && this.mode.progress.rate === 0 && this.atRest();
  }

  /** True while the controller needs updates: moving, or a trajectory whose rate is still to change. */
  needsUpdates(): boolean {
    return this.isMoving() && !this.isPausedAtRest();
  }

  /** True while a trajectory executes or the arm decelerates after a cancel. */
  isMoving(): boolean {
    return this.mode.kind !== 'hold';
  }

  /**
   * While the arm decelerates after a cancel: the sim seconds until every joint is at rest (each at
   * its acceleration limit, as {@link update} brakes it); otherwise undefined.
   */
  timeToRestS(): number | undefined {
    if (this.mode.kind !== 'stopping') return undefined;
    let timeS = 0;
    for (let j = 0; j < this.state.qd.length; j++) {
      const a = this.limits.maxAccRadS2[j] ?? 1;
      timeS = Math.max(timeS, Math.abs(this.state.qd[j] ?? 0) / a);
    }
    return timeS;
  }

  /** Id of the executing trajectory, if any. */
  activeId(): number | undefined {
    return this.mode.kind === 'executing' ? this.mode.id : undefined;
  }

  /**
   * Takes a trajectory (it starts at the first update after it; the time argument is kept for callers): reorders it to the
   * controller's joints, checks it, and preempts whatever was executing. Returns the trajectory id
   * or why it was refused.
   */
  follow(trajectory: JointTrajectory, _nowS: number): Result<number, string> {
    const source = trajectorySource(trajectory);
    if (this.holdRequested(source)) return ok(0);
    this.generation++;
    const work = checkRequested(source, this.limits);
    let step = work.next();
    while (!step.done) step = work.next();
    return this.accept(source, step.value);
  }

  /**
   * As {@link follow}, for a trajectory message as it arrives on the topic, with the checks that
   * grow with the trajectory done in slices of {@link SLICE_POINTS} points between which the event
   * loop runs (a 100,000-point trajectory never holds it); the state-dependent start is checked at
   * the end, at `nowS()`. A follow, a cancel or a later message meanwhile supersedes it, as a newer
   * message preempts an older one.
   */
  async followMessage(msg: JointTrajectoryMsg, _nowS: () => number): Promise<Result<number, string>> {
    const source = messageSource(msg);
    if (this.holdRequested(source)) return ok(0);
    const generation = ++this.generation;
    const work = checkRequested(source, this.limits);
    let step = work.next();
    while (!step.done) {
      await yieldToLoop();
      if (generation !== this.generation) break;
      step = work.next();
    }
    if (generation !== this.generation || !step.done) {
      const reason = 'superseded by a newer command while it was being checked';
      this.onEvent({ kind: 'refused', reason });
      return err(reason);
    }
    return this.accept(source, step.value);
  }

  /** A lone point at t = 0 near the current position: decelerate and hold (what POST /stop publishes). */
  private holdRequested(source: PointSource): boolean {
    if (source.count !== 1 || source.timeS(0) !== 0 || !this.isHoldRequest(source.jointNames, source.positions(0)))
      return false;
    this.onEvent({ kind: 'hold-request' });
    this.cancel();
    return true;
  }

  /** Checks the start against the current state and, if all is well, makes the trajectory the active one. */
  private accept(source: PointSource, requested: Result<Requested, string>): Result<number, string> {
    // Taken over from a moving trajectory, the new one's start is checked at the rate it runs at.
    const r = this.mode.kind === 'executing' && !this.atRest() ? this.mode.progress.rate : 1;
    const checked = requested.ok ? checkStart(requested.value, this.limits, this.state, r) : requested;
    if (!checked.ok) {
      this.onEvent({ kind: 'refused', reason: checked.error });
      return checked;
    }
    // A trajectory taken over from a moving one keeps the rate the arm moves at (its start is the state as it is).
    const rate = this.mode.kind === 'executing' && !this.atRest() ? this.mode.progress.rate : this.rateTarget;
    if (this.mode.kind === 'executing') this.onEvent({ kind: 'preempted', id: this.mode.id });
    this.endJog('stop');
    const id = this.nextId++;
    this.mode = {
      kind: 'executing',
      id,
      trajectory: checked.value,
      durationS: trajectoryDuration(checked.value),
      progress: { tauS: 0, rate },
      pausedReported: false,
    };
    this.onEvent({ kind: 'accepted', id, points: source.count, durationS: trajectoryDuration(checked.value) });
    return ok(id);
  }

  /**
   * Cancels the active trajectory: decelerate within the acceleration limits, then hold. An arm at
   * rest (every velocity 0: a trajectory not started yet, a hold point at rest) holds at once, so
   * the next command is taken at once.
   */
  cancel(): void {
    this.generation++;
    this.endJog('stop');
    const id = this.mode.kind === 'executing' ? this.mode.id : this.mode.kind === 'stopping' ? this.mode.id : undefined;
    if (id !== undefined && this.mode.kind === 'executing') this.onEvent({ kind: 'cancelled', id });
    const atRest = this.atRest();
    if (this.mode.kind === 'hold' && atRest) return;
    if (atRest) {
      this.state.qdd.fill(0);
      this.mode = { kind: 'hold' };
      this.onEvent({ kind: 'hold', positions: Array.from(this.state.q) });
      return;
    }
    this.mode = { kind: 'stopping', id };
    this.state.qdd.fill(0);
  }

  private atRest(): boolean {
    return this.state.qd.every((v) => v === 0);
  }

  /** Advances the controller by one update of `dtS` seconds (the time argument is kept for callers). */
  update(nowS: number, dtS: number): void {
    const mode = this.mode;
    if (mode.kind === 'jogging') {
      this.jogUpdate(nowS, dtS);
      return;
    }
    if (mode.kind === 'executing') {
      // As ros2_controllers' JTC: a trajectory starts at the first update after it arrived (its plan time then
      // advances by one period at the rate it runs at).
      const progress = mode.progress;
      const ended = !advancePath(
        mode.trajectory,
        mode.durationS,
        progress,
        this.rateTarget,
        this.limits.maxAccRadS2,
        dtS,
        this.pathScratch,
        this.command,
      );
      const t = progress.tauS;
      const exact = driveStep(this.state, this.command, this.limits, dtS, this.clip);
      if (!exact && this.clipReported !== mode.id) {
        this.clipReported = mode.id;
        const j = this.clip.joint;
        this.onEvent({
          kind: 'clipped',
          id: mode.id,
          joint: this.limits.jointNames[j] ?? `joint${j + 1}`,
          needRadS2: this.clip.needRadS2,
          limitRadS2: this.limits.maxAccRadS2[j] ?? 0,
          atS: t,
          cause: this.clip.cause,
        });
      }
      if (ended && exact) {
        this.state.qd.fill(0);
        this.state.qdd.fill(0);
        this.mode = { kind: 'hold' };
        this.onEvent({ kind: 'finished', id: mode.id });
        this.onEvent({ kind: 'hold', positions: Array.from(this.state.q) });
        return;
      }
      const current = this.mode;
      if (
        current.kind === 'executing' &&
        !current.pausedReported &&
        this.rateTarget === 0 &&
        progress.rate === 0 &&
        this.atRest()
      ) {
        current.pausedReported = true;
        this.onEvent({ kind: 'paused', id: mode.id, positions: Array.from(this.state.q) });
      }
      return;
    }
    if (mode.kind === 'stopping') {
      let moving = false;
      const { q, qd, qdd } = this.state;
      for (let j = 0; j < q.length; j++) {
        const v = qd[j] ?? 0;
        const a = this.limits.maxAccRadS2[j] ?? 1;
        const dv = Math.min(Math.abs(v), a * dtS);
        const vNext = v - Math.sign(v) * dv;
        q[j] = (q[j] ?? 0) + ((v + vNext) / 2) * dtS;
        q[j] = Math.min(this.limits.maxRad[j] ?? 0, Math.max(this.limits.minRad[j] ?? 0, q[j] ?? 0));
        qd[j] = vNext;
        qdd[j] = dtS > 0 ? -Math.sign(v) * (dv / dtS) : 0;
        if (vNext !== 0) moving = true;
      }
      if (!moving) {
        qdd.fill(0);
        this.mode = { kind: 'hold' };
        this.onEvent({ kind: 'hold', positions: Array.from(q) });
      }
    }
  }

  /** One period of a jog: the engine commands, the drives follow; at its end the arm holds. */
  private jogUpdate(nowS: number, dtS: number): void {
    const engine = this.jogEngine;
    if (!engine) return;
    const report = engine.step(this.state, nowS, dtS, this.rateTarget, this.command);
    driveStep(this.state, this.command, this.limits, dtS, this.clip);
    if (report.ended) {
      this.state.qd.fill(0);
      this.state.qdd.fill(0);
      this.mode = { kind: 'hold' };
      this.onEvent({
        kind: 'jog',
        state: 'ended',
        reason: report.ended,
        ...(report.ended === 'limit' && report.limit ? { limit: report.limit } : {}),
        positions: Array.from(this.state.q),
      });
      this.onEvent({ kind: 'hold', positions: Array.from(this.state.q) });
      return;
    }
    const moving = !this.atRest();
    if (moving !== this.jogMoving) {
      this.jogMoving = moving;
      this.onEvent({ kind: 'jog', state: moving ? 'moving' : 'resting', positions: Array.from(this.state.q) });
    }
  }

  private isHoldRequest(names: readonly string[], positions: readonly number[]): boolean {
    return this.limits.jointNames.every((name, j) => {
      const k = names.indexOf(name);
      return k >= 0 && Math.abs((positions[k] ?? Number.NaN) - (this.state.q[j] ?? 0)) <= HOLD_TOLERANCE_RAD;
    });
  }
}
