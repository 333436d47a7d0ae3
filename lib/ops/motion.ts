import * as v from 'valibot';
import { type ApiError, unavailable } from '../core/errors.ts';
import type { MotionState } from '../events/bus.ts';
import { callerGone } from '../control/dead-man.ts';
import { systemClock } from '../clock.ts';
import { err, ok, type Result } from '../result.ts';
import type { GoalOptions, InterfaceUnavailable } from '../ros/context.ts';
import type { MotionResultMsg } from '../ros/messages.ts';
import type { OpContext } from '../core/operation.ts';
import { PlanSchema } from '../plans/schema.ts';

/** The motion result resource. */
export const MotionResultSchema = v.pipe(
  v.object({
    success: v.pipe(
      v.boolean(),
      v.description(
        'true: the arm reached the target. false: planning or execution failed, or the motion was stopped or timed out; nothing more will move.',
      ),
    ),
    message: v.pipe(v.string(), v.description('What happened, in one sentence a person can act on.')),
    plan: v.optional(v.pipe(PlanSchema, v.description('With dry_run: the plan (nothing moved).'))),
  }),
  v.title('MotionResult'),
);

/** The motion result. */
export type MotionResult = v.InferOutput<typeof MotionResultSchema>;

/** Errors common to the motion operations. */
export const MOTION_ERRORS = {
  busy: 'The arm is busy with another motion, a trajectory or a sequence (no queue).',
  unavailable: 'The motion interface of the stack is unavailable.',
} as const;

/**
 * What the three move operations share: a motion (idempotent: the same target twice is one motion),
 * the motion result, the motion errors, and a JSON body under the robot tag (with the REST defaults of fields the
 * request may leave out).
 */
export function moveOperation(
  path: string,
  operationId: string,
  example: Readonly<Record<string, unknown>>,
  defaults?: Readonly<Record<string, unknown>>,
) {
  return {
    effect: 'motion',
    idempotent: true,
    output: MotionResultSchema,
    errors: MOTION_ERRORS,
    rest: {
      method: 'POST',
      path,
      operationId,
      tags: ['robot'],
      body: 'json',
      ok: 'The motion finished, failed or was stopped: check success. With dry_run: the plan, nothing moved.',
      example,
      ...(defaults ? { defaults } : {}),
    },
  } as const;
}

/** The services a watched call reaches (see {@link watchCall}): declare them in the operation's `needs`. */
export const WATCH_NEEDS = ['clock', 'deadMan', 'trajectoryLog', 'control'] as const;
/** The services a motion reaches (see {@link runMotion}): declare them in the operation's `needs`. */
export const MOTION_NEEDS = [...WATCH_NEEDS, 'arbiter', 'events'] as const;

/** How often progress is reported while a motion runs (ms). */
const PROGRESS_EVERY_MS = 500;
/** What a motion cancelled by its MCP client answers. */
export const CANCELLED_REASON = 'the client cancelled the call';

/**
 * Watches a call that moves the arm: progress every half second (seconds since the start, of
 * `totalS` when known), and when the caller cancels (an MCP client's notifications/cancelled)
 * everything stops exactly as the stop operation does. So it does when the caller is gone (the
 * dead-man, lib/control/dead-man.ts), unless `armgate.safety.dead_man` is false; the trajectory log
 * says why. Returns the function that ends the watch.
 */
export function watchCall(
  ctx: OpContext<(typeof WATCH_NEEDS)[number]>,
  describe: () => string,
  totalS?: number | ((elapsedS: number) => number | undefined),
): () => void {
  const clock = ctx.services.clock ?? systemClock;
  const started = clock.nowMs();
  const report = () => {
    const elapsedS = (clock.nowMs() - started) / 1000;
    const total = typeof totalS === 'function' ? totalS(elapsedS) : totalS;
    // A motion that runs a little longer than expected shows a full bar, never progress beyond its total.
    ctx.progress(elapsedS, total === undefined ? undefined : Math.max(total, elapsedS), describe());
  };
  const ticker = clock.every(PROGRESS_EVERY_MS, report);
  ticker.unref?.();
  const cancel = () => {
    const gone = callerGone(ctx.signal);
    if (gone && ctx.services.deadMan === false) {
      ctx.services.trajectoryLog.push(`${describe()}: ${String(ctx.signal.reason)}; the motion goes on (dead_man off)`);
      return;
    }
    const reason = gone ? String(ctx.signal.reason) : CANCELLED_REASON;
    ctx.services.trajectoryLog.push(`${gone ? 'dead-man' : 'cancelled'}: ${reason}; stopping (${describe()})`);
    void ctx.services.control.stop(reason);
  };
  // A call cancelled before its motion began (during a confirmation, say) stops at once: an abort listener added to an
  // aborted signal never runs. The stop revokes the lease synchronously, so the goal is never sent.
  if (ctx.signal.aborted) cancel();
  else ctx.signal.addEventListener('abort', cancel, { once: true });
  report();
  return () => {
    ticker.cancel();
    ctx.signal.removeEventListener('abort', cancel);
  };
}

/**
 * Runs a motion under the arbiter: busy (409) at once when the arm is held, otherwise the call's
 * result `{success, message}` (unavailable when the interface did not answer). The call gets the
 * lease's signal: a stop revokes the lease, which cancels the goal. When the caller cancels (an
 * MCP client's notifications/cancelled), everything stops exactly as the stop operation does.
 * While it runs, progress is reported (see {@link watchCall}).
 */
export async function runMotion(
  ctx: OpContext<(typeof MOTION_NEEDS)[number]>,
  what: string,
  call: (options: GoalOptions) => Promise<Result<MotionResultMsg, InterfaceUnavailable>>,
): Promise<Result<MotionResult, ApiError>> {
  const { arbiter, events } = ctx.services;
  const lease = arbiter.acquire('move', what, [], ctx.arrivedAtStop);
  if (!lease.ok) return err(lease.error);
  let phase = 'planning';
  const clock = ctx.services.clock ?? systemClock;
  const started = clock.nowMs();
  /** Seconds from the call's start to the expected end of the execution, once the stack said how long it takes. */
  let totalS: number | undefined;
  const done = watchCall(
    ctx,
    () => `${what}: ${phase}`,
    () => totalS,
  );
  const motionId = events?.nextMotionId() ?? 0;
  events?.publish('motion', { id: motionId, kind: 'move', state: 'started', message: what });
  let ended: { state: MotionState; message: string } = {
    state: 'failed',
    message: 'the motion ended without a result',
  };
  try {
    const result = await call({
      signal: lease.value.signal,
      onFeedback: (state, durationS) => {
        phase = state;
        if (state === 'executing' && durationS !== undefined && Number.isFinite(durationS))
          totalS = (clock.nowMs() - started) / 1000 + durationS;
      },
    });
    if (!result.ok) {
      ended = { state: 'failed', message: result.error.message };
      return err(unavailable(result.error));
    }
    const { success, message } = result.value;
    ended = { state: success ? 'finished' : lease.value.signal.aborted ? 'stopped' : 'failed', message };
    return ok({ success, message });
  } finally {
    done();
    lease.value.release();
    events?.publish('motion', { id: motionId, kind: 'move', ...ended });
  }
}
