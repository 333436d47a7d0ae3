/**
 * When a pose target with ABC (0, 0, 0) cannot be reached, the orientation is often the problem: ABC (0, 0, 0), what
 * a, b and c default to over HTTP when left out, points the flange up, which the arm reaches only in a small part of
 * its workspace. This checks with the context's IK whether the same position is reachable with the flange pointing
 * down (a = 0, b = pi, c = 0) and, only then, says so.
 */
import type { OpContext } from '../core/operation.ts';

/**
 * A planning failure about the pose itself: no IK solution, or only one in collision (the flange up near the floor),
 * not a stop, a busy arm or a timeout.
 */
const UNREACHED = /inverse kinematics|out of reach|no solution|NO_IK_SOLUTION|unable to sample|target is in collision/i;

/** The sentence to add to `message` (a failed motion to `goal`), or undefined when the orientation is not the matter. */
export async function orientationHint(
  ctx: Pick<OpContext<never>, 'ros' | 'signal'>,
  goal: {
    readonly x: number;
    readonly y: number;
    readonly z: number;
    readonly a: number;
    readonly b: number;
    readonly c: number;
    readonly frame_id?: string;
  },
  message: string,
): Promise<string | undefined> {
  if (goal.a !== 0 || goal.b !== 0 || goal.c !== 0 || !UNREACHED.test(message)) return undefined;
  const down = await ctx.ros.solveIk(
    { x: goal.x, y: goal.y, z: goal.z, a: 0, b: Math.PI, c: 0, frame_id: goal.frame_id ?? '', collision_check: true },
    { signal: ctx.signal },
  );
  if (!down.ok || !down.value.success) return undefined;
  return (
    'the orientation is the problem, not the position: ABC (0, 0, 0), what a, b and c are when left out over HTTP, ' +
    'points the flange up; this position is reachable with a=0, b=pi (3.1416), c=0, the flange pointing down'
  );
}
