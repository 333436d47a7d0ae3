/**
 * The one composition root of the app's services: start-up (lib/server/start.ts) and the tests that call operations
 * alone (tests/support/services.ts) both build their Services bag here, the tests leaving out what they need not have
 * (the event bus, the audit trail, the taught positions, the jog, the wrong-token limiter).
 */
import { GuessLimiter, type GuessPolicy } from '../auth/guesses.ts';
import { type AuditSettings, AuditTrail } from '../audit/trail.ts';
import { EventBus } from '../events/bus.ts';
import { feedEvents } from './event-sources.ts';
import { LogRing } from '../logs/ring.ts';
import { MotionArbiter } from '../control/arbiter.ts';
import { JogControl } from '../control/jog-session.ts';
import { MotionControl } from '../control/pause.ts';
import { PlanStore } from '../plans/store.ts';
import { PositionStore } from '../positions/store.ts';
import type { TaughtPosition } from '../positions/taught.ts';
import type { RobotContext } from '../ros/context.ts';
import type { SafetyState } from '../safety/store.ts';
import { SequenceSupervisor, type SupervisorOptions } from '../sequences/supervisor.ts';
import type { Config } from '../settings/load.ts';
import { type Clock, systemClock } from '../clock.ts';
import type { Services } from './services.ts';

/** Lines kept by the trajectory module's log (GET /trajectory/logs). */
export const TRAJECTORY_LOG_LINES = 300;

/** What the services are made of; an optional part left out is absent from the bag. */
export interface ComposeOptions {
  /** `sequences.bag_root`: every bag_path is confined under it. */
  readonly bagRoot: string;
  /**
   * The arbiter hears the context's own arm activity (a trajectory the controller still executes) and the trajectory
   * log its controller's lines; absent or false: the context is not looked at until a call uses it (a handler called
   * alone over a stand-in context).
   */
  readonly listen?: boolean;
  /** The safety envelope in force (the sequence runners hold their goals to it too); absent: none applies. */
  readonly safety?: SafetyState | undefined;
  /** How sequence runners are started; absent: on the simulator, with the server's environment. */
  readonly sequences?: Omit<SupervisorOptions, 'safety'>;
  /** An event bus (GET /events), fed from the context, the trajectory log and the sequences; absent or false: none. */
  readonly events?: boolean;
  /** The audit trail's settings; absent: no audit trail. */
  readonly audit?: AuditSettings;
  /** The taught positions, their file and the joint names they are kept in; absent: none are kept. */
  readonly positions?: {
    readonly file: string;
    readonly jointNames: readonly string[];
    readonly taught: readonly TaughtPosition[];
  };
  /** The wrong-token limiter's policy; absent: no limiter. */
  readonly guesses?: GuessPolicy;
  /** Jogging with its dead-man time to live; absent: no jog. */
  readonly jog?: { readonly ttlMs: number };
  /** `safety.dead_man`; absent: on. */
  readonly deadMan?: boolean;
  /** The clock the app's own timers run on; absent: the process clock. */
  readonly clock?: Clock;
}

/** The bag and what ends it. */
export interface ComposedServices<O extends ComposeOptions> {
  /** The services; the event bus is typed present when the options asked for one. */
  readonly services: Services & (O extends { readonly events: true } ? { readonly events: EventBus } : unknown);
  /** Disconnects the feeds, closes the bus, forgets the plans, waits for the positions' file and closes the audit trail. */
  close(): Promise<void>;
}

/**
 * Builds the Services bag over `context`: the arbiter, the pendant (pause, resume, the override and the stop,
 * lib/control/pause.ts), the trajectory log, the sequence supervisor, the plans, and the optional parts `options` asks
 * for.
 */
export function composeServices<O extends ComposeOptions>(context: RobotContext, options: O): ComposedServices<O> {
  // The app's own timers, windows and stamps run on it (a stepped one in tests).
  const clock = options.clock ?? systemClock;
  const arbiter = new MotionArbiter();
  if (options.listen) arbiter.addSource(() => context.armActivity());
  const sequences = new SequenceSupervisor(context, {
    backend: 'sim',
    ...options.sequences,
    safety: options.safety,
  });
  // Its lines are stamped with the app's time.
  const trajectoryLog = new LogRing(TRAJECTORY_LOG_LINES, () => new Date(clock.epochMs()));
  const unsubscribe = options.listen ? context.onControllerLog((line) => trajectoryLog.push(line)) : undefined;
  // The joint states' rates are counted on the context's clock, the one their publisher runs on; the heartbeat runs on
  // the app's.
  const events = options.events ? new EventBus({ now: () => context.nowMs(), clock }) : undefined;
  const unfeed = events ? feedEvents(events, { context, trajectoryLog, sequences }) : undefined;
  // A pause that a sequence runner does not confirm ends everything, as POST /stop does: the pendant holds the stop.
  const control = new MotionControl({
    arbiter,
    context: () => context,
    log: trajectoryLog,
    events,
    runners: sequences,
    clock,
  });
  const audit = options.audit ? new AuditTrail(options.audit, () => arbiter.leaseCount) : undefined;
  const plans = new PlanStore();
  const positions = options.positions
    ? new PositionStore(options.positions.file, options.positions.jointNames, options.positions.taught)
    : undefined;
  const jog = options.jog
    ? new JogControl({
        arbiter,
        context: () => context,
        ...(events ? { events } : {}),
        ...(audit ? { audit } : {}),
        ttlMs: options.jog.ttlMs,
        paused: () => control.state() !== undefined,
      })
    : undefined;
  const services: Services = {
    ...(options.guesses ? { guesses: new GuessLimiter(options.guesses, () => clock.nowMs()) } : {}),
    arbiter,
    control,
    ...(jog ? { jog } : {}),
    trajectoryLog,
    sequences,
    bagRoot: options.bagRoot,
    ...(events ? { events } : {}),
    safety: options.safety,
    plans,
    ...(positions ? { positions } : {}),
    audit,
    ...(options.deadMan !== undefined ? { deadMan: options.deadMan } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
  };
  return {
    services: services as ComposedServices<O>['services'],
    async close() {
      unsubscribe?.();
      unfeed?.();
      events?.close();
      plans.clear();
      await positions?.settled();
      await audit?.close();
    },
  };
}

/** What start-up composes from the settings: every part (the audit trail when audit.path is set), listening. */
export function composeOptionsFor(
  config: Config,
  safety: SafetyState | undefined,
  extra: { readonly runnerEnv?: Readonly<Record<string, string>>; readonly clock?: Clock } = {},
): ComposeOptions & { readonly events: true } {
  return {
    bagRoot: config.sequences.bagRoot,
    listen: true,
    safety,
    sequences: {
      backend: config.robot.backend,
      robotDescriptionXml: config.robotDescriptionXml,
      ...(extra.runnerEnv ? { env: extra.runnerEnv } : {}),
    },
    events: true,
    ...(config.audit.path === '' ? {} : { audit: config.audit }),
    positions: { file: config.positions.file, jointNames: config.limits.jointNames, taught: config.positions.taught },
    guesses: { burst: config.web.limits.tokenGuessBurst, refillS: config.web.limits.tokenGuessRefillS },
    jog: { ttlMs: config.jog.ttl_ms },
    deadMan: config.safety.dead_man,
    ...(extra.clock ? { clock: extra.clock } : {}),
  };
}
