/**
 * Jogging as the app sees it: one jog at a time, held by one client (its owner: the REST caller, a WebSocket, an MCP
 * step), under a lease of the arbiter (a move while jogging is a 409 until the jog has come to rest; a jog while
 * something else holds the arm is a 409 naming it). A stop revokes the lease (the stop's hold point brakes the arm)
 * and a command that arrived before the stop's answer cannot start a new jog (the arbiter's stop count); until the
 * revoked jog has ended, its client's commands are refused here, whatever the controller has been told yet. The jog's
 * start and end (with why it ended) go to the event bus and the audit trail; the context runs the jog itself.
 */
import type { AuditedCaller, AuditTrail } from '../audit/trail.ts';
import type { EventBus } from '../events/bus.ts';
import { err, ok, type Result } from '../result.ts';
import type { JogEvent, JogStatus, RobotContext } from '../ros/context.ts';
import type { Lease, MotionArbiter } from './arbiter.ts';
import type { JogEndReason, JogLimit, JogStepGoal, JogTarget } from '../motion/jog.ts';

/** Who jogs: the token's name, its role and the face (never the token). */
type Caller = AuditedCaller;

/** Why a jog command was refused: another client or motion holds the arm (a 409), or the backend cannot jog (a 503). */
export type JogRefusal =
  | { readonly kind: 'busy'; readonly detail: string }
  | { readonly kind: 'unavailable'; readonly detail: string };

/** Who holds a jog: one client at a time. */
export interface JogOwner {
  /** Equal keys are the same client (a REST caller by its token's name, a WebSocket by its connection). */
  readonly key: string;
  /** The interface it jogs through, for events and the audit trail: rest, mcp or websocket. */
  readonly via: 'rest' | 'mcp' | 'foxglove' | 'websocket';
}

/** The facts of one jog command besides its content. */
export interface JogFacts {
  readonly caller: Caller;
  readonly owner: JogOwner;
  /** The arbiter's stop count when the command arrived. */
  readonly arrivedAtStop: number | undefined;
}

/** The answer to a jog command. */
export interface JogAnswer {
  readonly success: true;
  /** A jog is in force after the command (false: an all-zero command with nothing jogging, or a release). */
  readonly jogging: boolean;
  readonly message: string;
  /** The limit holding the jog back now, if any. */
  readonly limit: JogLimit | null;
}

/** How a step ended: at rest, where, and why. */
export interface JogStepOutcome {
  /** The step was made in full (it ended at its goal, not at a limit, a stop or another command of its client). */
  readonly complete: boolean;
  readonly reason: JogEndReason;
  readonly positions: readonly number[];
  readonly limit: JogLimit | null;
}

interface Session {
  readonly owner: JogOwner;
  readonly caller: Caller;
  readonly lease: Lease;
  readonly unsubscribe: () => void;
  readonly ended: Promise<JogEvent>;
  stopped: boolean;
  /** Its client sent another command meanwhile (a release, a newer target, a newer step): a step is cut short. */
  superseded: boolean;
  /** Its command in force, as the trail says it (describeTarget). */
  described: string;
}

/** What the jog layer is told of the app. */
export interface JogControlOptions {
  readonly arbiter: MotionArbiter;
  readonly context: () => RobotContext;
  readonly events?: EventBus;
  readonly audit?: AuditTrail;
  /** armgate.jog.ttl_ms: how long a command holds when it does not say. */
  readonly ttlMs: number;
  /** Override and pause: the jog's speed scale now is the controller's; this says whether a pause holds. */
  readonly paused?: () => boolean;
}

/** The operation name jogs are audited under. */
const AUDITED = { name: 'jog', effect: 'motion' } as const;

/** One jog at a time for the app (see the module comment). */
export class JogControl {
  private readonly options: JogControlOptions;
  private session: Session | undefined;
  private readonly listeners = new Set<(event: JogEvent & { readonly owner: string }) => void>();

  constructor(options: JogControlOptions) {
    this.options = options;
  }

  /** The default ttl (ms) of a command. */
  get ttlMs(): number {
    return this.options.ttlMs;
  }

  /** The owner of the jog in force, if any (its key). */
  owner(): string | undefined {
    return this.session?.owner.key;
  }

  /** Listens to the jog's moments (for the WebSocket's status); returns the unsubscribe. */
  onEvents(listener: (event: JogEvent & { readonly owner: string }) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** What the jog does now (undefined: this backend cannot jog). */
  status(): (JogStatus & { readonly paused: boolean }) | undefined {
    const status = this.options.context().jogStatus?.();
    return status ? { ...status, paused: this.options.paused?.() ?? false } : undefined;
  }

  /**
   * A jog command: starts a jog (taking the arm), or extends or changes the one this owner holds. All zeros brake
   * the jog to rest and end it (released). 409 while another client jogs or something else holds the arm, when a
   * stop came after the command arrived, or while the jog a stop revoked from this client brakes to rest; 503 where
   * the backend cannot jog.
   */
  command(target: JogTarget, ttlMs: number | undefined, facts: JogFacts): Result<JogAnswer, JogRefusal> {
    const context = this.options.context();
    if (!context.jog) return err(notHere());
    const zero = isZero(target);
    const session = this.session;
    // A stop revoked the jog in force: nothing takes it up again, whatever the controller has been told yet.
    if (session?.stopped && session.owner.key === facts.owner.key)
      return zero
        ? ok({ success: true, jogging: false, message: 'a stop ended this jog: the arm brakes to rest', limit: null })
        : err(stoppedJog());
    if (session && session.owner.key !== facts.owner.key)
      return err({
        kind: 'busy',
        detail: `another client jogs the arm (${session.caller.name} over ${session.owner.via}); one jogging client at a time`,
      });
    if (facts.arrivedAtStop !== undefined && facts.arrivedAtStop !== this.options.arbiter.stopCount)
      return err({ kind: 'busy', detail: 'a stop came after this command arrived; nothing was moved' });
    if (session) session.superseded = true;
    if (zero) {
      if (!session)
        return ok({ success: true, jogging: false, message: 'nothing jogs: nothing to release', limit: null });
      context.releaseJog?.('released');
      return ok({ success: true, jogging: false, message: 'released: the arm brakes to rest', limit: null });
    }
    const taken = session
      ? context.jog({ target, ttlS: (ttlMs ?? this.options.ttlMs) / 1000, continuing: true })
      : undefined;
    // No jog, or the one in force ended as this command came (it had lapsed): this command starts one.
    if (!taken || (!taken.ok && this.session === undefined)) {
      const started = this.start(context, target, ttlMs, undefined, facts);
      if (!started.ok) return started;
    } else if (!taken.ok) return err({ kind: 'busy', detail: `the jog was refused: ${taken.error}` });
    else if (session) this.commandChanged(session, target);
    const status = context.jogStatus?.();
    const paused = this.options.paused?.() ?? false;
    return ok({
      success: true,
      jogging: true,
      message: paused
        ? 'paused: the jog holds still until {op:resume}'
        : status?.limit
          ? `jogging, held back: ${status.limit.detail}`
          : `jogging ${describeTarget(target)}`,
      limit: status?.limit ?? null,
    });
  }

  /** Brakes the jog of `ownerKey` to rest and ends it with `reason` (a socket closed); nothing when it holds none. */
  release(ownerKey: string, reason: JogEndReason): void {
    if (this.session?.owner.key !== ownerKey) return;
    this.options.context().releaseJog?.(reason);
  }

  /**
   * A bounded step (the MCP tool): `target` by `goal.amount`, answered when the arm is at rest (at the goal, at a
   * limit, or stopped). `signal` (the call cancelled) leaves the stopping to the caller (lib/ops/motion.ts).
   */
  async step(target: JogTarget, goal: JogStepGoal, facts: JogFacts): Promise<Result<JogStepOutcome, JogRefusal>> {
    const context = this.options.context();
    if (!context.jog) return err(notHere());
    const current = this.session;
    // The client's own jog brakes to rest first (one a stop revoked is a 409); another client's is a 409.
    if (current?.stopped && current.owner.key === facts.owner.key) return err(stoppedJog());
    if (current?.owner.key === facts.owner.key) {
      current.superseded = true;
      context.releaseJog?.('released');
      await current.ended;
    } else if (current)
      return err({
        kind: 'busy',
        detail: `another client jogs the arm (${current.caller.name} over ${current.owner.via})`,
      });
    const started = this.start(context, target, undefined, goal, facts);
    if (!started.ok) return started;
    const end = await started.value.ended;
    const reason = started.value.stopped ? 'stop' : (end.reason ?? 'released');
    return ok({
      complete: reason === 'released' && !started.value.superseded,
      reason,
      positions: end.positions,
      limit: end.limit ?? null,
    });
  }

  /** Takes the arm for a jog and starts it; its end releases the arm and is told. */
  private start(
    context: RobotContext,
    target: JogTarget,
    ttlMs: number | undefined,
    goal: JogStepGoal | undefined,
    facts: JogFacts,
  ): Result<Session, JogRefusal> {
    const { arbiter, events } = this.options;
    const lease = arbiter.acquire(
      'jog',
      `jogging (${facts.caller.name} over ${facts.owner.via})`,
      [],
      facts.arrivedAtStop,
    );
    if (!lease.ok) return err(lease.error);
    let resolveEnd: (event: JogEvent) => void = () => undefined;
    const ended = new Promise<JogEvent>((resolve) => {
      resolveEnd = resolve;
    });
    const unsubscribe =
      context.onJogEvents?.((event) => {
        for (const listener of this.listeners) listener({ ...event, owner: facts.owner.key });
        if (event.state !== 'ended' || this.session !== session) return;
        this.finish(session, event);
        resolveEnd(event);
      }) ?? (() => undefined);
    const session: Session = {
      owner: facts.owner,
      caller: facts.caller,
      lease: lease.value,
      unsubscribe,
      ended,
      stopped: false,
      superseded: false,
      described: describeTarget(target),
    };
    this.session = session;
    const taken = context.jog?.({ target, ttlS: (ttlMs ?? this.options.ttlMs) / 1000, ...(goal ? { goal } : {}) }) ?? {
      ok: false as const,
      error: 'this backend cannot jog',
    };
    if (!taken.ok) {
      this.session = undefined;
      unsubscribe();
      lease.value.release();
      return err({ kind: 'busy', detail: `the jog was refused: ${taken.error}` });
    }
    // A stop takes the arm: its hold point brakes it, the jog ends as stopped.
    lease.value.signal.addEventListener(
      'abort',
      () => {
        session.stopped = true;
        context.releaseJog?.('stop');
      },
      { once: true },
    );
    events?.publish('jog', {
      state: 'started',
      by: facts.caller.name,
      via: facts.owner.via,
      target: describeTarget(target),
      ...(goal ? { step: goal.amount } : {}),
    });
    this.audit(facts.caller, facts.owner, `jog started over ${facts.owner.via}: ${describeTarget(target)}`, target);
    return ok(session);
  }

  private finish(session: Session, event: JogEvent): void {
    this.session = undefined;
    session.unsubscribe();
    session.lease.release();
    const reason: JogEndReason = session.stopped ? 'stop' : (event.reason ?? 'released');
    this.options.events?.publish('jog', {
      state: 'ended',
      by: session.caller.name,
      via: session.owner.via,
      reason,
      positions: event.positions.map((q) => Math.round(q * 1e6) / 1e6),
    });
    this.audit(session.caller, session.owner, `jog ended: ${reason}`, undefined);
  }

  /**
   * The jog in force goes on with `target`: a change of its command is a line of the trail for a WebSocket's jog,
   * whose commands are not lines one by one (lib/http/websocket.ts); a REST command is one already.
   */
  private commandChanged(session: Session, target: JogTarget): void {
    const described = describeTarget(target);
    if (described === session.described) return;
    session.described = described;
    if (session.owner.via === 'websocket')
      this.audit(session.caller, session.owner, `jog changed over ${session.owner.via}: ${described}`, target);
  }

  /** A line of the trail under the interface the jog goes through (a jog over the jog socket is `websocket`). */
  private audit(caller: Caller, owner: JogOwner, message: string, target: JogTarget | undefined): void {
    const by = { ...caller, face: owner.via };
    this.options.audit?.record(AUDITED, by, performance.now(), target, { status: 200, success: true, message });
  }
}

function isZero(target: JogTarget): boolean {
  return target.kind === 'joints'
    ? target.fractions.every((f) => f === 0)
    : target.linear.every((f) => f === 0) && target.angular.every((f) => f === 0);
}

/** A jog target in a few words: "joint2 +0.50" (a fraction too small for 2 decimals as it is) or "linear (1, 0, 0) in the base frame". */
export function describeTarget(target: JogTarget): string {
  if (target.kind === 'joints') {
    const moving = target.fractions
      .map((f, j) => (f === 0 ? '' : `joint${j + 1} ${f > 0 ? '+' : ''}${Math.abs(f) < 0.005 ? f : f.toFixed(2)}`))
      .filter(Boolean);
    return moving.length > 0 ? moving.join(', ') : 'no joint';
  }
  const parts = [];
  if (target.linear.some((f) => f !== 0)) parts.push(`linear (${target.linear.join(', ')})`);
  if (target.angular.some((f) => f !== 0)) parts.push(`angular (${target.angular.join(', ')})`);
  return `${parts.join(' and ') || 'no axis'} in the ${target.frame} frame`;
}

/** The 409 of a command from the client whose jog a stop revoked, while that jog brakes to rest. */
function stoppedJog(): JogRefusal {
  return {
    kind: 'busy',
    detail:
      'a stop ended this jog; nothing was moved: the arm brakes to rest and holds (send a command after the stop has answered and the arm rests to jog again)',
  };
}

function notHere(): JogRefusal {
  return {
    kind: 'unavailable',
    detail: 'jogging is not available on this backend',
  };
}
