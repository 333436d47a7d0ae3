/**
 * The envelope along a joint trajectory as the controller would execute it: from the arm's state
 * to the first point, then between points (cubic Hermite where velocities are given, linear
 * otherwise, as ros2_controllers interpolates), sampled finely enough in joint space that no
 * joint moves more than {@link JOINT_STEP_RAD} between samples. Pure; runs on the trajectory worker.
 */
import type { Chain } from '../kinematics/chain.ts';
import { createEnvelopeChecker, type Envelope, type EnvelopeViolation } from './envelope.ts';

/** Largest joint motion between two checked samples (rad). */
export const JOINT_STEP_RAD = 0.02;

/** Points packed per joint, as the trajectory check holds them. */
export interface PackedTrajectory {
  readonly count: number;
  readonly joints: number;
  readonly times: Float64Array;
  readonly positions: Float64Array;
  readonly velocities: Float64Array | undefined;
}

/**
 * The first point whose approach leaves the envelope (the segment ending at it, or the point
 * itself), with the violation; undefined when the whole trajectory stays inside. `start` is the
 * arm's position (J1..J7) when known: the segment from it to a first point at t > 0 is checked too.
 */
export function firstEnvelopeViolation(
  chain: Chain,
  envelope: Envelope,
  packed: PackedTrajectory,
  start: readonly number[] | undefined,
): { point: number; violation: EnvelopeViolation } | undefined {
  const checker = createEnvelopeChecker(chain, envelope);
  const { count, joints, times, positions, velocities } = packed;
  const q = new Float64Array(joints);
  const a = new Float64Array(joints);
  const va = new Float64Array(joints);
  for (let i = 0; i < count; i++) {
    const at = i * joints;
    const dt = i === 0 ? (times[0] ?? 0) : (times[i] ?? 0) - (times[i - 1] ?? 0);
    const hasStart = i > 0 || (start !== undefined && dt > 0);
    if (hasStart) {
      for (let j = 0; j < joints; j++) {
        a[j] = i > 0 ? (positions[at - joints + j] ?? 0) : (start?.[j] ?? 0);
        va[j] = i > 0 && velocities ? (velocities[at - joints + j] ?? 0) : 0;
      }
      const cubic = velocities !== undefined && dt > 0;
      let spread = 0;
      for (let j = 0; j < joints; j++) {
        const b = positions[at + j] ?? 0;
        const vb = velocities?.[at + j] ?? 0;
        spread = Math.max(
          spread,
          Math.abs(b - (a[j] ?? 0)) + (cubic ? ((Math.abs(va[j] ?? 0) + Math.abs(vb)) * dt) / 4 : 0),
        );
      }
      const steps = Math.max(1, Math.ceil(spread / JOINT_STEP_RAD));
      for (let k = 1; k < steps; k++) {
        const s = k / steps;
        for (let j = 0; j < joints; j++) {
          const p0 = a[j] ?? 0;
          const p1 = positions[at + j] ?? 0;
          if (!cubic) q[j] = p0 + (p1 - p0) * s;
          else {
            const s2 = s * s,
              s3 = s2 * s;
            const v0 = va[j] ?? 0,
              v1 = velocities?.[at + j] ?? 0;
            q[j] =
              (2 * s3 - 3 * s2 + 1) * p0 + (s3 - 2 * s2 + s) * dt * v0 + (-2 * s3 + 3 * s2) * p1 + (s3 - s2) * dt * v1;
          }
        }
        const violation = checker.check(q);
        if (violation) return { point: i, violation };
      }
    }
    for (let j = 0; j < joints; j++) q[j] = positions[at + j] ?? 0;
    const violation = checker.check(q);
    if (violation) return { point: i, violation };
  }
  return undefined;
}
