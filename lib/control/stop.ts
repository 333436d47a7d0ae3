import type { EventBus } from '../events/bus.ts';
import type { LogRing } from '../logs/ring.ts';
import type { RobotContext } from '../ros/context.ts';
import type { MotionArbiter } from './arbiter.ts';
import { holdPoint } from '../ros/hold.ts';

/** What a stop did. */
export interface StopReport {
  readonly message: string;
  readonly sequence_stopped: boolean;
  readonly hold_published: boolean;
  readonly planner_stopped: boolean;
}

/**
 * What a stop reaches: the one owner of the arm, the context the hold and the planner's stop go to, the sequence
 * runners it ends, the trajectory module's log and the event bus it reports to, and the pause it ends. The pendant
 * (MotionControl, lib/control/pause.ts) hands them: a stop is one of its buttons, and nothing here calls back into it
 * but `pause.cleared`.
 */
export interface StopParts {
  readonly arbiter: MotionArbiter;
  readonly context: RobotContext;
  /** Ends every runner still alive; resolves true when one was running (absent: none run). */
  readonly runners?: { stop(): Promise<boolean> } | undefined;
  readonly log: LogRing;
  readonly events?: EventBus | undefined;
  /** The pause, over once the motion is cancelled: later motions run at the override again. */
  readonly pause: { cleared(reason: string): Promise<void> };
}

/**
 * Stops everything the service started, in order: (1) synchronously, whatever holds the arm
 * loses it (its goal is cancelled, a runner's goals refused) and every runner still alive is told
 * to stop (stop message, SIGTERM), so that a goal the hold point preempts reads as stopped, not as
 * the sequence failing; (2) a hold point at the current position is published (an empty
 * trajectory without a fresh joint state); (3) the planner's stop service is called; (4) this
 * waits for every runner's exit (SIGKILL after 3 s). `reason` is what a motion cut short answers.
 */
export async function stopEverything(parts: StopParts, reason = 'stopped'): Promise<StopReport> {
  const { arbiter } = parts;
  // Until the stop answers, nothing takes the arm; requests that arrived before the answer never do.
  const revoked = arbiter.beginStop(reason);
  try {
    return await stopAfterRevoke(parts, reason, revoked);
  } finally {
    arbiter.endStop();
  }
}

async function stopAfterRevoke(
  reach: StopParts,
  reason: string,
  revoked: ReturnType<MotionArbiter['revoke']>,
): Promise<StopReport> {
  const { context, runners, log: trajectoryLog, events, pause } = reach;
  const t0 = performance.now();
  const runnersEnded = runners?.stop() ?? Promise.resolve(false);
  const latest = context.latestJointState();
  const fresh = latest && context.nowMs() - latest.receivedAtMs <= 500 ? latest.msg : undefined;
  const names = [...context.endpoints.joint_names];
  const order = fresh ? names.map((n) => fresh.name.indexOf(n)) : [];
  const positions = fresh && order.every((i) => i >= 0) ? order.map((i) => fresh.position[i] ?? 0) : undefined;
  const velocities = fresh ? order.map((i) => fresh.velocity[i] ?? 0) : [];
  // The hold point is timed so that the arm decelerates within its limits (a 0 s point is a step for a position drive).
  const published = await context.publishTrajectory(
    {
      header: { stamp: { sec: 0, nanosec: 0 }, frame_id: '' },
      joint_names: names,
      points: positions ? [holdPoint(positions, velocities, context.limits)] : [],
    },
    { hold: true },
  );
  const tHold = performance.now();
  trajectoryLog.push(
    `stop: ${positions ? 'hold point at the current position' : 'empty trajectory (no current joint state)'} ${published.ok ? 'published' : `not published: ${published.error.message}`}`,
  );
  const planner = await context.callStop();
  const tPlanner = performance.now();
  const plannerStopped = planner.ok && planner.value.success;
  // Only now, the paused motion cancelled: the pause is over and later motions run at the override again.
  await pause.cleared(reason);
  const sequenceStopped = await runnersEnded;
  const tEnd = performance.now();
  // Where a stop's time goes (ms from its start): docs/benchmarks.md reads these.
  trajectoryLog.push(
    `stop: timings ms: hold published ${ms(tHold - t0)}, planner's stop answered ${ms(tPlanner - t0)}, answered ${ms(tEnd - t0)}`,
  );
  if (revoked) trajectoryLog.push(`stop: revoked the arm from ${revoked.detail}`);
  const parts = [
    sequenceStopped ? 'sequence runner stopped' : 'no sequence was running',
    published.ok
      ? positions
        ? 'hold point published'
        : 'empty trajectory published (no joint state)'
      : 'hold not published',
    plannerStopped
      ? 'planner stopped'
      : `planner stop failed${planner.ok ? `: ${planner.value.message}` : `: ${planner.error.message}`}`,
  ];
  const report: StopReport = {
    message: parts.join('; '),
    sequence_stopped: sequenceStopped,
    hold_published: published.ok,
    planner_stopped: plannerStopped,
  };
  events?.publish('stop', { reason, ...report, revoked: revoked?.detail ?? null });
  return report;
}

const ms = (x: number) => x.toFixed(2);
