import { err, ok, type Result } from '../result.ts';

/** What can hold the arm: an API request, an action goal, a trajectory on the controller, a sequence. */
export type ArmActivityKind = 'request' | 'goal' | 'trajectory' | 'sequence';

/** Something moving the arm, and what it is, in words. */
export interface ArmActivity {
  readonly kind: ArmActivityKind;
  readonly detail: string;
}

/** Something that may be moving the arm: returns the activity, or undefined when it is not. */
export type ActivitySource = () => ArmActivity | undefined;

/**
 * The one-command-in-flight rule: a motion request begins only when nothing else moves the arm
 * (another request of this process, a trajectory the controller executes, a sequence runner).
 * There is no queue: a busy arm is an immediate refusal naming what holds it.
 */
export class MotionGuard {
  private holder: ArmActivity | undefined;
  private readonly sources: ActivitySource[] = [];

  /** Adds a source of arm activity (the context's controller, the sequence supervisor). */
  addSource(source: ActivitySource): void {
    this.sources.push(source);
  }

  /** What holds the arm now, if anything, skipping the kinds in `ignore`. */
  activity(ignore: readonly ArmActivityKind[] = []): ArmActivity | undefined {
    if (this.holder && !ignore.includes(this.holder.kind)) return this.holder;
    for (const source of this.sources) {
      const what = source();
      if (what && !ignore.includes(what.kind)) return what;
    }
    return undefined;
  }

  /**
   * Takes the arm for `what`; the returned function releases it. Busy: the message says why.
   * `preempts` lists activities this request may replace (a trajectory preempts a trajectory).
   */
  begin(what: string, preempts: readonly ArmActivityKind[] = []): Result<() => void, string> {
    const busy = this.activity(preempts);
    if (busy) return err(`the arm is busy (${busy.detail}); wait until it finishes or POST /stop`);
    const holder: ArmActivity = { kind: 'request', detail: what };
    this.holder = holder;
    let released = false;
    return ok(() => {
      if (released) return;
      released = true;
      if (this.holder === holder) this.holder = undefined;
    });
  }
}
