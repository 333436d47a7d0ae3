import type { LogRing } from '../logs/ring.ts';
import type { RobotContext } from '../ros/context.ts';
import type { JointStateMsg } from '../ros/messages.ts';
import type { SequenceStatus, SequenceSupervisor } from '../sequences/supervisor.ts';
import type { EventBus } from '../events/bus.ts';

/** What feeds the bus besides the motion and stop points (which publish themselves on the app's bus, ctx.services.events). */
export interface EventSources {
  readonly context: RobotContext;
  readonly trajectoryLog: LogRing;
  readonly sequences: SequenceSupervisor;
}

/** The `sequence` event's data: the status with the fields the issue names always present (null when not applicable). */
export function sequenceEvent(status: SequenceStatus): Record<string, unknown> {
  return {
    iteration: null,
    point: null,
    returncode: null,
    ...status,
  };
}

/**
 * Connects the bus to the joint-state stream of the context (taken in J1..J7 order by name; a
 * message missing a joint is skipped), the trajectory log, the sequence log and the sequence
 * status. Returns the function that disconnects them all.
 */
export function feedEvents(bus: EventBus, sources: EventSources): () => void {
  const { context, trajectoryLog, sequences } = sources;
  const names = context.endpoints.joint_names;
  const position = new Float64Array(names.length);
  const velocity = new Float64Array(names.length);
  const effort = new Float64Array(names.length);
  const onJointState = (raw: unknown) => {
    if (bus.size === 0) return;
    const msg = raw as JointStateMsg;
    for (let j = 0; j < names.length; j++) {
      const k = msg.name[j] === names[j] ? j : msg.name.indexOf(names[j] ?? '');
      const q = msg.position[k];
      if (k < 0 || q === undefined) return;
      position[j] = q;
      velocity[j] = msg.velocity[k] ?? 0;
      effort[j] = msg.effort[k] ?? 0;
    }
    const stamp = msg.header.stamp;
    bus.publishJointState(stamp.sec + stamp.nanosec / 1e9, position, velocity, effort);
  };
  const off = [
    context.subscribe(context.endpoints.interfaces.joint_states.name, onJointState),
    trajectoryLog.onLine((line) => bus.publish('trajectory_log', { line })),
    sequences.logs.onLine((line) => bus.publish('sequence_log', { line })),
    sequences.onStatus((status) => bus.publish('sequence', sequenceEvent(status))),
  ];
  return () => {
    for (const stop of off) stop();
  };
}
