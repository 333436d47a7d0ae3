import type { MotionResultMsg } from '../ros/messages.ts';
import type { SequencePoint } from './config.ts';

/** How one point of a sequence ended: the action's result, or no server for it. */
export type MoveAnswer =
  | { readonly kind: 'result'; readonly result: MotionResultMsg }
  | { readonly kind: 'no_server'; readonly message: string };

/** A bag being recorded by the runner; close() flushes it and writes its metadata. */
export interface Recording {
  /** The topics recorded, as `name (type)`. */
  readonly topics: readonly string[];
  /** Waits (bounded) until what the recorded topics published up to now has arrived: at the end of a run, before the close. */
  catchUp?(): Promise<void>;
  close(): Promise<void>;
}

/**
 * What the runner moves the arm and records bags through: on the simulator the server's context
 * over the IPC channel (ipc-backend.ts), on a ROS 2 stack the runner's own rclnodejs node
 * (rcl-backend.ts).
 */
export interface RunnerBackend {
  /** Makes what the run's goals go through ahead of them, where the backend has clients of its own (ros2). */
  prepare?(actions: { readonly joints: string; readonly pose: string }): void;
  /** Sends the point's goal (MoveToJoints or MoveToPose) to `action` and waits for its result. */
  move(action: string, point: SequencePoint): Promise<MoveAnswer>;
  /** Starts recording `topics` (empty: every topic offered) into a new bag folder; throws with the reason when it cannot. */
  record(folder: string, topics: readonly string[]): Promise<Recording>;
  /** Pause (0), resume or the speed override of its goals, where the backend sends them itself (ros2). */
  setRate?(rate: number): Promise<void>;
  /** Cancels the goals in flight (within `withinMs`) and releases the backend. */
  close(reason: string, withinMs: number): Promise<void>;
}
