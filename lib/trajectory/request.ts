/**
 * The path both trajectory endpoints share once the body is read: check it on the worker thread
 * (parsing, bounds, limits, the execution from the arm's state), re-check the start against the
 * arm's state at publication, publish.
 */
import { errorResponse, json, type ApiError } from '../http/errors.ts';
import type { JointLimits } from '../robot/limits.ts';
import { type RobotContext, ros } from '../ros/context.ts';
import { type CheckSource, unpackPoints, violationIssue } from './check.ts';
import { type ArmState, refreshStart } from './dynamics.ts';
import { toTrajectoryPoints } from './points.ts';
import { publishPoints } from './publish.ts';
import { checkOffThread } from './worker-pool.ts';

/** The arm's state from the latest joint state, J1..J7 by name (velocities 0 when not reported), and its receipt time. */
export function latestArmState(context: RobotContext, limits: JointLimits): { state: ArmState; receivedAtMs: number } | undefined {
  const latest = context.latestJointState();
  if (!latest) return undefined;
  const { name, position, velocity } = latest.msg;
  const positions: number[] = [];
  const velocities: number[] = [];
  for (const joint of limits.jointNames) {
    const k = name.indexOf(joint);
    const q = position[k];
    if (k < 0 || q === undefined || !Number.isFinite(q)) return undefined;
    positions.push(q);
    const qd = velocity[k] ?? 0;
    velocities.push(Number.isFinite(qd) ? qd : 0);
  }
  return { state: { positions, velocities }, receivedAtMs: latest.receivedAtMs };
}

/** The response for a check failure; validation issues arrive already bounded from the worker. */
function failureResponse(error: ApiError): Response {
  return error.kind === 'validation' ? json({ detail: error.issues }, 422) : errorResponse(error);
}

/**
 * Checks `source` off the event loop and publishes the result as `label` (for the log), adding
 * `extra` to the answer. With validate_limits the velocities armgate filled in are published,
 * the first point's re-derived from the arm's state at that moment (the check ran on an older one).
 */
export async function checkAndPublish(source: CheckSource, transfer: ArrayBuffer[], label: string, extra: Record<string, string> = {}): Promise<Response> {
  const context = ros();
  const limits = context.limits;
  const before = latestArmState(context, limits);
  const result = await checkOffThread({ source, state: before?.state, limits }, transfer);
  if (!result.ok) return failureResponse(result.error);
  const points = unpackPoints(result.points);
  const now = result.filled ? latestArmState(ros(), limits) : undefined;
  const first = points[0];
  if (now && first && now.receivedAtMs !== before?.receivedAtMs) {
    const refreshed = refreshStart(now.state, toTrajectoryPoints(points.slice(0, 2)), limits);
    if (refreshed.violation) return failureResponse({ kind: 'validation', issues: [violationIssue(refreshed.violation, limits, source.kind)] });
    points[0] = { ...first, ...(refreshed.first.velocities ? { velocities: refreshed.first.velocities } : {}) };
  }
  return publishPoints(points, label, extra);
}
