/**
 * Pause, resume and the speed override, as on a robot's own pendant: one state per app, driving
 * the context's execution rate (RobotContext.setExecutionRate: 0 while paused, else override/100).
 * A pause holds whatever moves on its own path (a move, a trajectory, a plan's execution, a
 * sequence's goal) without cancelling it; while paused the arm belongs to the paused motion (other
 * motion requests get 409 saying so); a resume continues it; a stop ends it as any other.
 */
import type { EventBus } from '../events/bus.ts';
import type { RobotContext } from '../ros/context.ts';
import { err, ok, type Result } from '../result.ts';
import type { ArmActivity } from '../ros/context.ts';
import type { MotionArbiter } from './arbiter.ts';

/** The override's bounds (percent). */
export const OVERRIDE_MIN = 1;
export const OVERRIDE_MAX = 100;

/** What a pause did. */
export interface PauseReport {
  /** A motion is paused now (false: nothing moved, or it ended before it came to rest). */
  readonly paused: boolean;
  readonly message: string;
  /** What was paused, in words; null when nothing was. */
  readonly what: string | null;
}

/** What a resume did. */
export interface ResumeReport {
  readonly resumed: true;
  readonly message: string;
  readonly what: string;
}

/** The override in force. */
export interface OverrideReport {
  readonly percent: number;
  readonly message: string;
}

/** Why a pause or a change could not be made (a 409 or a 503). */
export type PauseRefusal =
  | { readonly kind: 'busy'; readonly detail: string }
  | { readonly kind: 'unavailable'; readonly detail: string };

interface Paused {
  readonly what: string;
  readonly sinceIso: string;
}

/** The pendant state of one app: paused or not, and the override. */
export class MotionControl {
  private paused: Paused | undefined;
  private percent = OVERRIDE_MAX;
  private readonly arbiter: MotionArbiter;
  private readonly context: () => RobotContext;
  private readonly events: EventBus | undefined;
  private readonly runners: RunnerRates | undefined;
  private readonly stopAll: ((reason: string) => Promise<unknown>) | undefined;

  /**
   * `stopAll` is POST /stop's work (stopEverything): a pause whose sequence runner does not confirm it
   * ends everything with it, so that nothing moves on after the answer.
   */
  constructor(
    arbiter: MotionArbiter,
    context: () => RobotContext,
    events?: EventBus,
    runners?: RunnerRates,
    stopAll?: (reason: string) => Promise<unknown>,
  ) {
    this.arbiter = arbiter;
    this.context = context;
    this.events = events;
    this.runners = runners;
    this.stopAll = stopAll;
    // While paused the arm belongs to the paused motion: checked before anything else holding it.
    arbiter.addSource(() => this.activity(), { first: true });
    arbiter.onRelease(() => this.settle());
  }

  /** The paused motion as an arm activity (nothing preempts it), or undefined. */
  activity(): ArmActivity | undefined {
    if (!this.paused) return undefined;
    return { kind: 'paused', detail: `a paused motion (${this.paused.what}) holds the arm` };
  }

  /** Paused now: what and since when (ISO time); undefined when not. */
  state(): { readonly what: string; readonly since: string } | undefined {
    return this.paused ? { what: this.paused.what, since: this.paused.sinceIso } : undefined;
  }

  /** The override in percent (1..100). */
  overridePercent(): number {
    return this.percent;
  }

  /**
   * Pauses whatever moves: the execution rate goes to 0 and this answers once the arm rests on
   * its path (or the motion ended first). Nothing moving: nothing is paused. Twice: the same answer.
   */
  async pause(signal?: AbortSignal): Promise<Result<PauseReport, PauseRefusal>> {
    const context = this.context();
    if (!context.setExecutionRate) return err(notOnThisBackend('pause'));
    const moving = this.paused ? undefined : this.arbiter.activity();
    if (!this.paused && !moving)
      return ok({ paused: false, message: 'nothing moves: there is nothing to pause', what: null });
    if (moving?.kind === 'stopping')
      return ok({ paused: false, message: 'the arm is braking to rest after a stop: nothing to pause', what: null });
    const first = !this.paused;
    if (!this.paused) this.paused = { what: moving?.detail ?? 'a motion', sinceIso: new Date().toISOString() };
    const what = this.paused.what;
    if (first) {
      this.events?.publish('pause', { state: 'pausing', what });
      this.events?.publishMotionState('paused', `paused: ${what}`);
    }
    // Sequence runners that send their goals themselves (ros2) pause theirs, and the context waits for
    // the rest only once each has confirmed it: between two goals the arm rests at once, while a
    // runner that has not yet heard of the pause may be sending its next goal.
    const stops = this.arbiter.stopCount;
    const runners = (await this.runners?.setRate(0)) ?? ok(0);
    // A stop (or a resume, or the motion's end) came while the runners confirmed: it has the last word.
    if (this.arbiter.stopCount !== stops)
      return ok({ paused: false, message: 'a stop ended the motion before it came to rest: nothing is paused', what });
    if (!runners.ok) return this.runnerRefused(runners.error, what, first);
    if (!this.paused)
      return ok({
        paused: false,
        message: 'the motion was resumed or ended before it came to rest: nothing is paused',
        what,
      });
    const rested = await context.setExecutionRate(0, {
      ...(signal ? { signal } : {}),
      ...(moving ? { holder: moving } : {}),
      pausedElsewhere: runners.value > 0,
    });
    if (!rested.ok) {
      this.paused = undefined;
      void this.runners?.setRate(this.percent / 100);
      // The events said "pausing": say that it did not pause, and why (the motion goes on).
      if (first) {
        this.events?.publish('resume', { what, ended: `not paused: ${rested.error.message}` });
        this.events?.publishMotionState('resumed', `not paused: ${rested.error.message}`);
      }
      return err({ kind: 'unavailable', detail: rested.error.message });
    }
    this.settle();
    if (!this.paused)
      return ok({ paused: false, message: 'the motion ended before it came to rest: nothing is paused', what });
    if (first) this.events?.publish('pause', { state: 'paused', what });
    return ok({
      paused: true,
      message: `paused at rest on its path: ${what}; resume continues it, stop ends it`,
      what,
    });
  }

  /**
   * A sequence runner did not confirm the pause (no answer within its bound, or it could not apply
   * it): it may still be sending goals, so everything is stopped as by POST /stop (the runner ended,
   * a hold point, the planner's stop) and the pause answers 503 saying so. Without a stop to call
   * (a MotionControl built without one) nothing is paused and the runners are told the override.
   */
  private async runnerRefused(
    why: string,
    what: string,
    first: boolean,
  ): Promise<{ readonly ok: false; readonly error: PauseRefusal }> {
    if (this.stopAll) {
      const reason = `${why}: everything was stopped as by POST /stop`;
      await this.stopAll(reason);
      return err({ kind: 'unavailable', detail: `not paused: ${reason} (the sequence ended; the arm holds)` });
    }
    this.paused = undefined;
    void this.runners?.setRate(this.percent / 100);
    if (first) {
      this.events?.publish('resume', { what, ended: `not paused: ${why}` });
      this.events?.publishMotionState('resumed', `not paused: ${why}`);
    }
    return err({ kind: 'unavailable', detail: `not paused: ${why}` });
  }

  /** Continues the paused motion from where it rests, at the override's rate; 409 when nothing is paused. */
  async resume(): Promise<Result<ResumeReport, PauseRefusal>> {
    const context = this.context();
    if (!context.setExecutionRate) return err(notOnThisBackend('resume'));
    const paused = this.paused;
    if (!paused) return err({ kind: 'busy', detail: 'nothing is paused: there is nothing to resume' });
    this.paused = undefined;
    void this.runners?.setRate(this.percent / 100);
    const changed = await context.setExecutionRate(this.percent / 100);
    if (!changed.ok) {
      this.paused = paused;
      // Paused again before the answer: the runners' goals held as before the resume.
      const runners = (await this.runners?.setRate(0)) ?? ok(0);
      if (!runners.ok) return this.runnerRefused(runners.error, paused.what, false);
      return err({ kind: 'unavailable', detail: changed.error.message });
    }
    this.events?.publish('resume', { what: paused.what, override_percent: this.percent });
    this.events?.publishMotionState('resumed', `resumed: ${paused.what}`);
    return ok({
      resumed: true,
      message: `resumed at ${this.percent} %: ${paused.what}`,
      what: paused.what,
    });
  }

  /** Sets the override (1..100 %): the motion in progress changes speed smoothly, later ones start at it. */
  async setOverride(percent: number): Promise<Result<OverrideReport, PauseRefusal>> {
    const context = this.context();
    if (!context.setExecutionRate) return err(notOnThisBackend('the speed override'));
    const previous = this.percent;
    this.percent = Math.min(OVERRIDE_MAX, Math.max(OVERRIDE_MIN, Math.round(percent)));
    if (!this.paused) {
      void this.runners?.setRate(this.percent / 100);
      const changed = await context.setExecutionRate(this.percent / 100);
      if (!changed.ok) {
        this.percent = previous;
        return err({ kind: 'unavailable', detail: changed.error.message });
      }
    }
    this.events?.publish('override', { percent: this.percent, previous });
    const where = this.paused ? ' (the paused motion resumes at it)' : '';
    return ok({ percent: this.percent, message: `override ${previous} % -> ${this.percent} %${where}` });
  }

  /**
   * A stop ended everything (call it after the stop cancelled the motion): the pause is over, the
   * execution rate is the override's again.
   */
  async cleared(reason: string): Promise<void> {
    const paused = this.paused;
    this.paused = undefined;
    // Not waited for: a stop ends the runners whatever they answer.
    void this.runners?.setRate(this.percent / 100);
    await this.context().setExecutionRate?.(this.percent / 100);
    if (paused) this.events?.publish('resume', { what: paused.what, ended: reason });
  }

  /** A pause with nothing left to hold (the motion ended, its holder let go) is over. */
  private settle(): void {
    if (!this.paused || this.arbiter.activity(['paused'])) return;
    void this.cleared('the paused motion ended');
  }
}

/**
 * Where sequence runners that send their own goals are told of the rate (the supervisor): resolves
 * with how many were told once each has applied it, or with why one did not confirm it in time.
 */
export interface RunnerRates {
  setRate(rate: number): Promise<Result<number, string>>;
}

function notOnThisBackend(what: string): PauseRefusal {
  return { kind: 'unavailable', detail: `${what} is not available on this backend` };
}
