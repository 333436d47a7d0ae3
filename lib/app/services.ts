import type { Clock } from '../clock.ts';
import type { AuditTrail } from '../audit/trail.ts';
import type { GuessLimiter } from '../auth/guesses.ts';
import type { EventBus } from '../events/bus.ts';
import type { LogRing } from '../logs/ring.ts';
import type { MotionArbiter } from '../control/arbiter.ts';
import type { JogControl } from '../control/jog-session.ts';
import type { MotionControl } from '../control/pause.ts';
import type { PlanStore } from '../plans/store.ts';
import type { PositionStore } from '../positions/store.ts';
import type { SafetyState } from '../safety/store.ts';
import type { SequenceSupervisor } from '../sequences/supervisor.ts';

/**
 * The state of one armgate app besides the ROS context (the one shared singleton of the design): the motion arbiter
 * (the one owner of the arm), the trajectory module's log, the sequence supervisor, the event bus, the safety
 * envelope, the plans of dry runs, the taught positions and the audit trail. `composeServices()` (lib/app/compose.ts)
 * makes it, for start-up (lib/server/start.ts) and for the tests alike, and every call carries it in its context
 * (`ctx.services`): the REST face gets it from the app with each request, the MCP face with its session.
 */
export interface Services {
  readonly arbiter: MotionArbiter;
  /** The pendant: pause, resume, the speed override, and the stop that ends everything (POST /stop's work). */
  readonly control: MotionControl;
  readonly trajectoryLog: LogRing;
  readonly sequences: SequenceSupervisor;
  /** `sequences.bag_root`: every bag_path is confined under it. */
  readonly bagRoot: string;
  /** The event bus of GET /events; absent where nothing listens (handler tests). */
  readonly events?: EventBus;
  /** The safety envelope in force; undefined: none applies. */
  readonly safety: SafetyState | undefined;
  /** The plans of dry runs, kept until they expire. */
  readonly plans: PlanStore;
  /** The taught positions and their file (armgate.positions_file); absent where none are kept (handler tests). */
  readonly positions?: PositionStore;
  /** The audit trail; undefined when audit.path is empty. */
  readonly audit: AuditTrail | undefined;
  /** Wrong tokens per client address, one count for every face (REST, MCP, the jog WebSocket, Foxglove). */
  readonly guesses?: GuessLimiter;
  /** Jogging (one jogging client at a time); absent where the app has none (handlers called alone). */
  readonly jog?: JogControl;
  /** `safety.dead_man`: a motion whose caller is gone is stopped (lib/control/dead-man.ts); absent means on. */
  readonly deadMan?: boolean;
  /** The clock the app's own timers run on (a motion's progress); absent: the process clock. Tests step it. */
  readonly clock?: Clock;
}
