import { err, ok, type Result } from '../result.ts';
import type { ArmActivity, ArmActivityKind } from '../ros/context.ts';

/** A refusal because the arm is held (a 409): what holds it and, while it decelerates, when to retry (s). */
export interface Busy {
  readonly kind: 'busy';
  readonly detail: string;
  readonly retryAfterS?: number;
}

/** Something that may be moving the arm outside any lease (the controller still executing a trajectory). */
export type ActivitySource = () => ArmActivity | undefined;

/** The right to move the arm, held by one source at a time. */
export interface Lease {
  readonly kind: ArmActivityKind;
  /** Aborted when the lease is revoked (POST /stop, shutdown); its reason says why. */
  readonly signal: AbortSignal;
  /** What holds the arm, as a 409 names it; a sequence adds its pid once the runner has one. */
  describe(detail: string): void;
  /** Gives the arm back (idempotent). */
  release(): void;
}

interface Held {
  readonly kind: ArmActivityKind;
  detail: string;
  readonly abort: AbortController;
}

/** What a request that a stop came after is answered (409): it may not move the arm. */
export const STOPPED_SINCE_ARRIVAL = 'a stop arrived while this request was being prepared; nothing was moved';

/**
 * The one owner of the arm. Every motion source (the move endpoints, the trajectory endpoints,
 * the sequence runner and each goal it sends, the MCP tools through them) takes a lease here
 * before it moves anything. Taking is synchronous, so two requests can never both win; a second
 * source is refused at once (no queue) with what holds the arm. Revoking (POST /stop) aborts the
 * holder's signal: its goal is cancelled and a sequence's runner told to end. A stop also wins
 * over requests still on their way: one that arrived before the stop (its body still being read
 * or checked) cannot take the arm after it.
 */
export class MotionArbiter {
  private held: Held | undefined;
  private readonly sources: ActivitySource[] = [];
  /** Sources asked before the holder (a paused motion: its 409 says so, whoever holds the lease). */
  private readonly firstSources: ActivitySource[] = [];
  private readonly releaseListeners: (() => void)[] = [];
  /** Counts revocations: a request remembers the count at its arrival. */
  private stops = 0;
  /** Stops begun and not yet answered: nothing takes the arm meanwhile. */
  private stopsUnderway = 0;
  /** Counts leases given: the audit trail tells a repeat (lib/audit/quiet.ts: nothing took the arm since) by it. */
  private leases = 0;

  /** How many times the arm was revoked so far: a request stamps this at its arrival. */
  get stopCount(): number {
    return this.stops;
  }

  /** How many times the arm was taken (a lease given) so far. */
  get leaseCount(): number {
    return this.leases;
  }

  /** Adds a source of activity outside leases (the controller executing a trajectory); `first`: asked before the holder. */
  addSource(source: ActivitySource, options: { readonly first?: boolean } = {}): void {
    (options.first ? this.firstSources : this.sources).push(source);
  }

  /** Calls `listener` after a lease is given back or revoked (the pause ends when nothing is left to hold). */
  onRelease(listener: () => void): void {
    this.releaseListeners.push(listener);
  }

  private released(): void {
    for (const listener of this.releaseListeners) listener();
  }

  /** What holds or moves the arm now, if anything, skipping the kinds in `ignore`. */
  activity(ignore: readonly ArmActivityKind[] = []): ArmActivity | undefined {
    for (const source of this.firstSources) {
      const what = source();
      if (what && !ignore.includes(what.kind)) return what;
    }
    const held = this.held;
    if (held && !ignore.includes(held.kind)) return { kind: held.kind, detail: held.detail };
    for (const source of this.sources) {
      const what = source();
      if (what && !ignore.includes(what.kind)) return what;
    }
    return undefined;
  }

  /**
   * Takes the arm for `detail`, or says what holds it. `preempts` lists activities this source
   * may replace (a trajectory preempts an executing trajectory, waited for or not).
   * `arrivedAtStop` is the stop count when the request arrived: a stop since then refuses it.
   */
  acquire(
    kind: ArmActivityKind,
    detail: string,
    preempts: readonly ArmActivityKind[] = [],
    arrivedAtStop?: number,
  ): Result<Lease, Busy> {
    if (arrivedAtStop !== undefined && arrivedAtStop !== this.stops)
      return err({ kind: 'busy', detail: STOPPED_SINCE_ARRIVAL });
    if (this.stopsUnderway > 0)
      return err({
        kind: 'busy',
        detail: 'a stop is under way; nothing was moved (send the motion again once the stop has answered)',
      });
    // A holder of a kind this source preempts (a trajectory awaiting its outcome, for a newer
    // trajectory) gives way without being revoked: the controller reports it preempted.
    const busy = this.activity(this.held && !preempts.includes(this.held.kind) ? [] : preempts);
    if (busy) return err(busyRefusal(busy));
    const held: Held = { kind, detail, abort: new AbortController() };
    this.held = held;
    this.leases++;
    return ok({
      kind,
      signal: held.abort.signal,
      describe: (text) => {
        held.detail = text;
      },
      release: () => {
        if (this.held !== held) return;
        this.held = undefined;
        this.released();
      },
    });
  }

  /**
   * A stop begins: the arm is revoked ({@link revoke}) and nothing takes it until {@link endStop}; a request that
   * arrived before the stop's answer cannot take it after (the count moves again at the end).
   */
  beginStop(reason: string): ArmActivity | undefined {
    this.stopsUnderway++;
    return this.revoke(reason);
  }

  /** The stop begun with {@link beginStop} answers now. */
  endStop(): void {
    this.stopsUnderway = Math.max(0, this.stopsUnderway - 1);
    this.stops++;
  }

  /** Takes the arm from whatever holds it (its signal aborts with `reason`); returns what held it. */
  revoke(reason: string): ArmActivity | undefined {
    this.stops++;
    const held = this.held;
    if (!held) return undefined;
    this.held = undefined;
    held.abort.abort(reason);
    return { kind: held.kind, detail: held.detail };
  }
}

/** The 409 detail for a busy arm: what holds it and how to end it (or, while it decelerates, when it is free). */
export function busyMessage(busy: ArmActivity): string {
  if (busy.kind === 'sequence') return `a sequence is already running (${busy.detail}); {op:stop} ends it`;
  if (busy.kind === 'paused') return `${busy.detail}; {op:resume} continues it, {op:stop} ends it`;
  if (busy.kind === 'stopping')
    return `${busy.detail}: it is at rest in ${(busy.restInS ?? 0).toFixed(3)} s; send the motion again then`;
  return `the arm is busy (${busy.detail}); wait until it finishes or call {op:stop}`;
}

/** The 409 for a busy arm: {@link busyMessage}, and while the arm decelerates the seconds until it is at rest. */
export function busyRefusal(busy: ArmActivity): Busy {
  const detail = busyMessage(busy);
  // While the arm decelerates, or a stopped goal's cancel is still unconfirmed (restInS given): a Retry-After.
  return busy.kind === 'stopping' || busy.restInS !== undefined
    ? { kind: 'busy', detail, retryAfterS: busy.restInS ?? 0 }
    : { kind: 'busy', detail };
}
