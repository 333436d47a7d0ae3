import type { MotionResultMsg, MoveToJointsGoal, MoveToPoseGoal } from '../ros/messages.ts';

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
  | { readonly type: 'subscribe'; readonly topics: readonly string[] };

export type ServerToRunner =
  | { readonly type: 'result'; readonly id: number; readonly result: MotionResultMsg }
  | { readonly type: 'no_server'; readonly id: number; readonly message: string }
  | { readonly type: 'claim_result'; readonly id: number; readonly granted: boolean; readonly message: string }
  | { readonly type: 'topics'; readonly topics: readonly { readonly name: string; readonly type: string }[] }
  | { readonly type: 'message'; readonly topic: string; readonly msg: unknown; readonly receivedNs: string }
  /** POST /stop or shutdown: finish at once (close the bag) and exit as terminated. */
  | { readonly type: 'stop' };

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
