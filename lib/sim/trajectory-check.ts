/**
 * The simulated controller's checks of an incoming trajectory (lib/sim/controller.ts): read its points as they came,
 * check what does not depend on the arm's state (in slices), then its start against the current state.
 */
import type { JointSample, JointTrajectory, TrajectoryPoint } from '../planning/trajectory.ts';
import { describeLimitViolation, findLimitViolation, type JointLimits } from '../robot/limits.ts';
import { err, ok, type Result } from '../result.ts';
import { type JointTrajectoryMsg, type JointTrajectoryPointMsg, secondsOf } from '../ros/messages.ts';
import {
  executedKnots,
  firstViolation,
  type LimitViolation,
  type Quantity,
  START_TOLERANCE_RAD,
} from '../planning/dynamics.ts';

/** Points per slice of {@link checkRequested} (lib/sim/controller.ts follows in slices): a few milliseconds of checks. */
export const SLICE_POINTS = 2048;

/** Read access to the points of an incoming trajectory, a JointTrajectory or a message as it came (no copy). */
export interface PointSource {
  readonly jointNames: readonly string[];
  readonly count: number;
  positions(i: number): readonly number[];
  velocities(i: number): readonly number[] | undefined;
  accelerations(i: number): readonly number[] | undefined;
  timeS(i: number): number;
}

export function trajectorySource(trajectory: JointTrajectory): PointSource {
  const at = (i: number) => trajectory.points[i] as TrajectoryPoint;
  return {
    jointNames: trajectory.jointNames,
    count: trajectory.points.length,
    positions: (i) => at(i).positions,
    velocities: (i) => at(i).velocities,
    accelerations: (i) => at(i).accelerations,
    timeS: (i) => at(i).timeFromStartS,
  };
}

/** A message's points: empty velocity or acceleration arrays mean none (positions only: linear). */
export function messageSource(msg: JointTrajectoryMsg): PointSource {
  const at = (i: number) => msg.points[i] as JointTrajectoryPointMsg;
  return {
    jointNames: msg.joint_names,
    count: msg.points.length,
    positions: (i) => at(i).positions,
    velocities: (i) => (at(i).velocities.length > 0 ? at(i).velocities : undefined),
    accelerations: (i) => (at(i).accelerations.length > 0 ? at(i).accelerations : undefined),
    timeS: (i) => secondsOf(at(i).time_from_start),
  };
}

/** The requested points, reordered and checked, and the first violation between them (if any). */
export interface Requested {
  readonly points: TrajectoryPoint[];
  readonly later: LimitViolation | undefined;
}

/** What the controller refuses on receipt: its analytic check covers positions and velocities (accelerations are the drive's). */
export const REFUSED: ReadonlySet<Quantity> = new Set<Quantity>(['position', 'velocity']);

/**
 * The checks that do not depend on the current state, yielding every {@link SLICE_POINTS}
 * points: joint names, each point (reordered to the controller's joints, strictly increasing
 * times, positions within the limits, finite numbers), and the segments between the points
 * (positions and velocities, analytically).
 */
export function* checkRequested(source: PointSource, limits: JointLimits): Generator<void, Result<Requested, string>> {
  const names = limits.jointNames;
  const count = source.count;
  if (count === 0) return err('the trajectory has no points');
  const seen = new Set<string>();
  for (const name of source.jointNames) {
    if (!names.includes(name)) return err(`unknown joint '${name}' (the controller has ${names.join(', ')})`);
    if (seen.has(name)) return err(`joint '${name}' appears twice`);
    seen.add(name);
  }
  const missing = names.filter((n) => !seen.has(n));
  if (missing.length > 0) return err(`the trajectory lacks ${missing.join(', ')}`);
  const order = names.map((n) => source.jointNames.indexOf(n));
  const inOrder = order.every((k, j) => k === j);
  const pick = (values: readonly number[] | undefined) =>
    values && values.length === names.length ? (inOrder ? values : order.map((i) => values[i] ?? 0)) : undefined;
  const points: TrajectoryPoint[] = new Array(count);
  let previousT = -1;
  for (let index = 0; index < count; index++) {
    if (index > 0 && index % SLICE_POINTS === 0) yield;
    const given = source.positions(index);
    const timeFromStartS = source.timeS(index);
    if (given.length !== names.length)
      return err(`point ${index} has ${given.length} positions, expected ${names.length}`);
    if (!(timeFromStartS > previousT))
      return err(
        `point ${index}: time_from_start ${timeFromStartS} s does not increase (the controller needs strictly increasing times)`,
      );
    previousT = timeFromStartS;
    const positions = pick(given) ?? [];
    const outside = findLimitViolation(limits, positions);
    if (outside) return err(`point ${index}: ${describeLimitViolation(outside)}`);
    const velocities = pick(source.velocities(index));
    const accelerations = velocities ? pick(source.accelerations(index)) : undefined;
    if (velocities?.some((x) => !Number.isFinite(x)) || accelerations?.some((x) => !Number.isFinite(x))) {
      return err(`point ${index} has a velocity or acceleration that is not a finite number`);
    }
    if (accelerations && velocities) points[index] = { positions, velocities, accelerations, timeFromStartS };
    else if (velocities) points[index] = { positions, velocities, timeFromStartS };
    else points[index] = { positions, timeFromStartS };
  }
  // Segments between the requested points; the one into the first point needs the state (checkStart).
  const none = { positions: [], velocities: [] };
  let later: LimitViolation | undefined;
  for (let from = 1; from < count && !later; from += SLICE_POINTS) {
    yield;
    const segments = { from, to: Math.min(count, from + SLICE_POINTS) };
    later = firstViolation({ knots: points, offset: 0 }, none, limits, { quantities: REFUSED, segments });
  }
  return ok({ points, later });
}

/**
 * The checks that depend on the current state: a first point at t = 0 must be where the arm is;
 * otherwise the segment from the current state to the first point is checked. The earliest
 * violation wins. Returns the trajectory to execute (the current state prepended). `r` is the rate of a moving
 * trajectory it takes over from (else 1).
 */
export function checkStart(
  requested: Requested,
  limits: JointLimits,
  state: JointSample,
  r: number,
): Result<JointTrajectory, string> {
  const names = limits.jointNames;
  const first = requested.points[0] as TrajectoryPoint;
  if (first.timeFromStartS === 0) {
    const offset = Math.max(...first.positions.map((v, j) => Math.abs(v - (state.q[j] ?? 0))));
    if (offset > START_TOLERANCE_RAD) {
      return err(
        `the first point is at time 0 but ${offset.toFixed(4)} rad away from the current position: following it would jump`,
      );
    }
  }
  // Taken over from a trajectory running at a rate r < 1, the new one starts at that rate too: in its own plan
  // time the arm's velocities are qd / r (and accelerations about qdd / r^2), and that is what it must continue.
  const per = (x: number, k: number) => (r > 0 && r < 1 ? x / r ** k : x);
  const current = {
    positions: Array.from(state.q),
    velocities: Array.from(state.qd, (x) => per(x, 1)),
    accelerations: Array.from(state.qdd, (x) => per(x, 2)),
  };
  const executed = executedKnots(current, requested.points);
  const startViolation =
    executed.offset === 1
      ? firstViolation(executed, current, limits, { quantities: REFUSED, segments: { from: 1, to: 2 } })
      : undefined;
  const violation = startViolation ?? requested.later;
  if (violation) {
    const name = names[violation.joint];
    if (violation.quantity === 'velocity') {
      return err(
        `${name} would need ${violation.value.toFixed(3)} rad/s near t = ${violation.atS.toFixed(3)} s (limit ${limits.maxVelRadS[violation.joint]} rad/s)`,
      );
    }
    const bounds = `[${limits.minRad[violation.joint]}, ${limits.maxRad[violation.joint]}]`;
    return err(
      `point ${violation.point}: ${name} would reach ${violation.value.toFixed(4)} rad near t = ${violation.atS.toFixed(3)} s, outside its limits ${bounds}`,
    );
  }
  return ok({ jointNames: names, points: executed.knots });
}
