import { tmpdir } from 'node:os';
import type { Services } from '../../lib/app/services.ts';
import type { Arrival, Principal } from '../../lib/core/roles.ts';
import type { RestCall } from '../../lib/http/rest.ts';
import { LogRing } from '../../lib/logs/ring.ts';
import { MotionArbiter } from '../../lib/motion/arbiter.ts';
import { MotionControl } from '../../lib/motion/pause.ts';
import { PlanStore } from '../../lib/plans/store.ts';
import type { RobotContext } from '../../lib/ros/context.ts';
import { SequenceSupervisor } from '../../lib/sequences/supervisor.ts';
import { TRAJECTORY_LOG_LINES } from '../../lib/server/start.ts';

/** Fresh app services over `context` (no event bus, envelope or audit trail), for handlers called alone. */
export function servicesFor(context: RobotContext): Services {
  const arbiter = new MotionArbiter();
  return {
    arbiter,
    control: new MotionControl(arbiter, () => context),
    trajectoryLog: new LogRing(TRAJECTORY_LOG_LINES),
    sequences: new SequenceSupervisor(context),
    bagRoot: tmpdir(),
    safety: undefined,
    plans: new PlanStore(),
    audit: undefined,
  };
}

/** The caller of a handler called alone in a test: what the app's authentication would hand the face. */
export const TEST_CALLER: Principal = { name: 'test', role: 'admin' };

/** The call facts of a request that passed authentication (as TEST_CALLER), for a mounted route called alone. */
export const TEST_ARRIVAL: Arrival = { caller: TEST_CALLER, arrivedAtStop: undefined };

/** What the app hands a REST handler with a request: fresh services over `context`, the context, TEST_CALLER. */
export function callFor(context: RobotContext): RestCall {
  return { services: servicesFor(context), ros: context, caller: TEST_CALLER };
}
