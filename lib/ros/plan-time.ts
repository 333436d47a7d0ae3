/**
 * A trajectory on the ros2 backend in plan time: the controller's message as a path armgate follows (so that a
 * pause, a resume or the override can re-time its rest, lib/ros/retimed-path.ts), a re-timed path as the
 * controller's message again, and whether a message is a stop's hold point. Pure: the caller gives the state and
 * the clock's time.
 */
import { holdRestS } from './hold.ts';
import type { JointTrajectory } from '../planning/trajectory.ts';
import type { JointLimits } from '../robot/limits.ts';
import { durationFromS, type JointStateMsg, type JointTrajectoryMsg, secondsOf } from './messages.ts';
import { RetimedPath } from './retimed-path.ts';

/**
 * A hold point (what a stop publishes: one point where the arm is): no path to pause, never refused. `state`: the
 * current joint state in the endpoints' order, if one is fresh.
 */
export function isHoldPoint(msg: JointTrajectoryMsg, state: JointStateMsg | undefined): boolean {
  if (msg.points.length !== 1) return false;
  // Without a current state nothing can tell: a lone point is let through as before (a stop must never be refused).
  if (!state) return true;
  return holdRestS(msg.points, state.position, state.velocity ?? []) !== undefined;
}

/**
 * The trajectory as the controller will follow it, from `state` (its t = 0, received now: `nowMs`), in the order of
 * `names`; undefined with a future header stamp, a joint not named, no state or no point.
 */
export function pathOf(
  msg: JointTrajectoryMsg,
  names: readonly string[],
  state: JointStateMsg | undefined,
  limits: JointLimits,
  nowMs: number,
): RetimedPath | undefined {
  if (msg.header.stamp.sec !== 0 || msg.header.stamp.nanosec !== 0) return undefined;
  const index = names.map((n) => msg.joint_names.indexOf(n));
  if (index.some((i) => i < 0)) return undefined;
  if (!state) return undefined;
  const pick = (values: readonly number[]) =>
    values.length === msg.joint_names.length ? index.map((i) => values[i] ?? 0) : undefined;
  const points = msg.points.map((p) => {
    const velocities = pick(p.velocities);
    const accelerations = velocities ? pick(p.accelerations) : undefined;
    return {
      positions: index.map((i) => p.positions[i] ?? 0),
      ...(velocities ? { velocities } : {}),
      ...(accelerations ? { accelerations } : {}),
      timeFromStartS: secondsOf(p.time_from_start),
    };
  });
  const first = points[0];
  if (!first) return undefined;
  // The controller joins from the state at receipt to a first point later than 0.
  if (first.timeFromStartS > 0) {
    const velocity = state.velocity;
    points.unshift({
      positions: [...state.position],
      ...(velocity && velocity.length === names.length ? { velocities: [...velocity] } : {}),
      timeFromStartS: 0,
    });
  }
  return new RetimedPath({ jointNames: names, points }, limits, nowMs);
}

/** A trajectory of the joints `names` as the controller's message (times from its receipt). */
export function messageOf(trajectory: JointTrajectory, names: readonly string[]): JointTrajectoryMsg {
  return {
    header: { stamp: { sec: 0, nanosec: 0 }, frame_id: '' },
    joint_names: [...names],
    points: trajectory.points.map((p) => ({
      positions: [...p.positions],
      velocities: [...(p.velocities ?? [])],
      accelerations: [...(p.accelerations ?? [])],
      effort: [],
      time_from_start: durationFromS(p.timeFromStartS),
    })),
  };
}
