/**
 * The server side of rclnodejs the mock stack uses (types/action_server.d.ts, service.d.ts,
 * parameter.d.ts), checked against rclnodejs's declarations by npm test
 * (tests/ros/rclnodejs-types/check.d.ts).
 */
import { plainOf } from '../../../lib/ros/convert.ts';
import type { RclModule, RclNode } from '../../../lib/ros/rclnodejs-api.ts';

export interface ServerGoalHandle {
  /** The goal: a generated message instance at run time (fields are prototype getters), see {@link goalOf}. */
  readonly request: object;
  readonly isCancelRequested: boolean;
  publishFeedback(feedback: object): void;
  succeed(): void;
  abort(): void;
  canceled(): void;
}

export interface ServerNode extends RclNode {
  createService(
    type: string,
    name: string,
    callback: (request: unknown, response: { send(message: object): void }) => void,
  ): object;
  declareParameter(parameter: object): unknown;
}

export interface ServerModule extends Omit<RclModule, 'Node'> {
  Node: new (name: string) => ServerNode;
  ActionServer: new (
    node: ServerNode,
    type: string,
    name: string,
    execute: (handle: ServerGoalHandle) => Promise<object>,
    goal?: () => number,
    accepted?: undefined,
    cancel?: () => number,
  ) => object;
  Parameter: new (name: string, type: number, value: string) => object;
  ParameterType: { readonly PARAMETER_STRING: number };
}

/**
 * A server goal handle's goal as plain data. rclnodejs hands the execute callback a goal handle
 * whose `request` is the generated message instance (action/server.js passes `request.goal`
 * itself; its fields are getters on the prototype, which Object.entries does not see): its own
 * toPlainObject() gives the fields, as rclnodejs does for the goal callback.
 */
export function goalOf(handle: ServerGoalHandle): unknown {
  const request = handle.request as { toPlainObject?: () => unknown };
  return plainOf(typeof request.toPlainObject === 'function' ? request.toPlainObject() : request);
}
