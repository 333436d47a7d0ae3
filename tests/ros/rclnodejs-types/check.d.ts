// Type-level check that armgate's stand-in of rclnodejs's API (lib/ros/rclnodejs-api.ts) matches
// rclnodejs's own published declarations: each line fails to compile when the rclnodejs type
// lacks a member armgate uses or has it with an incompatible signature. Compiled only by
// scripts/check-rclnodejs-types.mjs (npm test), against the locked version's types/*.d.ts, with
// interfaces.d.ts.in standing in for the message types rclnodejs generates from a ROS 2
// installation. A .d.ts file, so the project's own type check (skipLibCheck) passes over it.
import type * as rcl from 'rclnodejs';
import type {
  RclActionClient,
  RclClient,
  RclGoalHandle,
  RclModule,
  RclNamesAndTypes,
  RclNode,
  RclOptions,
  RclPublisher,
} from '../../../lib/ros/rclnodejs-api.ts';
import type { StackGoalHandle, StackNode, StackRcl } from '../stack/rcl.ts';

/** Compiles only when U is assignable to T. */
type Is<T, U extends T> = U;

/** Type names are strings from the endpoints file. */
type Name = string;

export type ModuleMatches = Is<Omit<RclModule, 'ActionClient'>, typeof rcl>;
/** The node armgate passes is the rclnodejs Node its RclNode stands for. */
export type ActionClientMatches = Is<
  new (
    node: rcl.Node,
    typeClass: Name,
    actionName: string,
  ) => RclActionClient,
  typeof rcl.ActionClient
>;
export type NodeMatches = Is<RclNode, rcl.Node>;
export type PublisherMatches = Is<RclPublisher, rcl.Publisher<Name>>;
export type ClientMatches = Is<RclClient, rcl.Client<Name>>;
export type ActionClientInstanceMatches = Is<RclActionClient, rcl.ActionClient<Name>>;
export type GoalHandleMatches = Is<RclGoalHandle, rcl.ClientGoalHandle<Name>>;
export type NamesAndTypesMatch = Is<RclNamesAndTypes, rcl.NamesAndTypesQueryResult>;
/** armgate passes its options to rclnodejs: the other direction. */
export type OptionsMatch = Is<rcl.Options, RclOptions>;

// The test robot stack's own declaration of rclnodejs (tests/ros/stack/rcl.ts).
export type StackModuleMatches = Is<
  Omit<StackRcl, 'ActionServer' | 'Node' | 'GoalResponse' | 'CancelResponse' | 'ParameterType'>,
  typeof rcl
>;
/** The stack passes its nodes (rclnodejs Nodes, see StackNodeMatches) and these callbacks. */
export type StackActionServerMatches = Is<
  new (
    node: rcl.Node,
    type: Name,
    name: string,
    execute: (handle: rcl.ServerGoalHandle<Name>) => Promise<object>,
    goal?: (goal: unknown) => rcl.GoalResponse,
    accepted?: undefined,
    cancel?: (handle?: rcl.ServerGoalHandle<Name>) => rcl.CancelResponse,
  ) => object,
  typeof rcl.ActionServer
>;
export type StackNodeMatches = Is<StackNode, rcl.Node>;
export type StackGoalHandleMatches = Is<StackGoalHandle, rcl.ServerGoalHandle<Name>>;
export type StackGoalResponseMatches = Is<StackRcl['GoalResponse'], typeof rcl.GoalResponse>;
export type StackParameterTypeMatches = Is<StackRcl['ParameterType'], typeof rcl.ParameterType>;
