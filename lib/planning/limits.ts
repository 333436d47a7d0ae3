import type { JointLimits } from '../robot/limits.ts';

/** Scales of a motion request: speed (0.01..1) and acceleration (0..1, 0 meaning "use speed"). */
export interface MotionScales {
  readonly speed: number;
  readonly accelScale: number;
}

/** The acceleration scale in force: accel_scale, or speed when accel_scale is 0. */
export function effectiveAccelScale(scales: MotionScales): number {
  return scales.accelScale > 0 ? scales.accelScale : scales.speed;
}

/** Velocity and acceleration bounds per joint after scaling. */
export function scaledJointLimits(limits: JointLimits, scales: MotionScales): { vMax: number[]; aMax: number[] } {
  const acc = effectiveAccelScale(scales);
  return { vMax: limits.maxVelRadS.map((v) => v * scales.speed), aMax: limits.maxAccRadS2.map((a) => a * acc) };
}
