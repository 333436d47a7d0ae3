import { REST_VELOCITY_RAD_S } from './hold.ts';

/** How long (ms) the messages must say so, back to back: five periods of a 100 Hz topic. */
export const REST_WINDOW_MS = 50;
/** How far (rad) any joint may move over the window and still count as at rest. */
export const REST_SPAN_RAD = 1e-4;

/**
 * When a stream of joint states says the arm rests: every joint below {@link REST_VELOCITY_RAD_S} over
 * {@link REST_WINDOW_MS} of messages, the positions within {@link REST_SPAN_RAD} of where the window
 * began. One slow message is not rest: a joint whose velocity crosses zero (the arm settling after a
 * cancel, found on a real graph) reads still for a message and is 1 mrad elsewhere 100 ms later.
 * Without velocities in the messages, the positions alone decide. Pure: the caller gives the times.
 */
export class RestWatch {
  private since: { readonly atMs: number; readonly position: readonly number[] } | undefined;

  /** One joint state received at `atMs`: true once the arm has rested over the whole window. */
  observe(atMs: number, position: readonly number[], velocity?: readonly number[]): boolean {
    const still = velocity?.length !== position.length || velocity.every((v) => Math.abs(v) <= REST_VELOCITY_RAD_S);
    const since = this.since;
    if (!still || !since || !within(since.position, position)) {
      this.since = still ? { atMs, position } : undefined;
      return false;
    }
    return atMs - since.atMs >= REST_WINDOW_MS;
  }
}

function within(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((q, i) => Math.abs(q - (b[i] ?? Number.NaN)) <= REST_SPAN_RAD);
}

/**
 * The arm already rests at `target`: every joint within {@link REST_SPAN_RAD} of it and below
 * {@link REST_VELOCITY_RAD_S} (a state without velocities: the positions alone decide). Pure.
 */
export function restsAt(
  position: readonly number[],
  velocity: readonly number[] | undefined,
  target: readonly number[],
): boolean {
  const still = velocity?.length !== position.length || velocity.every((v) => Math.abs(v) <= REST_VELOCITY_RAD_S);
  return still && within(position, target);
}
