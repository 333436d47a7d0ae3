import { type JointSample, type JointTrajectory, type TrajectoryPoint, createSample, sampleTrajectory, trajectoryDuration } from '../planning/trajectory.ts';
import type { JointLimits } from '../robot/limits.ts';
import { err, ok, type Result } from '../result.ts';
import { executedKnots, firstViolation, type Quantity, START_TOLERANCE_RAD } from '../trajectory/dynamics.ts';
import { type ClipInfo, createClipInfo, driveStep } from './drive.ts';

/** What the controller did, for the trajectory log and for waiting goals. */
export type ControllerEvent =
  | { readonly kind: 'accepted'; readonly id: number; readonly points: number; readonly durationS: number }
  | { readonly kind: 'refused'; readonly reason: string }
  | { readonly kind: 'preempted'; readonly id: number }
  | { readonly kind: 'finished'; readonly id: number }
  | { readonly kind: 'cancelled'; readonly id: number }
  | { readonly kind: 'hold'; readonly positions: readonly number[] }
  | { readonly kind: 'hold-request' }
  | {
      readonly kind: 'clipped';
      readonly id: number;
      readonly joint: string;
      readonly needRadS2: number;
      readonly limitRadS2: number;
      readonly atS: number;
      readonly cause: 'acceleration' | 'position limit';
    };

type Mode =
  | { readonly kind: 'hold' }
  | { readonly kind: 'executing'; readonly id: number; readonly trajectory: JointTrajectory; readonly startS: number; readonly started: boolean }
  | { readonly kind: 'stopping'; readonly id: number | undefined };

export { START_TOLERANCE_RAD };
/**
 * A single point at t = 0 this close (rad) to the current position is a hold request (what POST
 * /stop publishes from the latest joint state, which lags a moving arm by up to one period).
 */
export const HOLD_TOLERANCE_RAD = 0.1;

/** What the controller refuses on receipt: its analytic check covers positions and velocities (accelerations are the drive's). */
const REFUSED: ReadonlySet<Quantity> = new Set<Quantity>(['position', 'velocity']);

/** One log sentence for a clip event. */
export function describeClip(event: Extract<ControllerEvent, { kind: 'clipped' }>): string {
  const when = `at t = ${event.atS.toFixed(3)} s`;
  const what =
    event.cause === 'acceleration'
      ? `needs ${event.needRadS2.toPrecision(3)} rad/s^2 on ${event.joint} ${when} (limit ${event.limitRadS2} rad/s^2)`
      : `would carry ${event.joint} into its position limit ${when}`;
  return `trajectory #${event.id} ${what}: the drive follows with limited acceleration (logged once per trajectory)`;
}

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

  constructor(limits: JointLimits, initialRad: readonly number[], onEvent: (event: ControllerEvent) => void) {
    this.limits = limits;
    this.onEvent = onEvent;
    this.state = createSample(limits.jointNames.length);
    this.state.q.set(initialRad);
    this.command = createSample(limits.jointNames.length);
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
    this.mode = { kind: 'executing', id, trajectory: checked.value, startS: nowS, started: false };
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
      if (!mode.started) {
        // As ros2_controllers' JTC: a trajectory starts at the first update after it arrived.
        this.mode = { ...mode, started: true, startS: nowS - dtS };
        this.update(nowS, dtS);
        return;
      }
      const t = nowS - mode.startS;
      const duration = trajectoryDuration(mode.trajectory);
      const ended = t >= duration;
      sampleTrajectory(mode.trajectory, ended ? duration : t, this.command);
      if (ended) {
        this.command.qd.fill(0);
        this.command.qdd.fill(0);
      }
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
    const inOrder = order.every((k, j) => k === j);
    const pick = (values: readonly number[] | undefined) =>
      values && values.length === names.length ? (inOrder ? values : order.map((i) => values[i] ?? 0)) : undefined;
    const points: TrajectoryPoint[] = new Array(trajectory.points.length);
    let previousT = -1;
    for (let index = 0; index < trajectory.points.length; index++) {
      const p = trajectory.points[index] as TrajectoryPoint;
      if (p.positions.length !== names.length) return err(`point ${index} has ${p.positions.length} positions, expected ${names.length}`);
      if (!(p.timeFromStartS > previousT)) return err(`point ${index}: time_from_start ${p.timeFromStartS} s does not increase (the controller needs strictly increasing times)`);
      previousT = p.timeFromStartS;
      const positions = pick(p.positions) ?? [];
      for (let j = 0; j < positions.length; j++) {
        const value = positions[j] ?? Number.NaN;
        if (!Number.isFinite(value) || value < (this.limits.minRad[j] ?? 0) || value > (this.limits.maxRad[j] ?? 0)) {
          return err(`point ${index}: ${names[j]} = ${value} rad is outside its limits [${this.limits.minRad[j]}, ${this.limits.maxRad[j]}]`);
        }
      }
      const velocities = pick(p.velocities);
      const accelerations = velocities ? pick(p.accelerations) : undefined;
      if (velocities?.some((x) => !Number.isFinite(x)) || accelerations?.some((x) => !Number.isFinite(x))) {
        return err(`point ${index} has a velocity or acceleration that is not a finite number`);
      }
      points[index] = { positions, timeFromStartS: p.timeFromStartS, ...(velocities ? { velocities } : {}), ...(accelerations ? { accelerations } : {}) };
    }
    const first = points[0] as TrajectoryPoint;
    if (first.timeFromStartS === 0) {
      const offset = Math.max(...first.positions.map((v, j) => Math.abs(v - (this.state.q[j] ?? 0))));
      if (offset > START_TOLERANCE_RAD) {
        return err(`the first point is at time 0 but ${offset.toFixed(4)} rad away from the current position: following it would jump`);
      }
    }
    const current = { positions: Array.from(this.state.q), velocities: Array.from(this.state.qd), accelerations: Array.from(this.state.qdd) };
    const executed = executedKnots(current, points);
    const violation = firstViolation(executed, current, this.limits, { quantities: REFUSED });
    if (violation) {
      const name = names[violation.joint];
      if (violation.quantity === 'velocity') {
        return err(`${name} would need ${violation.value.toFixed(3)} rad/s near t = ${violation.atS.toFixed(3)} s (limit ${this.limits.maxVelRadS[violation.joint]} rad/s)`);
      }
      const bounds = `[${this.limits.minRad[violation.joint]}, ${this.limits.maxRad[violation.joint]}]`;
      return err(`point ${violation.point}: ${name} would reach ${violation.value.toFixed(4)} rad near t = ${violation.atS.toFixed(3)} s, outside its limits ${bounds}`);
    }
    return ok({ jointNames: names, points: executed.knots });
  }
}
