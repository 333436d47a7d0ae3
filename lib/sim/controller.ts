import { type JointSample, type JointTrajectory, type TrajectoryPoint, createSample, sampleTrajectory, trajectoryDuration } from '../planning/trajectory.ts';
import type { JointLimits } from '../robot/limits.ts';
import { err, ok, type Result } from '../result.ts';

/** What the controller did, for the trajectory log and for waiting goals. */
export type ControllerEvent =
  | { readonly kind: 'accepted'; readonly id: number; readonly points: number; readonly durationS: number }
  | { readonly kind: 'refused'; readonly reason: string }
  | { readonly kind: 'preempted'; readonly id: number }
  | { readonly kind: 'finished'; readonly id: number }
  | { readonly kind: 'cancelled'; readonly id: number }
  | { readonly kind: 'hold'; readonly positions: readonly number[] }
  | { readonly kind: 'hold-request' };

type Mode =
  | { readonly kind: 'hold' }
  | { readonly kind: 'executing'; readonly id: number; readonly trajectory: JointTrajectory; readonly startS: number }
  | { readonly kind: 'stopping'; readonly id: number | undefined };

/** Largest start offset (rad) a trajectory whose first point is at t = 0 may have from the current position. */
export const START_TOLERANCE_RAD = 1e-3;
/**
 * A single point at t = 0 this close (rad) to the current position is a hold request (what POST
 * /stop publishes from the latest joint state, which lags a moving arm by up to one period).
 */
export const HOLD_TOLERANCE_RAD = 0.1;

/**
 * The simulated joint trajectory controller, with ros2_controllers' semantics: one active
 * trajectory, a new one preempts, interpolation from the current state to the first point, hold
 * position on start-up, on completion and on cancel. It refuses what it could not follow within
 * the position and velocity limits, so it never jumps; a cancel, an empty trajectory or a hold
 * point (one point at t = 0 near the current position) decelerates each joint within its
 * acceleration limit and then holds. Time is given by the caller (`update(nowS)`).
 */
export class TrajectoryController {
  readonly state: JointSample;
  private readonly limits: JointLimits;
  private readonly onEvent: (event: ControllerEvent) => void;
  private mode: Mode = { kind: 'hold' };
  private nextId = 1;
  private readonly scratch: JointSample;

  constructor(limits: JointLimits, initialRad: readonly number[], onEvent: (event: ControllerEvent) => void) {
    this.limits = limits;
    this.onEvent = onEvent;
    this.state = createSample(limits.jointNames.length);
    this.state.q.set(initialRad);
    this.scratch = createSample(limits.jointNames.length);
  }

  /** True while a trajectory executes or the arm decelerates after a cancel. */
  isMoving(): boolean {
    return this.mode.kind !== 'hold';
  }

  /** Id of the executing trajectory, if any. */
  activeId(): number | undefined {
    return this.mode.kind === 'executing' ? this.mode.id : undefined;
  }

  /**
   * Takes a trajectory at time `nowS`: reorders it to the controller's joints, checks it, and
   * preempts whatever was executing. Returns the trajectory id or why it was refused.
   */
  follow(trajectory: JointTrajectory, nowS: number): Result<number, string> {
    const only = trajectory.points.length === 1 ? trajectory.points[0] : undefined;
    if (only && only.timeFromStartS === 0 && this.isHoldRequest(trajectory.jointNames, only.positions)) {
      this.onEvent({ kind: 'hold-request' });
      this.cancel();
      return ok(0);
    }
    const checked = this.check(trajectory);
    if (!checked.ok) {
      this.onEvent({ kind: 'refused', reason: checked.error });
      return checked;
    }
    if (this.mode.kind === 'executing') this.onEvent({ kind: 'preempted', id: this.mode.id });
    const id = this.nextId++;
    this.mode = { kind: 'executing', id, trajectory: checked.value, startS: nowS };
    this.onEvent({ kind: 'accepted', id, points: trajectory.points.length, durationS: trajectoryDuration(checked.value) });
    return ok(id);
  }

  /** Cancels the active trajectory: decelerate within the acceleration limits, then hold. */
  cancel(): void {
    const id = this.mode.kind === 'executing' ? this.mode.id : this.mode.kind === 'stopping' ? this.mode.id : undefined;
    if (id !== undefined && this.mode.kind === 'executing') this.onEvent({ kind: 'cancelled', id });
    if (this.mode.kind === 'hold' && this.state.qd.every((v) => v === 0)) return;
    this.mode = { kind: 'stopping', id };
    this.state.qdd.fill(0);
  }

  /** Advances the controller to `nowS` by one update of `dtS` seconds. */
  update(nowS: number, dtS: number): void {
    const mode = this.mode;
    if (mode.kind === 'executing') {
      const t = nowS - mode.startS;
      const duration = trajectoryDuration(mode.trajectory);
      if (t >= duration) {
        sampleTrajectory(mode.trajectory, duration, this.state);
        this.state.qd.fill(0);
        this.state.qdd.fill(0);
        this.mode = { kind: 'hold' };
        this.onEvent({ kind: 'finished', id: mode.id });
        this.onEvent({ kind: 'hold', positions: Array.from(this.state.q) });
        return;
      }
      sampleTrajectory(mode.trajectory, t, this.state);
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

  private isHoldRequest(names: readonly string[], positions: readonly number[]): boolean {
    return this.limits.jointNames.every((name, j) => {
      const k = names.indexOf(name);
      return k >= 0 && Math.abs((positions[k] ?? Number.NaN) - (this.state.q[j] ?? 0)) <= HOLD_TOLERANCE_RAD;
    });
  }

  /** Reorders by joint name, prepends the current state, and checks limits and velocities. */
  private check(trajectory: JointTrajectory): Result<JointTrajectory, string> {
    const names = this.limits.jointNames;
    if (trajectory.points.length === 0) return err('the trajectory has no points');
    const seen = new Set<string>();
    for (const name of trajectory.jointNames) {
      if (!names.includes(name)) return err(`unknown joint '${name}' (the controller has ${names.join(', ')})`);
      if (seen.has(name)) return err(`joint '${name}' appears twice`);
      seen.add(name);
    }
    const missing = names.filter((n) => !seen.has(n));
    if (missing.length > 0) return err(`the trajectory lacks ${missing.join(', ')}`);
    const order = names.map((n) => trajectory.jointNames.indexOf(n));
    const pick = (values: readonly number[] | undefined) => (values && values.length === names.length ? order.map((i) => values[i] ?? 0) : undefined);
    const points: TrajectoryPoint[] = [];
    let previousT = -1;
    for (const [index, p] of trajectory.points.entries()) {
      if (p.positions.length !== names.length) return err(`point ${index} has ${p.positions.length} positions, expected ${names.length}`);
      if (!(p.timeFromStartS > previousT)) return err(`point ${index}: time_from_start ${p.timeFromStartS} s does not increase (the controller needs strictly increasing times)`);
      previousT = p.timeFromStartS;
      const positions = pick(p.positions) ?? [];
      for (const [j, value] of positions.entries()) {
        if (!Number.isFinite(value) || value < (this.limits.minRad[j] ?? 0) || value > (this.limits.maxRad[j] ?? 0)) {
          return err(`point ${index}: ${names[j]} = ${value} rad is outside its limits [${this.limits.minRad[j]}, ${this.limits.maxRad[j]}]`);
        }
      }
      const velocities = pick(p.velocities);
      const accelerations = velocities ? pick(p.accelerations) : undefined;
      points.push({ positions, timeFromStartS: p.timeFromStartS, ...(velocities ? { velocities } : {}), ...(accelerations ? { accelerations } : {}) });
    }
    const first = points[0] as TrajectoryPoint;
    const current: TrajectoryPoint = {
      positions: Array.from(this.state.q),
      timeFromStartS: 0,
      ...(first.velocities ? { velocities: Array.from(this.state.qd) } : {}),
      ...(first.accelerations ? { accelerations: Array.from(this.state.qdd) } : {}),
    };
    if (first.timeFromStartS === 0) {
      const offset = Math.max(...first.positions.map((v, j) => Math.abs(v - (this.state.q[j] ?? 0))));
      if (offset > START_TOLERANCE_RAD) {
        return err(`the first point is at time 0 but ${offset.toFixed(4)} rad away from the current position: following it would jump`);
      }
    } else {
      points.unshift(current);
    }
    const result: JointTrajectory = { jointNames: names, points };
    const velocity = this.maxVelocityRatio(result);
    if (velocity.ratio > 1 + 1e-6) {
      return err(`${names[velocity.joint]} would need ${velocity.speed.toFixed(3)} rad/s near t = ${velocity.t.toFixed(3)} s (limit ${this.limits.maxVelRadS[velocity.joint]} rad/s)`);
    }
    return ok(result);
  }

  /** Samples the trajectory finely and returns the worst joint velocity relative to its limit. */
  private maxVelocityRatio(trajectory: JointTrajectory): { ratio: number; joint: number; speed: number; t: number } {
    const duration = trajectoryDuration(trajectory);
    const steps = Math.min(2_000_000, Math.max(2, Math.ceil(duration / 0.002)));
    let worst = { ratio: 0, joint: 0, speed: 0, t: 0 };
    const points = trajectory.points;
    // Segment-average velocities catch position-only trajectories exactly.
    for (let i = 1; i < points.length; i++) {
      const a = points[i - 1] as TrajectoryPoint;
      const b = points[i] as TrajectoryPoint;
      const dt = b.timeFromStartS - a.timeFromStartS;
      for (let j = 0; j < b.positions.length; j++) {
        const speed = Math.abs((b.positions[j] ?? 0) - (a.positions[j] ?? 0)) / dt;
        const ratio = speed / (this.limits.maxVelRadS[j] ?? 1);
        if (ratio > worst.ratio) worst = { ratio, joint: j, speed, t: b.timeFromStartS };
      }
    }
    if (!points.some((p) => p.velocities)) return worst;
    for (let k = 0; k <= steps; k++) {
      const t = (duration * k) / steps;
      sampleTrajectory(trajectory, t, this.scratch);
      for (let j = 0; j < this.scratch.qd.length; j++) {
        const speed = Math.abs(this.scratch.qd[j] ?? 0);
        const ratio = speed / (this.limits.maxVelRadS[j] ?? 1);
        if (ratio > worst.ratio) worst = { ratio, joint: j, speed, t };
      }
    }
    return worst;
  }
}
