/** A trajectory executed on the simulated controller, answered with its outcome (finished, refused, stopped, ...). */
import type { InterfaceUnavailable, TrajectoryWaitOptions } from '../ros/context.ts';
import { type JointTrajectoryMsg, secondsOf, type TrajectoryOutcome } from '../ros/messages.ts';
import { ok, type Result } from '../result.ts';
import type { ControllerEvent, TrajectoryController } from './controller.ts';
import type { SimDriver } from './driver.ts';

/** What an execution reaches in the simulated context. */
export interface ExecutionPorts {
  readonly controller: TrajectoryController;
  readonly driver: SimDriver;
  /** The sim's time scale (sim.time_scale) and the motion timeout (timeouts.motion_s) the default limit adds. */
  readonly timeScale: number;
  readonly motionTimeoutS: number;
  /** The context's clock (ms). */
  nowMs(): number;
  onControllerEvents(listener: (event: ControllerEvent) => void): () => void;
  /** A motion timeout that counts execution progress (lib/sim/deadline.ts). */
  deadline(budgetS: number, onExpire: () => void): { cancel(): void };
  /** Goes out on the controller's trajectory topic. */
  deliverTrajectory(msg: JointTrajectoryMsg): void;
  /** What publishing on the trajectory topic does (an empty trajectory: stop and hold). */
  publishTrajectory(msg: JointTrajectoryMsg): Promise<unknown>;
}

/**
 * Executes a trajectory on the simulated controller and answers with its outcome, from the
 * controller's events: finished, refused (its checks), preempted (a newer trajectory or a
 * motion goal), stopped (a cancel, an empty trajectory, a hold point, or `options.signal`:
 * then the controller decelerates and holds) or timeout (then it is stopped likewise).
 */
export async function executeOnController(
  ports: ExecutionPorts,
  msg: JointTrajectoryMsg,
  options: TrajectoryWaitOptions = {},
): Promise<Result<TrajectoryOutcome, InterfaceUnavailable>> {
  const startedMs = ports.nowMs();
  const answer = (outcome: TrajectoryOutcome['outcome'], message: string): Result<TrajectoryOutcome, never> =>
    ok({ outcome, message, duration_s: Math.round(ports.nowMs() - startedMs) / 1000 });
  const reason = (signal: AbortSignal) => (typeof signal.reason === 'string' ? signal.reason : 'stopped');
  const signal = options.signal;
  if (signal?.aborted) return answer('stopped', `${reason(signal)}: nothing was sent`);
  if (msg.points.length === 0) {
    await ports.publishTrajectory(msg);
    return answer('stopped', 'an empty trajectory: the controller stops and holds');
  }
  const last = msg.points.at(-1);
  const durationS = last ? secondsOf(last.time_from_start) : 0;
  const limitS = options.timeoutS ?? durationS / ports.timeScale + ports.motionTimeoutS;
  let id: number | undefined;
  let settle: (outcome: Result<TrajectoryOutcome, never>) => void = () => undefined;
  const outcome = new Promise<Result<TrajectoryOutcome, never>>((resolve) => {
    settle = resolve;
  });
  const stopIfActive = () => {
    if (id !== undefined && ports.controller.activeId() === id) ports.controller.cancel();
  };
  const unsubscribe = ports.onControllerEvents((event) => {
    if (id === undefined || id === 0) {
      if (id === 0 && event.kind === 'hold') settle(answer('finished', 'a hold point: the arm came to rest and holds'));
      return;
    }
    if (event.kind === 'finished' && event.id === id)
      settle(answer('finished', `trajectory #${id} finished at its last point (${durationS.toFixed(3)} s)`));
    else if (event.kind === 'preempted' && event.id === id)
      settle(answer('preempted', `trajectory #${id} was preempted by a newer trajectory or motion`));
    else if (event.kind === 'cancelled' && event.id === id)
      settle(
        answer(
          'stopped',
          `trajectory #${id} was stopped (a stop, a hold point or a cancel); the arm decelerates and holds`,
        ),
      );
  });
  // Settled before the cancel, whose own 'cancelled' event would otherwise answer first.
  const onAbort = () => {
    if (signal) settle(answer('stopped', `${reason(signal)}: the arm decelerates and holds`));
    stopIfActive();
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  const timer = ports.deadline(limitS, () => {
    settle(answer('timeout', `no outcome within ${limitS.toFixed(3)} s: the trajectory was stopped`));
    stopIfActive();
  });
  try {
    ports.deliverTrajectory(msg);
    const followed = await ports.controller.followMessage(msg, () => ports.driver.nowS());
    if (!followed.ok) {
      if (signal?.aborted) return answer('stopped', `${reason(signal)}: nothing was executed`);
      const superseded = followed.error.startsWith('superseded');
      return answer(
        superseded ? 'preempted' : 'refused',
        `the controller ${superseded ? 'dropped' : 'refused'} the trajectory: ${followed.error}`,
      );
    }
    id = followed.value;
    if (id === 0 && !ports.controller.isMoving())
      return answer('finished', 'a hold point: the arm is at rest and holds');
    if (id !== 0) ports.driver.wake();
    if (signal?.aborted) onAbort();
    return await outcome;
  } finally {
    timer.cancel();
    signal?.removeEventListener('abort', onAbort);
    unsubscribe();
  }
}
