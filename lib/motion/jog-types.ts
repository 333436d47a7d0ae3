/** The words of a jog: its speeds, what it asks, the limits that hold it back and why it ends (lib/motion/jog.ts). */
import type { EnvelopeChecker } from '../safety/envelope.ts';

/** The jog speeds (armgate.jog). */
export interface JogSpeeds {
  /** Fraction of each joint's velocity limit at input 1. */
  readonly jointSpeed: number;
  /** TCP speed at input 1 (m/s). */
  readonly tcpSpeedMS: number;
  /** TCP angular speed at input 1 (rad/s). */
  readonly tcpAngularSpeedRadS: number;
}

/** What a jog asks: joint velocity fractions, or a TCP twist as fractions (each in [-1, 1]). */
export type JogTarget =
  | { readonly kind: 'joints'; readonly fractions: readonly number[] }
  | {
      readonly kind: 'cartesian';
      readonly linear: readonly number[];
      readonly angular: readonly number[];
      readonly frame: 'base' | 'tool';
    };

/**
 * A bounded step (the MCP tool): move by `amount` (rad of the one joint, or m / rad along the one Cartesian axis of
 * the target) and end at rest there, or at a limit.
 */
export interface JogStepGoal {
  readonly amount: number;
}

/** Why a jog cannot go on as asked. */
export type JogLimitKind = 'joint_limit' | 'workspace' | 'keep_out' | 'singularity' | 'collision';

/** A limit in force: its kind and a sentence. */
export interface JogLimit {
  readonly kind: JogLimitKind;
  readonly detail: string;
}

/** Why a jog ended (at rest). */
export type JogEndReason = 'released' | 'ttl' | 'socket closed' | 'stop' | 'limit';

/** What the engine checks beside the joint limits. */
export interface JogGuards {
  /** The safety envelope on the TCP chain. */
  readonly envelope?: EnvelopeChecker;
  /** The collision model: the limit when `qRad` is in contact (self, floor, an obstacle, a keep-out box), else undefined. */
  readonly collision?: (qRad: ArrayLike<number>) => JogLimit | undefined;
}

/** What one period did. */
export interface JogStepReport {
  /** Some joint moves after the period. */
  readonly moving: boolean;
  /** The limit that held the jog back in this period, if any. */
  readonly limit: JogLimit | undefined;
  /** Set once, in the period the jog came to rest for good: why it ended. */
  readonly ended: JogEndReason | undefined;
}
