/** The jog engine's check of the place the arm would stop (lib/motion/jog.ts): the safety envelope and the collisions. */
import type { JointLimits } from '../robot/limits.ts';
import type { JogGuards, JogLimit } from './jog-types.ts';
import { COLLISION_EVERY } from './jog-tuning.ts';

/** The guards of one jog engine, with the collision model asked every {@link COLLISION_EVERY} periods. */
export class StopPointGuard {
  private readonly guards: JogGuards;
  private readonly limits: JointLimits;
  private readonly n: number;
  private readonly qFar: Float64Array;
  private collisionCountdown = 0;
  private collisionHit: JogLimit | undefined;

  constructor(guards: JogGuards, limits: JointLimits) {
    this.guards = guards;
    this.limits = limits;
    this.n = limits.jointNames.length;
    this.qFar = new Float64Array(this.n);
  }

  /** Forgets the last collision answer (a new jog). */
  reset(): void {
    this.collisionCountdown = 0;
    this.collisionHit = undefined;
  }

  /**
   * The first guard the stop point `q` fails (envelope, collision), as a limit. The collision model (the costlier
   * check) is asked every {@link COLLISION_EVERY} periods, about the farthest stop the arm could reach before the next
   * from the commanded state after this period (`qNext`, `qdNext`).
   */
  check(q: Float64Array, qNext: Float64Array, qdNext: Float64Array, dtS: number): JogLimit | undefined {
    const violation = this.guards.envelope?.check(q);
    if (violation)
      return {
        kind: violation.kind === 'workspace' ? 'workspace' : 'keep_out',
        detail: violation.message.replace(' would ', ' would soon '),
      };
    const collision = this.guards.collision;
    if (!collision) return undefined;
    if (--this.collisionCountdown <= 0) {
      this.collisionCountdown = COLLISION_EVERY;
      // Where the arm could stop at the latest if it sped up at its limit until the next check (braking at half of it).
      const ahead = COLLISION_EVERY * dtS;
      for (let j = 0; j < this.n; j++) {
        const v = qdNext[j] ?? 0;
        const a = this.limits.maxAccRadS2[j] ?? 1;
        const fastest = Math.abs(v) + a * ahead;
        this.qFar[j] = (qNext[j] ?? 0) + Math.sign(v) * ((fastest * fastest) / a + fastest * ahead);
      }
      this.collisionHit = collision(this.qFar);
    }
    return this.collisionHit;
  }
}
