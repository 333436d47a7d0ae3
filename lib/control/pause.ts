/**
 * Pause, resume and the speed override, as on a robot's own pendant: one state per app, driving
 * the context's execution rate (RobotContext.setExecutionRate: 0 while paused, else override/100).
 * A pause holds whatever moves on its own path (a move, a trajectory, a plan's execution, a
 * sequence's goal) without cancelling it; while paused the arm belongs to the paused motion (other
 * motion requests get 409 saying so); a resume continues it; a stop ends it as any other. The stop is the pendant's
 * too (`stop`, lib/control/stop.ts): a pause a sequence runner does not confirm ends in one, and a stop ends the pause.
 */
import { type Clock, systemClock } from '../clock.ts';
import type { EventBus } from '../events/bus.ts';
import type { LogRing } from '../logs/ring.ts';
import type { RobotContext } from '../ros/context.ts';
import { err, ok, type Result } from '../result.ts';
import type { ArmActivity } from '../ros/context.ts';
import type { MotionArbiter } from './arbiter.ts';
import { type StopReport, stopEverything } from './stop.ts';

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

/** What the pendant drives and reports to. */
export interface MotionControlParts {
  /** The one owner of the arm: a paused motion holds it; a stop revokes it. */
  readonly arbiter: MotionArbiter;
  /** The context whose execution rate a pause, a resume and the override set, and where a stop's hold goes. */
  readonly context: () => RobotContext;
  /** The trajectory module's log: a stop says there what it did. */
  readonly log: LogRing;
  /** The event bus (pause, resume, override, stop); absent: nothing listens. */
  readonly events?: EventBus | undefined;
  /** The sequence runners: told of the rate, ended by a stop; absent: none run. */
  readonly runners?: Runners | undefined;
  /** The app's clock: when a pause began is its time; absent: the process clock. */
  readonly clock?: Clock | undefined;
}

/** The pendant of one app: paused or not, the override, and the stop that ends everything. */
export class MotionControl {
  private paused: Paused | undefined;
  private percent = OVERRIDE_MAX;
  private readonly arbiter: MotionArbiter;
  private readonly context: () => RobotContext;
  private readonly log: LogRing;
  private readonly events: EventBus | undefined;
  private readonly runners: Runners | undefined;
  private readonly clock: Clock;

  constructor(parts: MotionControlParts) {
    this.arbiter = parts.arbiter;
    this.context = parts.context;
    this.log = parts.log;
    this.clock = parts.clock ?? systemClock;
    this.events = parts.events;
    this.runners = parts.runners;
    // While paused the arm belongs to the paused motion: checked before anything else holding it.
    this.arbiter.addSource(() => this.activity(), { first: true });
    this.arbiter.onRelease(() => this.settle());
  }

  /**
   * Stops everything the service started (POST /stop's work, lib/control/stop.ts): the arm revoked, the runners ended,
   * a hold point, the planner's stop; the pause is over with it. `reason`: what a motion cut short answers.
   */
  stop(reason = 'stopped'): Promise<StopReport> {
    return stopEverything(
      {
        arbiter: this.arbiter,
        context: this.context(),
        runners: this.runners,
        log: this.log,
        events: this.events,
        pause: this,
      },
      reason,
    );
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
    if (!this.paused)
      this.paused = { what: moving?.detail ?? 'a motion', sinceIso: new Date(this.clock.epochMs()).toISOString() };
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
    if (!runners.ok) return this.runnerRefused(runners.error);
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
   * a hold point, the planner's stop) and the pause answers 503 saying so.
   */
  private async runnerRefused(why: string): Promise<{ readonly ok: false; readonly error: PauseRefusal }> {
    const reason = `${why}: everything was stopped as by POST /stop`;
    await this.stop(reason);
    return err({ kind: 'unavailable', detail: `not paused: ${reason} (the sequence ended; the arm holds)` });
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
      if (!runners.ok) return this.runnerRefused(runners.error);
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
 * The sequence runners as the pendant drives them (the supervisor). `setRate`: runners that send their own goals are
 * told of the rate; resolves with how many were told once each has applied it, or with why one did not confirm it in
 * time. `stop`: ends every runner still alive (stop message, SIGTERM, SIGKILL after 3 s); true when one was running.
 */
export interface Runners {
  setRate(rate: number): Promise<Result<number, string>>;
  stop(): Promise<boolean>;
}

function notOnThisBackend(what: string): PauseRefusal {
  return { kind: 'unavailable', detail: `${what} is not available on this backend` };
}
