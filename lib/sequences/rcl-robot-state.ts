/**
 * The robot_state_publisher topics a bag recorded on ros2 carries, /tf, /tf_static and /robot_description, as the
 * simulator's bags do: taken from the graph when the stack publishes them (the latched two through transient-local
 * subscriptions, so that what robot_state_publisher sent at its start arrives), else computed from armgate's forward
 * kinematics of the robot description and the joint states, as the simulator computes them.
 */
import type { Durability } from '../bag/metadata.ts';
import { plainOf } from '../ros/convert.ts';
import type { JointStateMsg, TimeMsg } from '../ros/messages.ts';
import { rosName } from '../ros/rcl-calls.ts';
import type { RclEntity, RclNode, RclQos } from '../ros/rclnodejs-api.ts';
import { ROBOT_STATE_TOPICS, RobotStateMessages } from '../sim/robot-state.ts';

/** One of the robot_state_publisher topics. */
export type RobotStateTopic = (typeof ROBOT_STATE_TOPICS)[keyof typeof ROBOT_STATE_TOPICS];

/** The three topics, in the order the simulator offers them. */
export const ROBOT_STATE_LIST: readonly RobotStateTopic[] = Object.values(ROBOT_STATE_TOPICS);

/** What a computed topic's channel says of its messages (the channel metadata `armgate_source`). */
export const COMPUTED_SOURCE =
  "computed by armgate (forward kinematics of the robot description at the joint states): the stack's graph had no publisher of this topic";

/** How the publishers of `topic` keep their messages: transient local for /tf_static and /robot_description. */
export function durabilityOf(topic: string): Durability {
  return ROBOT_STATE_LIST.find((t) => t.name === rosName(topic))?.durability ?? 'volatile';
}

/** Keep last 10, reliable, transient local: a subscription that receives a latched topic's last messages. */
export const TRANSIENT_LOCAL_QOS: RclQos = {
  history: 1,
  depth: 10,
  reliability: 1,
  durability: 1,
  liveliness: 0,
  avoidRosNameSpaceConventions: false,
};

/** The time `ns` (since the epoch) as builtin_interfaces/Time. */
function timeOf(ns: bigint): TimeMsg {
  return { sec: Number(ns / 1_000_000_000n), nanosec: Number(ns % 1_000_000_000n) };
}

/**
 * Publishes into `write` the robot-state topics of `topics` from `urdf`: /robot_description and /tf_static at once
 * (stamped `nowNs()`), /tf at each message of the joint-state topic (a subscription of `node`, returned so it can be
 * destroyed; undefined when /tf is not among `topics`). Throws when the URDF cannot be read.
 */
export function computeRobotState(options: {
  readonly node: RclNode;
  readonly topics: readonly RobotStateTopic[];
  readonly urdf: string;
  readonly jointStates: { readonly name: string; readonly type: string };
  readonly nowNs: () => bigint;
  readonly write: (topic: string, msg: unknown) => void;
}): RclEntity | undefined {
  const { node, topics, urdf, jointStates, nowNs, write } = options;
  const messages = new RobotStateMessages(urdf);
  const names = new Set(topics.map((t) => t.name));
  const { robot_description, tf_static, tf } = ROBOT_STATE_TOPICS;
  if (names.has(robot_description.name)) write(robot_description.name, messages.description);
  if (names.has(tf_static.name)) write(tf_static.name, messages.tfStatic(timeOf(nowNs())));
  if (!names.has(tf.name)) return undefined;
  return node.createSubscription(jointStates.type, jointStates.name, { enableTypedArray: false }, (raw) => {
    const state = plainOf(raw) as JointStateMsg;
    if (!Array.isArray(state?.name) || !Array.isArray(state.position) || !state.header?.stamp) return;
    write(tf.name, messages.tf(state));
  });
}
