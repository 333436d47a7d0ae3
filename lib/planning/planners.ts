/**
 * The planners of a pose target, as one table from the request's `planner` name to a planning
 * generator (run in slices by the caller, see lib/sim/sliced.ts): ptp, lin, circ, ompl and chomp.
 * Pure: the collision model, the clock and the randomness come in through {@link PlanEnv}.
 */
import type { Chain } from '../kinematics/chain.ts';
import { createIkWorkspace, solveIk } from '../kinematics/ik.ts';
import { quatFromMat } from '../kinematics/rotation.ts';
import type { JointLimits } from '../robot/limits.ts';
import { err, ok, type Result } from '../result.ts';
import { planCartesianSteps, tcpPose } from './cartesian.ts';
import { optimizeChomp } from './chomp.ts';
import type { MotionScales } from './limits.ts';
import { arcPath, type CartesianPath, type CircAux, linePath } from './paths.ts';
import { planPtp, ptpDurationS } from './ptp.ts';
import { type JointSpace, planRrtConnect, segmentValid, shortcutPath, smoothPath } from './rrt-connect.ts';
import { timeParameterize } from './timing.ts';
import type { JointTrajectory } from './trajectory.ts';

/** A contact between two bodies, as the collision model names it. */
export interface PlanContact {
  readonly a: string;
  readonly b: string;
}

/** What the planners need of the collision model. */
export interface PlanCollisions {
  collisionAt(qRad: ArrayLike<number>): PlanContact | undefined;
  obstacleCost(qRad: ArrayLike<number>, epsilonM: number, gradOut: Float64Array): number;
}

/** The arm and the budgets the planners work with. */
export interface PlanEnv {
  readonly chain: Chain;
  readonly limits: JointLimits;
  readonly collisions: PlanCollisions;
  /** Budget of a sampling or optimizing planner (s). */
  readonly planningTimeS: number;
  /** Longest motion planned (s of motion): a longer one fails before it is sampled. */
  readonly maxDurationS: number;
  readonly nowMs: () => number;
  readonly random: () => number;
}

/** A pose target from the current joints. */
export interface PoseRequest {
  readonly startRad: readonly number[];
  /** TCP position (m) and row-major rotation in the planning frame. */
  readonly position: readonly number[];
  readonly rotation: Float64Array;
  /** The requested ABC (rad), for messages. */
  readonly abc: readonly [number, number, number];
  readonly scales: MotionScales;
  /** CIRC's auxiliary point, when given. */
  readonly circ?: CircAux;
}

/** Why a plan failed: too long for the motion timeout (its duration, s of motion), or a message. */
export type PlanFailure =
  | { readonly kind: 'too_long'; readonly durationS: number }
  | { readonly kind: 'failed'; readonly message: string };

/** A planner: a generator that yields between bounded steps and returns the trajectory or why not. */
export type Planner = (request: PoseRequest, env: PlanEnv) => Generator<void, Result<JointTrajectory, PlanFailure>>;

const failed = (message: string) => err<PlanFailure>({ kind: 'failed', message });
const fmt = (v: readonly number[]) => `(${v.map((x) => x.toFixed(3)).join(', ')})`;
/** Time budget for the IK of a joint-space planner's goal, in slices of at most {@link IK_SLICE_MS}. */
const IK_BUDGET_MS = 50;
const IK_SLICE_MS = 4;

/** IK of the pose target from the current joints (the solution nearest them first), in short slices. */
function* goalConfiguration(request: PoseRequest, env: PlanEnv): Generator<void, Result<number[], PlanFailure>> {
  const ws = createIkWorkspace(env.chain);
  const end = env.nowMs() + IK_BUDGET_MS;
  const { limits } = env;
  for (;;) {
    const deadlineMs = Math.min(end, env.nowMs() + IK_SLICE_MS);
    const options = { deadlineMs, nowMs: env.nowMs, random: env.random };
    const ik = solveIk(
      env.chain,
      limits.minRad,
      limits.maxRad,
      request.position,
      request.rotation,
      request.startRad,
      options,
      ws,
    );
    if (ik.status === 'converged') return ok(Array.from(ik.qRad));
    if (env.nowMs() >= end) break;
    yield;
  }
  return failed(
    `no inverse kinematics solution for ${fmt(request.position)} m with ABC ${fmt(request.abc)} rad within the joint limits: the pose is out of reach`,
  );
}

/** The goal configuration, refused when it collides. */
function* freeGoal(request: PoseRequest, env: PlanEnv): Generator<void, Result<number[], PlanFailure>> {
  const goal = yield* goalConfiguration(request, env);
  if (!goal.ok) return goal;
  const contact = env.collisions.collisionAt(goal.value);
  if (contact) return failed(`the target is in collision (${contact.a} with ${contact.b}); choose another target`);
  return goal;
}

/** The joint space of the sampling planners: the limits and the collision check. */
function jointSpace(env: PlanEnv): JointSpace {
  return {
    minRad: env.limits.minRad,
    maxRad: env.limits.maxRad,
    isValid: (q) => env.collisions.collisionAt(q) === undefined,
    random: env.random,
  };
}

/** Pilz-style PTP to the IK goal; a motion longer than the bound fails before it is sampled. */
function* ptp(request: PoseRequest, env: PlanEnv): Generator<void, Result<JointTrajectory, PlanFailure>> {
  const goal = yield* goalConfiguration(request, env);
  if (!goal.ok) return goal;
  const durationS = ptpDurationS(request.startRad, goal.value, env.limits, request.scales);
  if (!(durationS <= env.maxDurationS)) return err({ kind: 'too_long', durationS });
  return ok(planPtp(request.startRad, goal.value, env.limits, request.scales));
}

/** LIN or CIRC along `path` with time-optimal timing (see cartesian.ts). */
function* cartesian(
  name: string,
  path: CartesianPath,
  request: PoseRequest,
  env: PlanEnv,
): Generator<void, Result<JointTrajectory, PlanFailure>> {
  const options = { nowMs: env.nowMs, maxDurationS: env.maxDurationS };
  const planned = yield* planCartesianSteps(env.chain, env.limits, path, request.startRad, request.scales, options);
  if (planned.ok) return planned;
  const f = planned.error;
  return f.reason === 'too_long'
    ? err({ kind: 'too_long', durationS: f.durationS ?? Number.POSITIVE_INFINITY })
    : failed(`${name}: ${f.message}`);
}

/** The TCP pose of the start and the target orientation as a quaternion. */
function ends(request: PoseRequest, env: PlanEnv) {
  return { from: tcpPose(env.chain, request.startRad), orientation: quatFromMat(request.rotation) };
}

function* lin(request: PoseRequest, env: PlanEnv): Generator<void, Result<JointTrajectory, PlanFailure>> {
  const { from, orientation } = ends(request, env);
  return yield* cartesian(
    'lin',
    linePath(from.position, from.orientation, request.position, orientation),
    request,
    env,
  );
}

function* circ(request: PoseRequest, env: PlanEnv): Generator<void, Result<JointTrajectory, PlanFailure>> {
  if (!request.circ)
    return failed(
      'circ needs an auxiliary point: give circ_center (the arc centre) or circ_interim (a point on the arc), as {x, y, z} in metres',
    );
  const { from, orientation } = ends(request, env);
  const arc = arcPath(from.position, from.orientation, request.position, orientation, request.circ);
  if (!arc.ok) return failed(`circ: ${arc.error}`);
  return yield* cartesian('circ', arc.value, request, env);
}

/** RRT-Connect in joint space, shortcut and smoothed, then time-parameterized within the limits. */
function* ompl(request: PoseRequest, env: PlanEnv): Generator<void, Result<JointTrajectory, PlanFailure>> {
  const goal = yield* freeGoal(request, env);
  if (!goal.ok) return goal;
  const space = jointSpace(env);
  const deadlineMs = env.nowMs() + env.planningTimeS * 1000;
  const found = yield* planRrtConnect(space, [...request.startRad], goal.value, { deadlineMs, nowMs: env.nowMs });
  if (!found.ok) return failed(`ompl (RRT-Connect): ${found.error} (${env.planningTimeS} s budget)`);
  const shortcut = yield* shortcutPath(space, found.value, 200);
  const path = yield* smoothPath(space, shortcut, 3);
  return ok(timeParameterize(path, env.limits, request.scales));
}

/** CHOMP from the straight joint-space line, then time-parameterized within the limits. */
function* chomp(request: PoseRequest, env: PlanEnv): Generator<void, Result<JointTrajectory, PlanFailure>> {
  const goal = yield* freeGoal(request, env);
  if (!goal.ok) return goal;
  const epsilon = 0.05;
  const problem = {
    startRad: [...request.startRad],
    goalRad: goal.value,
    minRad: env.limits.minRad,
    maxRad: env.limits.maxRad,
    obstacleCost: (q: ArrayLike<number>, grad: Float64Array) => env.collisions.obstacleCost(q, epsilon, grad),
  };
  const result = yield* optimizeChomp(problem, {
    deadlineMs: env.nowMs() + env.planningTimeS * 1000,
    nowMs: env.nowMs,
  });
  const space = jointSpace(env);
  for (let i = 1; i < result.path.length; i++) {
    if (!segmentValid(space, result.path[i - 1] ?? [], result.path[i] ?? [], 0.02)) {
      return failed(
        `chomp found no collision-free path after ${result.iterations} iterations (obstacle cost ${result.obstacleCost.toFixed(4)}); try ompl`,
      );
    }
    yield;
  }
  return ok(timeParameterize(result.path, env.limits, request.scales));
}

/** The planners by the name a request gives (lower case). */
export const POSE_PLANNERS = { ptp, lin, circ, ompl, chomp } as const satisfies Record<string, Planner>;

/** The planner names, in the order messages list them. */
export const POSE_PLANNER_NAMES = Object.keys(POSE_PLANNERS) as readonly (keyof typeof POSE_PLANNERS)[];

/** The planner for `name` (any case), or a message listing the known ones. */
export function plannerFor(name: string): Result<Planner, string> {
  const key = name.toLowerCase();
  if (Object.hasOwn(POSE_PLANNERS, key)) return ok(POSE_PLANNERS[key as keyof typeof POSE_PLANNERS]);
  return err(`unknown planner '${name}'; use one of ${POSE_PLANNER_NAMES.join(', ')}`);
}
