/**
 * The simulated iiwa 7: joint positions and velocities that follow a commanded position and
 * velocity within the joint limits (position, velocity, acceleration), one step at a time. It never
 * leaves its limits, whatever it is commanded. Pure.
 */
import { at, type JointLimit } from './model.ts';

/** Below this speed (rad/s) every joint counts as at rest. */
export const AT_REST = 1e-3;

export class Arm {
  positions: number[];
  velocities: number[];

  readonly limits: readonly JointLimit[];

  constructor(limits: readonly JointLimit[], initial: readonly number[]) {
    this.limits = limits;
    this.positions = limits.map((l, i) => Math.min(l.max, Math.max(l.min, initial[i] ?? 0)));
    this.velocities = limits.map(() => 0);
  }

  get moving(): boolean {
    return this.velocities.some((v) => Math.abs(v) > AT_REST);
  }

  /** Teleports to positions at rest (clamped to the limits): for test setup only. */
  set(positions: readonly number[]): void {
    this.positions = this.limits.map((l, i) => Math.min(l.max, Math.max(l.min, positions[i] ?? 0)));
    this.velocities = this.limits.map(() => 0);
  }

  /**
   * One step of dt seconds toward the commanded state: the commanded velocity plus a correction of
   * the position error that can still brake within the acceleration limit, then limited to the
   * velocity and acceleration limits and kept inside the position limits.
   */
  step(dt: number, command: readonly number[], commandVelocity: readonly number[]): void {
    if (!(dt > 0)) return;
    this.limits.forEach((l, i) => {
      const p = at(this.positions, i);
      const v = at(this.velocities, i);
      const target = Math.min(l.max, Math.max(l.min, command[i] ?? p));
      const e = target - p;
      const correction = Math.sign(e) * Math.min(Math.abs(e) / dt, Math.sqrt(2 * l.acceleration * Math.abs(e)));
      let want = (commandVelocity[i] ?? 0) + correction;
      want = Math.min(l.velocity, Math.max(-l.velocity, want));
      const dv = l.acceleration * dt;
      want = Math.min(v + dv, Math.max(v - dv, want));
      // Braking distance to a position limit: never closer than the acceleration allows.
      const room = want > 0 ? l.max - p : p - l.min;
      const brake = Math.sqrt(2 * l.acceleration * Math.max(0, room));
      if (Math.abs(want) > brake) want = Math.sign(want) * Math.max(brake, Math.abs(v) - dv);
      let next = p + want * dt;
      if (next > l.max || next < l.min) {
        next = Math.min(l.max, Math.max(l.min, next));
        want = (next - p) / dt;
      }
      this.positions[i] = next;
      this.velocities[i] = want;
    });
  }
}
