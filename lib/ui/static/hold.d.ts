// Types of hold.js for the tests (the page loads the .js; this file is not served).
export interface JointJog {
  readonly joints: number[];
  readonly ttl_ms: number;
}
export interface AxisJog {
  readonly linear: number[];
  readonly angular: number[];
  readonly frame: 'base' | 'tool';
  readonly ttl_ms: number;
}
export type JogCommand = JointJog | AxisJog;
export interface Timers {
  setInterval(fn: () => void, ms: number): unknown;
  clearInterval(id: unknown): void;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(id: unknown): void;
}
export const JOINT_COUNT: 7;
export const AXES: readonly ['x', 'y', 'z', 'a', 'b', 'c'];
export function jointCommand(index: number, sign: 1 | -1, speed: number, ttlMs: number): JointJog;
export function axisCommand(axis: string, sign: 1 | -1, speed: number, frame: 'base' | 'tool', ttlMs: number): AxisJog;
export function restCommand(ttlMs: number): JointJog;
export interface JogHold {
  readonly periodMs: number;
  readonly held: string | undefined;
  press(key: string, command: JogCommand): boolean;
  resend(): boolean;
  release(): boolean;
  linkClosed(): boolean;
}
export function jogHold(options: {
  send: (command: JogCommand) => boolean;
  ttlMs: number;
  timers?: Pick<Timers, 'setInterval' | 'clearInterval'>;
}): JogHold;
export interface HoldToRun {
  readonly holdMs: number;
  press(run: () => void): void;
  release(): 'ran' | 'short' | 'idle';
}
export function holdToRun(options: { holdMs: number; timers?: Pick<Timers, 'setTimeout' | 'clearTimeout'> }): HoldToRun;
