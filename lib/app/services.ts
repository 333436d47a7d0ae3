import type { EventBus } from '../events/bus.ts';
import type { LogRing } from '../logs/ring.ts';
import type { MotionArbiter } from '../motion/arbiter.ts';
import type { SequenceSupervisor } from '../sequences/supervisor.ts';

/**
 * The API-side state shared by handlers (besides the ROS context): the motion arbiter (the one owner of the arm), the
 * trajectory module's log and the sequence supervisor. Set once by start-up, like the context; nothing is created at import.
 */
export interface Services {
  readonly arbiter: MotionArbiter;
  readonly trajectoryLog: LogRing;
  readonly sequences: SequenceSupervisor;
  /** `sequences.bag_root`: every bag_path is confined under it. */
  readonly bagRoot: string;
  /** The event bus of GET /events; absent where nothing listens (handler tests). */
  readonly events?: EventBus;
}

let current: Services | undefined;

/** The shared services; throws when start-up has not set them (a bug, not a client error). */
export function services(): Services {
  if (!current) throw new Error('services are not set: server start-up must call setServices() first');
  return current;
}

/** Sets the shared services (start-up and tests). */
export function setServices(value: Services): void {
  current = value;
}

/** Clears the shared services. */
export function resetServices(): void {
  current = undefined;
}
