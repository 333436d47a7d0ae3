/**
 * The small part of rclnodejs's API that armgate uses, typed as armgate's own interfaces so no
 * `any` from the package reaches the code (rclnodejs is an optional dependency, loaded with a
 * dynamic import only when `robot.backend` is `ros2`). Message objects cross this boundary as
 * `object` outward and `unknown` inward; lib/ros/convert.ts checks and converts them.
 * Checked against rclnodejs's types/*.d.ts (node.d.ts, client.d.ts, action_client.d.ts,
 * publisher.d.ts): every member used here exists there with this signature.
 */

/** Options of publishers, subscriptions and clients (rclnodejs `Options`). */
export interface RclOptions {
  /** Numeric arrays of received messages as typed arrays (rclnodejs's default: true). */
  readonly enableTypedArray?: boolean;
  /** Deliver received messages serialized (CDR bytes in a Buffer) instead of as objects. */
  readonly isRaw?: boolean;
}

/**
 * An rmw QoS profile as rclnodejs reads it from an object (rmw policy values: 1 keep last, 1 reliable, 1 transient
 * local), passed as `qos` beside {@link RclOptions}. Not a field of RclOptions: rclnodejs 2.2.0's declarations give
 * QoS#reliability as a method while its JavaScript has a getter (lib/qos.js), so no plain object matches the declared
 * type that scripts/check-rclnodejs-types.mjs checks RclOptions against, though rclnodejs reads one the same way.
 */
export interface RclQos {
  readonly history: number;
  readonly depth: number;
  readonly reliability: number;
  readonly durability: number;
  readonly liveliness: number;
  readonly avoidRosNameSpaceConventions: boolean;
}

/** Any entity a node creates (publisher, subscription, client). */
export type RclEntity = object;

export interface RclPublisher extends RclEntity {
  publish(message: object): void;
}

export interface RclClient extends RclEntity {
  /** Sends a request; the callback gets the response (never called when no server answers). */
  sendRequest(request: object, callback: (response: unknown) => void): void;
  isServiceServerAvailable(): boolean;
  /** Resolves true once a server is there, false after `timeoutMs`. */
  waitForService(timeoutMs?: number): Promise<boolean>;
}

/** action_msgs/msg/GoalStatus values. */
export const GOAL_STATUS = {
  unknown: 0,
  accepted: 1,
  executing: 2,
  canceling: 3,
  succeeded: 4,
  canceled: 5,
  aborted: 6,
} as const;

export interface RclGoalHandle {
  isAccepted(): boolean;
  /** action_msgs/msg/GoalStatus of the goal, updated as status messages arrive. */
  readonly status: number;
  /** Resolves with the Result message of the action. */
  getResult(): Promise<unknown>;
  /** Resolves with the action_msgs/srv/CancelGoal response. */
  cancelGoal(): Promise<unknown>;
}

export interface RclActionClient {
  sendGoal(goal: object, feedbackCallback?: (feedback: unknown) => void): Promise<RclGoalHandle>;
  isActionServerAvailable(): boolean;
  waitForServer(timeoutMs?: number): Promise<boolean>;
  destroy(): void;
}

/** A name and the types offered on it (Node.getTopicNamesAndTypes()). */
export interface RclNamesAndTypes {
  readonly name: string;
  readonly types: readonly string[];
}

export interface RclNode {
  createPublisher(typeClass: string, topic: string, options?: RclOptions): RclPublisher;
  createSubscription(
    typeClass: string,
    topic: string,
    options: RclOptions,
    callback: (message: unknown) => void,
  ): RclEntity;
  createClient(typeClass: string, serviceName: string, options?: RclOptions): RclClient;
  destroyPublisher(publisher: RclPublisher): void;
  destroySubscription(subscription: RclEntity): void;
  destroyClient(client: RclClient): void;
  getTopicNamesAndTypes(): readonly RclNamesAndTypes[];
  countSubscribers(topic: string): number;
  /** The node's clock now (rclnodejs Node.now(); absent from the test stand-ins: the wall clock then). */
  now?(): {
    readonly secondsAndNanoseconds: { readonly seconds: bigint | number; readonly nanoseconds: bigint | number };
  };
  /** Starts processing incoming work in the background (rclnodejs's executor on libuv). */
  spin(timeoutMs?: number): void;
  destroy(): void;
}

/** The rclnodejs module itself. */
export interface RclModule {
  init(): Promise<void>;
  shutdown(): void;
  /**
   * Removes the SIGINT handler rclnodejs installs when it is imported (it shuts every context
   * down before the application's own handler runs). Absent from the test stand-ins.
   */
  removeSignalHandlers?(): void;
  Node: new (nodeName: string, namespace?: string) => RclNode;
  ActionClient: new (node: RclNode, typeClass: string, actionName: string) => RclActionClient;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null;
}

/**
 * The rclnodejs module from what `import('rclnodejs')` gave (a CommonJS module: the API is on
 * `default`), or undefined when it lacks the members armgate uses.
 */
export function asRclModule(imported: unknown): RclModule | undefined {
  const candidate = isObject(imported) && isObject(imported.default) ? imported.default : imported;
  if (!isObject(candidate)) return undefined;
  const fns = ['init', 'shutdown', 'Node', 'ActionClient'];
  return fns.every((f) => typeof candidate[f] === 'function') ? (candidate as unknown as RclModule) : undefined;
}
