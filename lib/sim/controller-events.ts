/** What the simulated trajectory controller reports (lib/sim/controller.ts), and the log sentence of a clip. */
import type { JogEndReason, JogLimit } from '../motion/jog.ts';

/** What the controller did, for the trajectory log and for waiting goals. */
export type ControllerEvent =
  | { readonly kind: 'accepted'; readonly id: number; readonly points: number; readonly durationS: number }
  | { readonly kind: 'refused'; readonly reason: string }
  | { readonly kind: 'preempted'; readonly id: number }
  | { readonly kind: 'finished'; readonly id: number }
  | { readonly kind: 'cancelled'; readonly id: number }
  | { readonly kind: 'hold'; readonly positions: readonly number[] }
  /** A paused trajectory came to rest on its path (its rate reached 0). */
  | { readonly kind: 'paused'; readonly id: number; readonly positions: readonly number[] }
  | { readonly kind: 'hold-request' }
  /** A jog: it began, its arm started moving or came to rest (still commanded), or it ended at rest (with why). */
  | {
      readonly kind: 'jog';
      readonly state: 'started' | 'moving' | 'resting' | 'ended';
      readonly reason?: JogEndReason;
      /** With ended at a limit: which. */
      readonly limit?: JogLimit;
      readonly positions: readonly number[];
    }
  | {
      readonly kind: 'clipped';
      readonly id: number;
      readonly joint: string;
      readonly needRadS2: number;
      readonly limitRadS2: number;
      readonly atS: number;
      readonly cause: 'acceleration' | 'position limit';
    };

/** One log sentence for a clip event. */
export function describeClip(event: Extract<ControllerEvent, { kind: 'clipped' }>): string {
  const when = `at t = ${event.atS.toFixed(3)} s`;
  const what =
    event.cause === 'acceleration'
      ? `needs ${event.needRadS2.toPrecision(3)} rad/s^2 on ${event.joint} ${when} (limit ${event.limitRadS2} rad/s^2)`
      : `would carry ${event.joint} into its position limit ${when}`;
  return `trajectory #${event.id} ${what}: the drive follows with limited acceleration (logged once per trajectory)`;
}
