/**
 * The envelope for motion targets a robot stack plans itself (ros2 moves, sequence goals): armgate
 * does not see the path the stack will take, so what it can check is the target. A joint target
 * (or a named position) is checked fully: the TCP by forward kinematics and every link capsule. A
 * pose target only by its TCP position: inside the workspace and not within the link radius of a
 * keep-out box (the links' configuration is the stack's IK choice). Pure: no clock, no I/O.
 */
import type { Chain } from '../kinematics/chain.ts';
import { createEnvelopeChecker, type Envelope, type EnvelopeChecker, tcpPointViolation } from './envelope.ts';

/** A motion target as the stack receives it: joint angles (rad, J1..J7), or a TCP position (m) in a frame. */
export type SafetyTarget =
  | { readonly kind: 'joints'; readonly qRad: readonly number[] }
  | { readonly kind: 'pose'; readonly positionM: readonly [number, number, number]; readonly frameId: string };

/** The envelope with the TCP chain it is checked on and the frame it is defined in. */
export interface TargetGuard {
  readonly checker: EnvelopeChecker;
  /** The TCP chain the checker runs on (for checks along a path). */
  readonly chain: Chain;
  readonly planningFrame: string;
}

/** A guard for `envelope` on `chain` (the TCP chain), axis-aligned in `planningFrame`. */
export function createTargetGuard(chain: Chain, envelope: Envelope, planningFrame: string): TargetGuard {
  return { checker: createEnvelopeChecker(chain, envelope), chain, planningFrame };
}

/**
 * Why `target` is outside the envelope (a sentence naming the zone: `workspace` or the keep-out
 * box), or undefined when it is inside. A pose target in another frame than the planning frame
 * cannot be checked (armgate has no transforms), so it is refused saying so.
 */
export function targetOutsideEnvelope(guard: TargetGuard, target: SafetyTarget): string | undefined {
  if (target.kind === 'joints') return guard.checker.check(target.qRad)?.message;
  if (target.frameId !== '' && target.frameId !== guard.planningFrame)
    return `the target's frame '${target.frameId}' is not the planning frame '${guard.planningFrame}' the envelope is defined in, so it cannot be checked (use '' or '${guard.planningFrame}')`;
  return tcpPointViolation(guard.checker.envelope, target.positionM)?.message;
}

/** A chain as plain arrays, to cross a JSON channel (the sequence runner's IPC): its Float64Arrays as number arrays. */
export type PlainChain = {
  readonly [K in keyof Chain]: Chain[K] extends Float64Array ? readonly number[] : Chain[K];
};

/** The chain's number arrays, each through `convert` (the one list of them both directions use). */
function mapArrays<T>(chain: Chain | PlainChain, convert: (values: ArrayLike<number>) => T) {
  return {
    originPos: convert(chain.originPos),
    originRot: convert(chain.originRot),
    axis: convert(chain.axis),
    tipPos: convert(chain.tipPos),
    tipRot: convert(chain.tipRot),
  };
}

/** The chain as plain arrays. */
export function plainChain(chain: Chain): PlainChain {
  return { jointNames: [...chain.jointNames], ...mapArrays(chain, (values) => Array.from(values)) };
}

/** The chain back from plain arrays. */
export function chainOfPlain(plain: PlainChain): Chain {
  return { jointNames: [...plain.jointNames], ...mapArrays(plain, (values) => Float64Array.from(values)) };
}

/** What the sequence runner needs to check its goals' targets: the envelope, the TCP chain, the planning frame. */
export interface PlainTargetGuard {
  readonly envelope: Envelope;
  readonly chain: PlainChain;
  readonly planning_frame: string;
}

/** The guard from its plain form. */
export function targetGuardOfPlain(plain: PlainTargetGuard): TargetGuard {
  return createTargetGuard(chainOfPlain(plain.chain), plain.envelope, plain.planning_frame);
}
