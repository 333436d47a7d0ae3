import { err, ok, type Result } from '../result.ts';
import type { InterfaceUnavailable, RobotContext } from './context.ts';
import { jointStateByName } from './convert.ts';
import type { JointStateMsg } from './messages.ts';

/** How old the latest joint state may be before a reader waits for a new one, and how long it waits (the spec's 2 s). */
export const JOINT_STATE_WAIT_MS = 2000;

/**
 * The message's joints reordered to `jointNames` (extra joints dropped). Joints the message
 * lacks make an error naming them.
 */
export function inJointOrder(
  msg: JointStateMsg,
  jointNames: readonly string[],
  iface: string,
): Result<JointStateMsg, InterfaceUnavailable> {
  if (msg.name.length === jointNames.length && msg.name.every((n, i) => n === jointNames[i])) return ok(msg);
  const ordered = jointStateByName(msg, jointNames);
  if (ordered.ok) return ordered;
  return err({ kind: 'unavailable', iface, message: `joint states on ${iface} lack ${ordered.error.join(', ')}` });
}

/**
 * The current joint state in J1..J7 order: the latest message if it arrived within the last
 * 2 s, otherwise the next one within 2 s; none is an `unavailable` error (the context's joint-state port).
 */
export function currentJointState(context: RobotContext): Promise<Result<JointStateMsg, InterfaceUnavailable>> {
  return context.jointStateCache.current();
}
