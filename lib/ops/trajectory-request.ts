/**
 * The path both trajectory endpoints share once the body is read: 409 at once when something else
 * holds the arm, then check it on the worker thread
 * (parsing, bounds, limits, the execution from the arm's state), build the message in slices,
 * re-check the start against the arm's state at publication, publish. Nothing here holds the
 * event loop for long, whatever the size of the trajectory.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { ApiError } from '../core/errors.ts';
import { err, type Result } from '../result.ts';
import { busyRefusal, STOPPED_SINCE_ARRIVAL } from '../control/arbiter.ts';
import type { JointLimits } from '../robot/limits.ts';
import type { RobotContext } from '../ros/context.ts';
import { durationFromS, type JointTrajectoryPointMsg } from '../ros/messages.ts';
import { type CheckSource, type PackedPoints, packedPoint, violationIssue } from '../trajectory/check.ts';
import { type ArmState, refreshStart } from '../planning/dynamics.ts';
import type { OpContext } from '../core/operation.ts';
import { PUBLISH_NEEDS, publishPoints, type TrajectorySent } from './trajectory-publish.ts';
import { checkOffThread } from '../trajectory/worker-pool.ts';

/** Message points built per turn of the event loop (a few milliseconds). */
const POINTS_PER_TURN = 1024;

/** The arm's state from the latest joint state, J1..J7 by name (velocities 0 when not reported), and its receipt time. */
export function latestArmState(
  context: RobotContext,
  limits: JointLimits,
): { state: ArmState; receivedAtMs: number } | undefined {
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

/**
 * The empty arrays of every point (accelerations, effort; velocities when none): one shared, frozen array instead of
 * two or three per point. A 10 MiB CSV is 100,000 points: its messages live until the trajectory is published, and
 * every object of them is copied by each young-generation collection meanwhile (issue 37: scavenges of 30-130 ms under
 * 16 uploads on a loaded machine).
 */
const NONE = Object.freeze([]) as unknown as number[];

/** The JointTrajectoryPoint messages of packed points, built {@link POINTS_PER_TURN} at a time. */
async function pointMessages(packed: PackedPoints): Promise<JointTrajectoryPointMsg[]> {
  const { count, joints, times, positions, velocities } = packed;
  const out: JointTrajectoryPointMsg[] = new Array(count);
  for (let i = 0; i < count; i++) {
    if (i > 0 && i % POINTS_PER_TURN === 0) await nextTurn();
    const at = i * joints;
    const q: number[] = new Array(joints);
    const qd: number[] = velocities ? new Array(joints) : NONE;
    for (let j = 0; j < joints; j++) {
      q[j] = positions[at + j] ?? 0;
      if (velocities) qd[j] = velocities[at + j] ?? 0;
    }
    out[i] = {
      positions: q,
      velocities: qd,
      accelerations: NONE,
      effort: NONE,
      time_from_start: durationFromS(times[i] ?? 0),
    };
  }
  return out;
}

/** The refusal of a request a stop came after (the arbiter's, lib/control/arbiter.ts), or undefined. */
function stoppedSinceArrival(ctx: OpContext<'arbiter'>): ApiError | undefined {
  const { arbiter } = ctx.services;
  if (ctx.arrivedAtStop === undefined || ctx.arrivedAtStop === arbiter.stopCount) return undefined;
  return { kind: 'busy', detail: STOPPED_SINCE_ARRIVAL };
}

/** The services a trajectory request reaches (checked, then published): declare them in the operation's `needs`. */
export const TRAJECTORY_NEEDS = [...PUBLISH_NEEDS, 'safety'] as const;

/**
 * Checks `source` off the event loop and publishes the result as `label` (for the log), adding
 * `extra` to the answer. With validate_limits the velocities armgate filled in are published,
 * the first point's re-derived from the arm's state at that moment (the check ran on an older one).
 */
export async function checkAndPublish(
  source: CheckSource,
  transfer: ArrayBuffer[],
  label: string,
  extra: { readonly file?: string },
  ctx: OpContext<(typeof TRAJECTORY_NEEDS)[number]>,
): Promise<Result<TrajectorySent, ApiError>> {
  // A held arm is a 409 at once, before the check on the worker; the lease is taken at publication.
  const busy = ctx.services.arbiter.activity(['trajectory']);
  // (With wait, the trajectory holds the arm until its outcome, as a move does.)
  if (busy) return err(busyRefusal(busy));
  // A stop since the request arrived refuses it (the arbiter, at publication): said at once, before the check and the
  // messages are made for nothing (16 uploads of 10 MiB checked one after another, then each refused).
  const stopped = stoppedSinceArrival(ctx);
  if (stopped) return err(stopped);
  const context = ctx.ros;
  const limits = context.limits;
  const before = latestArmState(context, limits);
  const safety = ctx.services.safety;
  const envelope = safety?.envelope ? { chain: safety.chain, envelope: safety.envelope } : undefined;
  // Waiting for the checker, it is refused as soon as its turn comes if a stop came meanwhile (not checked for nothing).
  const result = await checkOffThread(
    { source, state: before?.state, limits, ...(envelope ? { envelope } : {}) },
    transfer,
    () => stoppedSinceArrival(ctx),
  );
  if (!result.ok) return err(result.error);
  const stoppedMeanwhile = stoppedSinceArrival(ctx);
  if (stoppedMeanwhile) return err(stoppedMeanwhile);
  const packed = result.points;
  const messages = await pointMessages(packed);
  // From here to the publication nothing awaits: the state read now is the one the controller starts from.
  const now = result.filled ? latestArmState(context, limits) : undefined;
  const first = messages[0];
  if (now && first && now.receivedAtMs !== before?.receivedAtMs) {
    const head = packed.count > 1 ? [packedPoint(packed, 0), packedPoint(packed, 1)] : [packedPoint(packed, 0)];
    const refreshed = refreshStart(now.state, head, limits);
    if (refreshed.violation)
      return err({
        kind: 'validation',
        issues: [violationIssue(refreshed.violation, limits, source.kind, result.firstRows)],
      });
    messages[0] = { ...first, velocities: [...(refreshed.first.velocities ?? first.velocities)] };
  }
  const ignored = result.ignoredColumns?.length ? { ignored_columns: [...result.ignoredColumns] } : {};
  return publishPoints({ messages, times: packed.times }, label, { ...extra, ...ignored }, ctx, result.wait);
}
