/**
 * Plan, then execute: a move with `dry_run` plans and checks everything a move would (limits,
 * collisions, the safety envelope) without moving and keeps the plan; executing it runs exactly
 * that trajectory once, through the arbiter, only while the arm is still at its start.
 */
import { type MotionState, motionStateOfOutcome } from '../events/bus.ts';
import { type ApiError, unavailable } from '../core/errors.ts';
import { createFkWorkspace, forwardKinematics } from '../kinematics/fk.ts';
import { newPlanId, type PlanView, type StoredPlan } from '../plans/store.ts';
import { err, ok, type Result } from '../result.ts';
import type { MotionPlanRequest } from '../ros/context.ts';
import { type JointTrajectoryMsg, secondsOf } from '../ros/messages.ts';
import { createEnvelopeChecker } from '../safety/envelope.ts';
import { systemClock } from '../clock.ts';
import type { SafetyState } from '../safety/store.ts';
import { latestArmState } from './trajectory-request.ts';
import { type MotionResult, WATCH_NEEDS, watchCall } from './motion.ts';
import type { OpContext } from '../core/operation.ts';

/** How close (rad, every joint) the arm must be to a plan's start for it to run. */
export const PLAN_START_TOLERANCE_RAD = 1e-3;
/** Most points of a plan's display path. */
const PATH_POINTS = 50;

const round = (x: number, digits = 4) => Number(x.toFixed(digits));

/** The display view of a planned trajectory, with its clearance to the envelope. */
function viewOf(
  safety: SafetyState | undefined,
  id: string,
  planner: string,
  trajectory: JointTrajectoryMsg,
  expiresAtMs: number,
): PlanView {
  const points = trajectory.points;
  const first = points[0]?.positions ?? [];
  const last = points.at(-1);
  const chain = safety?.chain;
  const fk = chain && chain.jointNames.length > 0 ? createFkWorkspace(chain) : undefined;
  const path: { t_s: number[]; joints: number[][]; tcp: number[][] } = { t_s: [], joints: [], tcp: [] };
  const count = Math.min(points.length, PATH_POINTS);
  for (let k = 0; k < count; k++) {
    const p = points[count === 1 ? 0 : Math.round((k * (points.length - 1)) / (count - 1))];
    if (!p) break;
    path.t_s.push(round(secondsOf(p.time_from_start)));
    path.joints.push(p.positions.map((q) => round(q)));
    if (chain && fk) {
      forwardKinematics(chain, p.positions, fk);
      path.tcp.push([round(fk.tipPos[0] ?? 0), round(fk.tipPos[1] ?? 0), round(fk.tipPos[2] ?? 0)]);
    }
  }
  let clearance: number | null = null;
  if (safety?.envelope && chain && chain.jointNames.length > 0) {
    const checker = createEnvelopeChecker(chain, safety.envelope);
    let best = Number.POSITIVE_INFINITY;
    for (const p of points) best = Math.min(best, checker.clearance(p.positions));
    clearance = Number.isFinite(best) ? round(best) : null;
  }
  return {
    id,
    planner,
    duration_s: last ? round(secondsOf(last.time_from_start), 3) : 0,
    start_joints: [...first],
    final_joints: [...(last?.positions ?? first)],
    path,
    min_clearance_m: clearance,
    expires_at: new Date(expiresAtMs).toISOString(),
  };
}

/** The services a dry run reaches (the plan's life is counted on the app's clock): declare them in `needs`. */
export const DRY_RUN_NEEDS = ['safety', 'plans', 'clock'] as const;
/** The services a plan's execution reaches: declare them in the operation's `needs`. */
export const EXECUTE_NEEDS = [...WATCH_NEEDS, 'plans', 'arbiter', 'events'] as const;

/**
 * A dry run: plans `request` as the move would, without moving or taking the arm, and keeps the
 * plan for `safety.plan_ttl_s`: the simulator's own planners, or on ros2 MoveIt's plan-only
 * service, the plan held to the envelope along its whole path either way. 200 success false with
 * the reason when there is no plan (also on a context that cannot plan without moving).
 */
export async function dryRun(
  ctx: OpContext<(typeof DRY_RUN_NEEDS)[number]>,
  what: string,
  request: MotionPlanRequest,
): Promise<Result<MotionResult, ApiError>> {
  const context = ctx.ros;
  if (!context.planMotion)
    return ok({
      success: false,
      message:
        'dry runs need a backend that plans without moving (the simulator, or MoveIt on ros2); this one cannot, so nothing was planned',
    });
  const answer = await context.planMotion(request, { signal: ctx.signal });
  if (!answer.ok) return err(unavailable(answer.error));
  if (!answer.value.success) {
    const reason = answer.value.message;
    return ok({
      success: false,
      message: `${what}: ${reason}${reason.endsWith('nothing moved') ? '' : '; nothing moved'}`,
    });
  }
  const { safety, plans } = ctx.services;
  const ttlS = safety?.planTtlS ?? 60;
  // The app's clock (the process clock in production): a plan's life is counted on the time the arm runs on.
  const nowMs = (ctx.services.clock ?? systemClock).epochMs();
  const expiresAtMs = nowMs + ttlS * 1000;
  const id = newPlanId();
  const trajectory = answer.value.trajectory;
  const view = viewOf(safety, id, answer.value.planner, trajectory, expiresAtMs);
  const plan: StoredPlan = { view, trajectory, what, expiresAtMs };
  plans.keep(plan, nowMs);
  return ok({
    success: true,
    message: `planned (${what}, ${view.duration_s} s with ${view.planner}); nothing moved: execute plan ${id} with {op:execute_plan} within ${ttlS} s, while the arm is still at its start`,
    plan: view,
  });
}

/**
 * Executes a kept plan once: 404 when it is unknown or expired, 409 when it already ran, when the
 * arm has left its start (by more than {@link PLAN_START_TOLERANCE_RAD} on any joint) or when the
 * arm is busy; otherwise exactly its trajectory goes to the controller under the arbiter and the
 * answer is the controller's outcome (success true when it finished).
 */
export async function executePlan(
  ctx: OpContext<(typeof EXECUTE_NEEDS)[number]>,
  id: string,
): Promise<Result<MotionResult, ApiError>> {
  const found = ctx.services.plans.lookup(id, (ctx.services.clock ?? systemClock).epochMs());
  if (found.kind === 'unknown')
    return err({ kind: 'not_found', detail: `no plan '${id.slice(0, 64)}': plan again with dry_run: true` });
  if (found.kind === 'expired')
    return err({
      kind: 'not_found',
      detail: `plan '${id}' expired at ${found.plan.view.expires_at}: plan again with dry_run: true`,
    });
  if (found.kind === 'executed')
    return err({
      kind: 'busy',
      detail: `plan '${id}' was already executed at ${found.plan.executedAt}; a plan runs once: plan again with dry_run: true`,
    });
  const plan = found.plan;
  const context = ctx.ros;
  const arm = latestArmState(context, context.limits);
  if (!arm)
    return err({ kind: 'unavailable', detail: 'no joint state: cannot tell whether the arm is at the plan start' });
  const start = plan.view.start_joints;
  let worst = 0;
  let worstJoint = 0;
  arm.state.positions.forEach((q, j) => {
    const off = Math.abs(q - (start[j] ?? 0));
    if (off > worst) {
      worst = off;
      worstJoint = j;
    }
  });
  if (worst > PLAN_START_TOLERANCE_RAD)
    return err({
      kind: 'busy',
      detail: `the arm is no longer at the start of plan '${id}' (${context.limits.jointNames[worstJoint]} is ${worst.toFixed(4)} rad away, more than ${PLAN_START_TOLERANCE_RAD}); nothing moved: plan again with dry_run: true`,
    });
  const { arbiter, events } = ctx.services;
  const lease = arbiter.acquire('move', `executing plan '${id}' (${plan.what})`, [], ctx.arrivedAtStop);
  if (!lease.ok) return err(lease.error);
  plan.executedAt = new Date((ctx.services.clock ?? systemClock).epochMs()).toISOString();
  const done = watchCall(ctx, () => `executing plan '${id}'`, plan.view.duration_s);
  const motionId = events?.nextMotionId() ?? 0;
  const motion = (state: MotionState, message: string) =>
    events?.publish('motion', { id: motionId, kind: 'move', state, message });
  motion('started', `executing plan '${id}' (${plan.what})`);
  try {
    const outcome = await context.executeTrajectory(plan.trajectory, { signal: lease.value.signal });
    if (!outcome.ok) {
      motion('failed', outcome.error.message);
      return err(unavailable(outcome.error));
    }
    motion(motionStateOfOutcome(outcome.value.outcome), outcome.value.message);
    const finished = outcome.value.outcome === 'finished';
    return ok({
      success: finished,
      message: finished
        ? `plan '${id}' executed: ${outcome.value.message}`
        : `plan '${id}' did not finish (${outcome.value.outcome}): ${outcome.value.message}`,
    });
  } finally {
    done();
    lease.value.release();
  }
}
