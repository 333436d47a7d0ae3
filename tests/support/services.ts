import { tmpdir } from 'node:os';
import type { Services } from '../../lib/app/services.ts';
import { LogRing } from '../../lib/logs/ring.ts';
import { MotionArbiter } from '../../lib/motion/arbiter.ts';
import { PlanStore } from '../../lib/plans/store.ts';
import type { RobotContext } from '../../lib/ros/context.ts';
import { SequenceSupervisor } from '../../lib/sequences/supervisor.ts';
import { TRAJECTORY_LOG_LINES } from '../../lib/server/start.ts';

/** Fresh app services over `context` (no event bus, envelope or audit trail), for handlers called alone. */
export function servicesFor(context: RobotContext): Services {
  return {
    arbiter: new MotionArbiter(),
    trajectoryLog: new LogRing(TRAJECTORY_LOG_LINES),
    sequences: new SequenceSupervisor(context),
    bagRoot: tmpdir(),
    safety: undefined,
    plans: new PlanStore(),
    audit: undefined,
  };
}
