/** The simulator's execution rate (pause, resume, override) and the wait of a pause for the arm to rest. */
import type { ExecutionRateAnswer, InterfaceUnavailable } from '../ros/context.ts';
import { ok, type Result } from '../result.ts';
import type { ControllerEvent, TrajectoryController } from './controller.ts';
import type { ProgressDeadline } from './deadline.ts';
import type { SimDriver } from './driver.ts';

/** What a rate change reaches in the simulated context. */
export interface RatePorts {
  readonly controller: TrajectoryController;
  readonly driver: SimDriver;
  /** The motion deadlines in force (they count progress at the rate). */
  readonly deadlines: Iterable<ProgressDeadline>;
  /** Ends of the pauses still waiting for the arm to come to rest. */
  readonly pauseWaits: Set<() => void>;
  onControllerEvents(listener: (event: ControllerEvent) => void): () => void;
}

/**
 * Time-scales the execution (lib/planning/time-scaling.ts): the trajectory in progress and every
 * later one run at `rate` (0..1) of their planned speed, the change within the acceleration
 * limits and the path unchanged. 0 pauses: the answer comes when the arm rests on its path (or
 * nothing executes any more), `signal` ends the wait early.
 */
export async function changeExecutionRate(
  ports: RatePorts,
  rate: number,
  options: { readonly signal?: AbortSignal } = {},
): Promise<Result<ExecutionRateAnswer, InterfaceUnavailable>> {
  ports.controller.setRateTarget(rate);
  if (ports.controller.needsUpdates()) ports.driver.wake();
  for (const deadline of ports.deadlines) deadline.poke();
  // A pause still braking is over once the rate goes up again (a resume, a stop's clearing).
  if (rate > 0) for (const end of [...ports.pauseWaits]) end();
  if (ports.controller.isJogging()) return ok(await pauseJog(ports, rate, options.signal));
  const executing = ports.controller.activeId() !== undefined;
  if (rate > 0 || !executing || ports.controller.isPausedAtRest())
    return ok({
      executing,
      message: executing ? `the trajectory in progress runs at ${Math.round(rate * 100)} %` : 'no trajectory executes',
    });
  const rested = await new Promise<boolean>((resolve) => {
    const done = (value: boolean) => {
      unsubscribe();
      ports.pauseWaits.delete(ended);
      options.signal?.removeEventListener('abort', ended);
      resolve(value);
    };
    const ended = () => done(false);
    const unsubscribe = ports.onControllerEvents((event) => {
      if (event.kind === 'paused') done(true);
      else if (event.kind === 'hold' || ports.controller.activeId() === undefined) done(false);
    });
    ports.pauseWaits.add(ended);
    if (options.signal?.aborted) ended();
    else options.signal?.addEventListener('abort', ended, { once: true });
  });
  return ok({
    executing: rested,
    message: rested
      ? 'the trajectory in progress came to rest on its path and holds there'
      : 'the motion ended before it came to rest',
  });
}

/** A jog under a new rate: at 0 (paused) the answer comes once its arm rests (it holds there while commanded). */
async function pauseJog(ports: RatePorts, rate: number, signal: AbortSignal | undefined): Promise<ExecutionRateAnswer> {
  if (rate > 0) return { executing: true, message: `the jog runs at ${Math.round(rate * 100)} % of its speed` };
  const rests = () => ports.controller.state.qd.every((v) => v === 0);
  const rested =
    rests() ||
    (await new Promise<boolean>((resolve) => {
      const done = (value: boolean) => {
        unsubscribe();
        ports.pauseWaits.delete(ended);
        signal?.removeEventListener('abort', ended);
        resolve(value);
      };
      const ended = () => done(false);
      const unsubscribe = ports.onControllerEvents((event) => {
        if (event.kind === 'jog' && event.state === 'resting') done(true);
        else if (event.kind === 'hold' || !ports.controller.isJogging()) done(false);
      });
      ports.pauseWaits.add(ended);
      if (signal?.aborted) ended();
      else signal?.addEventListener('abort', ended, { once: true });
    }));
  return {
    executing: rested && ports.controller.isJogging(),
    message: rested ? 'the jog came to rest and holds there' : 'the jog ended before it came to rest',
  };
}
