/**
 * The part of rclnodejs 2.2's API the test stack uses (types/node.d.ts, action_server.d.ts,
 * parameter.d.ts), loaded at run time so that the project type-checks without the optional
 * package. Its own declaration: the stack shares no code with armgate.
 */

export interface StackGoalHandle {
  /** The goal: a generated message instance (see {@link plainGoal}). */
  readonly request: object;
  readonly isCancelRequested: boolean;
  readonly isActive: boolean;
  publishFeedback(feedback: object): void;
  succeed(): void;
  abort(): void;
  canceled(): void;
}

export interface StackResponse {
  send(message: object): void;
}

export interface StackNode {
  createPublisher(type: string, topic: string, options?: object): { publish(message: object): void };
  createSubscription(type: string, topic: string, options: object, callback: (message: unknown) => void): object;
  createService(
    type: string,
    name: string,
    options: object,
    callback: (request: unknown, response: StackResponse) => unknown,
  ): object;
  declareParameter(parameter: object): unknown;
  spin(timeout?: number): void;
  destroy(): void;
}

export interface StackActionServer {
  destroy(): void;
}

export interface StackRcl {
  init(): Promise<void>;
  shutdown(): void;
  removeSignalHandlers(): void;
  Node: new (name: string, namespace?: string) => StackNode;
  ActionServer: new (
    node: StackNode,
    type: string,
    name: string,
    execute: (handle: StackGoalHandle) => Promise<object>,
    goal?: (goal: unknown) => number,
    accepted?: undefined,
    cancel?: (handle?: StackGoalHandle) => number,
  ) => StackActionServer;
  Parameter: new (name: string, type: number, value: string) => object;
  ParameterType: { readonly PARAMETER_STRING: number };
  GoalResponse: { readonly ACCEPT: number; readonly REJECT: number };
  CancelResponse: { readonly ACCEPT: number; readonly REJECT: number };
}

/** Loads rclnodejs (a variable specifier: the project type-checks without it). */
export async function loadRcl(): Promise<StackRcl> {
  const specifier = 'rclnodejs';
  const module = (await import(specifier)) as { default?: StackRcl } & StackRcl;
  return module.default ?? module;
}

/** A goal handle's goal as plain data (its message instance's toPlainObject). */
export function plainGoal(handle: StackGoalHandle): Record<string, unknown> {
  const request = handle.request as { toPlainObject?: () => unknown };
  const plain = typeof request.toPlainObject === 'function' ? request.toPlainObject() : request;
  return (plain ?? {}) as Record<string, unknown>;
}
