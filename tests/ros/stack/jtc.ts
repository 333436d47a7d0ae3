/**
 * The joint trajectory controller as ros2_controllers' JointTrajectoryController (jazzy) behaves
 * with the original stack's iiwa_arm_controller parameters (allow_partial_joints_goal false,
 * allow_nonzero_velocity_at_trajectory_end false, interpolate_from_desired_state true, default
 * constraints: stopped_velocity_tolerance 0.01, goal_time 0, no position tolerances): the same
 * validation of incoming trajectories (and the same error texts), a new trajectory replacing the
 * current one, interpolation from the last commanded state (linear, cubic or quintic as the points
 * carry velocities and accelerations), a new goal aborting the active one (INVALID_GOAL, "Current
 * goal preempted by new incoming action."), path and goal tolerance checks, and cancel. Pure: time
 * and the arm's state come in, commands and goal endings go out.
 */
import type { Arm } from './arm.ts';
import { at } from './model.ts';

export interface TimeMsg {
  readonly sec: number;
  readonly nanosec: number;
}
export interface TrajectoryPointMsg {
  readonly positions: ArrayLike<number>;
  readonly velocities: ArrayLike<number>;
  readonly accelerations: ArrayLike<number>;
  readonly effort: ArrayLike<number>;
  readonly time_from_start: TimeMsg;
}
export interface TrajectoryMsg {
  readonly header: { readonly stamp: TimeMsg };
  readonly joint_names: readonly string[];
  readonly points: readonly TrajectoryPointMsg[];
}
export interface JointToleranceMsg {
  readonly name: string;
  readonly position: number;
  readonly velocity: number;
  readonly acceleration: number;
}

/** control_msgs/action/FollowJointTrajectory result codes. */
export const FJT = {
  SUCCESSFUL: 0,
  INVALID_GOAL: -1,
  INVALID_JOINTS: -2,
  OLD_HEADER_TIMESTAMP: -3,
  PATH_TOLERANCE_VIOLATED: -4,
  GOAL_TOLERANCE_VIOLATED: -5,
} as const;

export const seconds = (t: TimeMsg): number => Number(t.sec) + Number(t.nanosec) / 1e9;

interface Tolerance {
  position: number;
  velocity: number;
  acceleration: number;
}
export interface Tolerances {
  readonly path: readonly Tolerance[];
  readonly goal: readonly Tolerance[];
  readonly goalTime: number;
}

/** How a goal ended: the action status and the result. */
export interface GoalEnd {
  readonly status: 'succeeded' | 'aborted' | 'canceled';
  readonly errorCode: number;
  readonly errorString: string;
}

/** What the controller reports to a goal's owner while it runs. */
export interface FeedbackState {
  readonly desired: { positions: number[]; velocities: number[] };
  readonly actual: { positions: number[]; velocities: number[] };
  readonly error: { positions: number[]; velocities: number[] };
}

export interface ControllerGoal {
  readonly tolerances: Tolerances;
  feedback(state: FeedbackState): void;
  finish(end: GoalEnd): void;
}

interface Point {
  readonly t: number;
  readonly positions: number[];
  readonly velocities: number[] | undefined;
  readonly accelerations: number[] | undefined;
}

interface Active {
  /** Absolute start time (s) or undefined: starts at the first sample. */
  start: number | undefined;
  readonly points: readonly Point[];
  before: Point | undefined;
  /** A hold or stop trajectory: no tolerance checks. */
  readonly holding: boolean;
}

const STOPPED_VELOCITY_TOLERANCE = 0.01;

/** The controller's checks of an incoming trajectory (validate_trajectory_msg): undefined, or why it is refused. */
export function validateTrajectory(msg: TrajectoryMsg, joints: readonly string[], nowS: number): string | undefined {
  if (msg.joint_names.length !== joints.length)
    return "Joints on incoming trajectory don't match the controller joints.";
  if (msg.joint_names.length === 0) return 'Empty joint names on incoming trajectory.';
  if (msg.points.length === 0) return 'Empty trajectory received.';
  for (const name of msg.joint_names)
    if (!joints.includes(name)) return `Incoming joint ${name} doesn't match the controller's joints.`;
  const last = at(msg.points, msg.points.length - 1);
  for (let i = 0; i < last.velocities.length; i++)
    if (Math.abs(at(last.velocities, i)) > 1.1920929e-7)
      return `Velocity of last trajectory point of joint ${msg.joint_names[i]} is not zero: ${at(last.velocities, i).toFixed(15)}`;
  const start = seconds(msg.header.stamp);
  if (start !== 0 && start + seconds(last.time_from_start) < nowS)
    return `Received trajectory with non-zero start time (${start.toFixed(6)}) that ends in the past (${(start + seconds(last.time_from_start)).toFixed(6)})`;
  let previous = 0;
  for (let i = 0; i < msg.points.length; i++) {
    const p = at(msg.points, i);
    const t = seconds(p.time_from_start);
    if (i > 0 && t <= previous)
      return `Time between points ${i - 1} and ${i} is not strictly increasing, it is ${previous.toFixed(6)} and ${t.toFixed(6)} respectively`;
    previous = t;
    const n = msg.joint_names.length;
    if (p.positions.length !== n)
      return `Mismatch between joint_names size (${n}) and positions (${p.positions.length}) at point #${i}.`;
    if (p.velocities.length !== 0 && p.velocities.length !== n)
      return `Mismatch between joint_names size (${n}) and velocities (${p.velocities.length}) at point #${i}.`;
    if (p.accelerations.length !== 0 && p.accelerations.length !== n)
      return `Mismatch between joint_names size (${n}) and accelerations (${p.accelerations.length}) at point #${i}.`;
    if (p.effort.length !== 0)
      return "Trajectories with effort fields are only supported for controllers using the 'effort' command interface.";
  }
  return undefined;
}

/** The goal's tolerances over the defaults (get_segment_tolerances): -1 erases, 0 keeps the default, > 0 sets. */
export function segmentTolerances(
  joints: readonly string[],
  path: readonly JointToleranceMsg[],
  goal: readonly JointToleranceMsg[],
  goalTime: TimeMsg,
): Tolerances {
  const defaults: Tolerances = {
    path: joints.map(() => ({ position: 0, velocity: 0, acceleration: 0 })),
    goal: joints.map(() => ({ position: 0, velocity: STOPPED_VELOCITY_TOLERANCE, acceleration: 0 })),
    goalTime: 0,
  };
  const resolve = (fallback: number, value: number): number | undefined => {
    if (value > 0) return value;
    if (Math.abs(value + 1) < 1.1920929e-7) return 0;
    if (value < 0) return undefined;
    return fallback;
  };
  const apply = (base: readonly Tolerance[], given: readonly JointToleranceMsg[]): Tolerance[] | undefined => {
    const out = base.map((t) => ({ ...t }));
    for (const g of given) {
      const i = joints.indexOf(g.name);
      if (i < 0) return undefined;
      const t = at(out, i);
      const position = resolve(t.position, g.position);
      const velocity = resolve(t.velocity, g.velocity);
      const acceleration = resolve(t.acceleration, g.acceleration);
      if (position === undefined || velocity === undefined || acceleration === undefined) return undefined;
      out[i] = { position, velocity, acceleration };
    }
    return out;
  };
  const p = apply(defaults.path, path);
  if (!p) return defaults;
  const g = apply(defaults.goal, goal);
  if (!g) return defaults;
  const gt = resolve(0, seconds(goalTime));
  if (gt === undefined) return defaults;
  return { path: p, goal: g, goalTime: gt };
}

function within(tol: Tolerance, errP: number, errV: number): boolean {
  return !(tol.position > 0 && Math.abs(errP) > tol.position) && !(tol.velocity > 0 && Math.abs(errV) > tol.velocity);
}

/** Interpolates between two points (linear, cubic or quintic as both carry velocities/accelerations). */
function interpolate(a: Point, b: Point, t: number, out: { p: number[]; v: number[] }, n: number): void {
  const T = b.t - a.t;
  let s = t - a.t;
  let hasV = a.velocities !== undefined && b.velocities !== undefined;
  let hasA = hasV && a.accelerations !== undefined && b.accelerations !== undefined;
  if (s < 0) {
    s = 0;
    hasV = hasA = false;
  }
  if (s > T) {
    s = T;
    hasV = hasA = false;
  }
  for (let i = 0; i < n; i++) {
    const p0 = at(a.positions, i);
    const p1 = at(b.positions, i);
    if (T <= 0) {
      out.p[i] = p1;
      out.v[i] = 0;
    } else if (!hasV) {
      out.p[i] = p0 + ((p1 - p0) * s) / T;
      out.v[i] = (p1 - p0) / T;
    } else if (!hasA) {
      const v0 = at(a.velocities ?? [], i);
      const v1 = at(b.velocities ?? [], i);
      const c2 = (3 * (p1 - p0)) / T ** 2 - (2 * v0 + v1) / T;
      const c3 = (-2 * (p1 - p0)) / T ** 3 + (v0 + v1) / T ** 2;
      out.p[i] = p0 + v0 * s + c2 * s ** 2 + c3 * s ** 3;
      out.v[i] = v0 + 2 * c2 * s + 3 * c3 * s ** 2;
    } else {
      const v0 = at(a.velocities ?? [], i);
      const v1 = at(b.velocities ?? [], i);
      const a0 = at(a.accelerations ?? [], i);
      const a1 = at(b.accelerations ?? [], i);
      const T2 = T * T;
      const T3 = T2 * T;
      const c3 = (20 * (p1 - p0) - (8 * v1 + 12 * v0) * T - (3 * a0 - a1) * T2) / (2 * T3);
      const c4 = (30 * (p0 - p1) + (14 * v1 + 16 * v0) * T + (3 * a0 - 2 * a1) * T2) / (2 * T3 * T);
      const c5 = (12 * (p1 - p0) - 6 * (v1 + v0) * T - (a0 - a1) * T2) / (2 * T3 * T2);
      out.p[i] = p0 + v0 * s + (a0 / 2) * s ** 2 + c3 * s ** 3 + c4 * s ** 4 + c5 * s ** 5;
      out.v[i] = v0 + a0 * s + 3 * c3 * s ** 2 + 4 * c4 * s ** 3 + 5 * c5 * s ** 4;
    }
  }
}

export class TrajectoryController {
  private active: Active | undefined;
  private goal: ControllerGoal | undefined;
  private lastCommand: { p: number[]; v: number[] } | undefined;
  private firstSample = false;

  readonly joints: readonly string[];
  private readonly arm: Arm;

  constructor(joints: readonly string[], arm: Arm) {
    this.joints = joints;
    this.arm = arm;
  }

  /** True while a trajectory (not a hold) is being executed. */
  get executing(): boolean {
    return this.active !== undefined && !this.active.holding;
  }

  get hasGoal(): boolean {
    return this.goal !== undefined;
  }

  /** A validated message becomes the current trajectory (in the controller's joint order). */
  private load(msg: TrajectoryMsg, holding: boolean): void {
    const order = this.joints.map((j) => msg.joint_names.indexOf(j));
    const pick = (a: ArrayLike<number>) => (a.length === 0 ? undefined : order.map((k) => Number(a[k])));
    const start = seconds(msg.header.stamp);
    this.active = {
      start: start === 0 ? undefined : start,
      holding,
      before: undefined,
      points: msg.points.map((p) => ({
        t: seconds(p.time_from_start),
        positions: pick(p.positions) ?? [],
        velocities: pick(p.velocities),
        accelerations: pick(p.accelerations),
      })),
    };
  }

  /** The topic: a valid trajectory replaces the current one (an active goal stays active); undefined or why not. */
  replace(msg: TrajectoryMsg, nowS: number): string | undefined {
    const invalid = validateTrajectory(msg, this.joints, nowS);
    if (invalid) return invalid;
    this.load(msg, false);
    return undefined;
  }

  /** The action's goal callback: undefined (accept) or why it is rejected. */
  check(msg: TrajectoryMsg, nowS: number): string | undefined {
    return validateTrajectory(msg, this.joints, nowS);
  }

  /** An accepted goal: the active one is aborted (preempted), the new trajectory replaces the current one. */
  accept(msg: TrajectoryMsg, goal: ControllerGoal): void {
    this.preempt();
    this.load(msg, false);
    this.goal = goal;
  }

  private preempt(): void {
    const previous = this.goal;
    this.goal = undefined;
    previous?.finish({
      status: 'aborted',
      errorCode: FJT.INVALID_GOAL,
      errorString: 'Current goal preempted by new incoming action.',
    });
  }

  /** Cancel of a goal: only the active one is cancelled (then the arm stops); always accepted. */
  cancel(goal: ControllerGoal, nowS: number): void {
    if (this.goal !== goal) return;
    this.goal = undefined;
    goal.finish({ status: 'canceled', errorCode: FJT.SUCCESSFUL, errorString: '' });
    this.decelerate(nowS);
  }

  /** Aborts the active goal (shutdown, a fault) with an error string, and stops. */
  abort(errorString: string, nowS: number): void {
    const goal = this.goal;
    this.goal = undefined;
    goal?.finish({ status: 'aborted', errorCode: FJT.INVALID_GOAL, errorString });
    this.decelerate(nowS);
  }

  /** Stops whatever runs (goal cancelled first): the stop of `--stop-all`. */
  stopAll(nowS: number): void {
    const goal = this.goal;
    if (goal) this.cancel(goal, nowS);
    else this.decelerate(nowS);
  }

  /** Holds the arm where it is (after a teleport). */
  hold(): void {
    this.active = undefined;
    this.lastCommand = undefined;
  }

  /**
   * Stops from the current state at the acceleration limit (decelerate_on_cancel with the joint
   * acceleration limits as max_deceleration_on_cancel): a ramp to rest, then hold.
   */
  private decelerate(nowS: number): void {
    const p0 = [...this.arm.positions];
    const v0 = [...this.arm.velocities];
    const limits = this.arm.limits;
    const stopTimes = v0.map((v, i) => Math.abs(v) / at(limits, i).acceleration);
    const tStop = Math.max(0, ...stopTimes);
    const dt = 0.01;
    const points: Point[] = [];
    for (let k = 0; k <= Math.ceil(tStop / dt) + 1; k++) {
      const t = k * dt;
      const positions: number[] = [];
      const velocities: number[] = [];
      v0.forEach((v, i) => {
        const a = at(limits, i).acceleration * Math.sign(v);
        const tt = Math.min(t, at(stopTimes, i));
        positions.push(at(p0, i) + v * tt - 0.5 * a * tt * tt);
        velocities.push(t < at(stopTimes, i) ? v - a * t : 0);
      });
      points.push({ t, positions, velocities, accelerations: undefined });
    }
    this.active = { start: nowS, points, before: undefined, holding: true };
    this.lastCommand = undefined;
  }

  /** One control cycle at time nowS (period dt): commands the arm and checks the goal's tolerances. */
  update(nowS: number, dt: number): void {
    const n = this.joints.length;
    const active = this.active;
    if (!active) {
      const p = this.lastCommand?.p ?? [...this.arm.positions];
      this.arm.step(dt, p, new Array(n).fill(0));
      return;
    }
    if (active.start === undefined || active.before === undefined) {
      active.start ??= nowS;
      const from = this.lastCommand ?? { p: [...this.arm.positions], v: [...this.arm.velocities] };
      active.before = {
        t: nowS - active.start,
        positions: [...from.p],
        velocities: [...from.v],
        accelerations: undefined,
      };
      this.firstSample = true;
    }
    const t = nowS - active.start;
    const desired = this.sample(active, t);
    const next = this.sample(active, t + dt);
    const lastT = at(active.points, active.points.length - 1).t;
    const beforeLast = t < lastT;
    // The time since the segment's start point was reached (since the last point, past the end).
    let segmentStart = at(active.points, 0).t;
    for (const p of active.points) if (p.t <= t) segmentStart = p.t;
    const sinceSegment = t - segmentStart;
    const actual = { positions: [...this.arm.positions], velocities: [...this.arm.velocities] };
    const error = {
      positions: desired.p.map((d, i) => d - at(actual.positions, i)),
      velocities: desired.v.map((d, i) => d - at(actual.velocities, i)),
    };
    const tol = this.goal?.tolerances;
    let pathViolated = false;
    let outsideGoal = false;
    let withinGoalTime = true;
    if (!active.holding && tol) {
      for (let i = 0; i < n; i++) {
        if (
          (beforeLast || this.firstSample) &&
          !within(at(tol.path, i), at(error.positions, i), at(error.velocities, i))
        )
          pathViolated = true;
        if (!beforeLast && !within(at(tol.goal, i), at(error.positions, i), at(error.velocities, i))) {
          outsideGoal = true;
          if (tol.goalTime !== 0 && sinceSegment > tol.goalTime) withinGoalTime = false;
        }
      }
    } else if (!active.holding && !beforeLast) {
      // No goal: the default goal tolerance (stopped velocity) still decides when the trajectory is done.
      for (let i = 0; i < n; i++)
        if (Math.abs(at(error.velocities, i)) > STOPPED_VELOCITY_TOLERANCE) outsideGoal = true;
    }
    this.firstSample = false;
    if (!pathViolated && withinGoalTime) {
      this.lastCommand = { p: next.p, v: next.v };
      this.arm.step(dt, next.p, next.v);
    } else {
      this.arm.step(dt, this.lastCommand?.p ?? actual.positions, new Array(n).fill(0));
    }
    const goal = this.goal;
    if (goal) {
      goal.feedback({ desired: { positions: desired.p, velocities: desired.v }, actual, error });
      if (pathViolated) {
        this.goal = undefined;
        goal.finish({
          status: 'aborted',
          errorCode: FJT.PATH_TOLERANCE_VIOLATED,
          errorString: 'Aborted due to path tolerance violation',
        });
        this.decelerate(nowS);
      } else if (!beforeLast && !active.holding) {
        if (!outsideGoal) {
          this.goal = undefined;
          goal.finish({ status: 'succeeded', errorCode: FJT.SUCCESSFUL, errorString: 'Goal successfully reached!' });
          this.holdLastPoint(active);
        } else if (!withinGoalTime) {
          this.goal = undefined;
          goal.finish({
            status: 'aborted',
            errorCode: FJT.GOAL_TOLERANCE_VIOLATED,
            errorString: `Aborted due to goal_time_tolerance exceeding by ${sinceSegment.toFixed(6)} seconds`,
          });
          this.decelerate(nowS);
        }
      }
    } else if (!active.holding && !beforeLast && !outsideGoal) {
      this.holdLastPoint(active);
    }
  }

  private holdLastPoint(active: Active): void {
    const last = at(active.points, active.points.length - 1);
    this.active = { start: undefined, points: [{ ...last, t: 0 }], before: undefined, holding: true };
  }

  /** The desired state at trajectory time t. */
  private sample(active: Active, t: number): { p: number[]; v: number[] } {
    const n = this.joints.length;
    const out = { p: new Array<number>(n).fill(0), v: new Array<number>(n).fill(0) };
    const points = active.points;
    const first = at(points, 0);
    if (t < first.t && active.before) {
      interpolate(active.before, first, t, out, n);
      return out;
    }
    for (let i = 0; i < points.length - 1; i++) {
      const a = at(points, i);
      const b = at(points, i + 1);
      if (t >= a.t && t < b.t) {
        interpolate(a, b, t, out, n);
        return out;
      }
    }
    const last = at(points, points.length - 1);
    for (let i = 0; i < n; i++) {
      out.p[i] = at(last.positions, i);
      out.v[i] = last.velocities?.[i] ?? 0;
    }
    return out;
  }
}
