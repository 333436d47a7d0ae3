import type { MotionResultMsg, MoveToJointsGoal, MoveToPoseGoal } from '../ros/messages.ts';
import type { TopicInfo } from '../ros/context.ts';
import type { SequenceConfig } from './config.ts';
import type { RunnerRosSettings } from './rcl-backend.ts';

/**
 * One sequence run, validated and complete: what the runner does, sent to it as its first
 * message. Nothing in it is parsed or defaulted again by the runner.
 */
export interface SequenceJob {
  readonly config: SequenceConfig;
  readonly iterations: number;
  readonly delayS: number;
  /** The actions of joint targets and of Cartesian targets. */
  readonly actions: { readonly joints: string; readonly pose: string };
  /** The bag to record: its folder, bag_root (checked again when the folder is created), the topics (empty: all). */
  readonly bag?: { readonly path: string; readonly root: string; readonly topics: readonly string[] };
  readonly backend: 'sim' | 'ros2';
  /** On ros2: the execution rate at the start (the speed override; 0 while paused), see the 'rate' message. */
  readonly rate?: number;
  /** On ros2: the action types and timeouts of the endpoints file. */
  readonly ros?: RunnerRosSettings;
}

/**
 * Messages between the sequence runner and the process that started it, over Node's IPC
 * channel. On the simulator the runner reaches the motion actions and the topics this way.
 */
export type RunnerToServer =
  | {
      readonly type: 'goal';
      readonly id: number;
      readonly action: string;
      readonly kind: 'joints';
      readonly goal: MoveToJointsGoal;
    }
  | {
      readonly type: 'goal';
      readonly id: number;
      readonly action: string;
      readonly kind: 'pose';
      readonly goal: MoveToPoseGoal;
    }
  | { readonly type: 'progress'; readonly iteration: number; readonly iterations: number; readonly point: string }
  /** Before each goal: may the run still move the arm (its lease with armgate's arbiter holds)? */
  | { readonly type: 'claim'; readonly id: number }
  | { readonly type: 'subscribe'; readonly topics: readonly string[] }
  /**
   * The 'rate' message `id` is applied: for a pause, every goal the runner had on its way to the stack
   * is cancelled with the cancel confirmed, and none goes out until a rate above 0. `error`: it could not be.
   */
  | { readonly type: 'rate_applied'; readonly id: number; readonly error?: string };

export type ServerToRunner =
  /** The run, once, first. */
  | { readonly type: 'job'; readonly job: SequenceJob }
  | { readonly type: 'result'; readonly id: number; readonly result: MotionResultMsg }
  | { readonly type: 'no_server'; readonly id: number; readonly message: string }
  | { readonly type: 'claim_result'; readonly id: number; readonly granted: boolean; readonly message: string }
  /** The topics the run records, as the context offers them (name, type, durability). */
  | { readonly type: 'topics'; readonly topics: readonly TopicInfo[] }
  | { readonly type: 'message'; readonly topic: string; readonly msg: unknown; readonly receivedNs: string }
  /** POST /stop or shutdown: finish at once (close the bag) and exit as terminated. */
  | { readonly type: 'stop' }
  /**
   * On ros2 (the runner's own node sends the goals): pause (0: the goal in flight is cancelled on the
   * stack and sent again on a rate above 0), resume, or the speed override for the goals sent from then on.
   * Applied in the order sent, each answered by 'rate_applied' with its `id`.
   */
  | { readonly type: 'rate'; readonly id: number; readonly rate: number };

/** The runner's exit codes. */
export const EXIT = {
  ok: 0,
  motionFailed: 1,
  badArguments: 2,
  noActionServer: 3,
  bagFailed: 4,
  /** 128 + SIGTERM, as a shell reports a terminated process. */
  terminated: 143,
} as const;
