/**
 * The bounds of a trajectory point, the same whether it arrives as JSON (POST /trajectory/send)
 * or as a CSV row (POST /trajectory/send_csv). Pure data and checks, no I/O.
 */

/** Most points one trajectory may carry. */
export const MAX_POINTS = 100_000;
/** Largest time_from_start (s): one day. */
export const MAX_TIME_FROM_START_S = 86_400;
/** Largest |angle| (rad) of a point, whatever the joint limits file says. */
export const MAX_ABS_ANGLE_RAD = 2 * Math.PI;

/** Why a time_from_start is out of bounds, or undefined when it is a finite number in 0..86400 s. */
export function timeProblem(timeS: number): string | undefined {
  if (!Number.isFinite(timeS)) return 'must be a finite number';
  if (timeS < 0) return `time ${timeS} is negative`;
  if (timeS > MAX_TIME_FROM_START_S) return `time ${timeS} s is beyond ${MAX_TIME_FROM_START_S} s`;
  return undefined;
}

/** Why an angle is out of bounds, or undefined when it is finite and within +-2 pi. */
export function angleProblem(angleRad: number): string | undefined {
  if (!Number.isFinite(angleRad)) return 'must be a finite number';
  if (Math.abs(angleRad) > MAX_ABS_ANGLE_RAD) return `${angleRad} rad is beyond +-2 pi`;
  return undefined;
}
