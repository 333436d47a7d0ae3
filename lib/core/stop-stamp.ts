/**
 * The stop stamp of the pipeline: a call that arrived before a stop and would run after it is refused where its
 * operation declares so (`refusedAfterStop`: a raise of the speed override), as the arbiter refuses a motion then
 * (lib/control/arbiter.ts). The arrival stamp is the stop count when the call's request arrived (`arrivedAtStop`).
 */
import type { Services } from '../app/services.ts';
import type { ApiError } from './errors.ts';
import type { AnyOperation, OpContext } from './operation.ts';

/**
 * The refusal (409) of a call of `op` with `input` once a stop came after its arrival, as `op` declares it; undefined
 * when it may run: `op` declares none, the call carries no stamp, no stop came since, or its input is not one refused.
 */
export function stoppedSinceArrival(
  op: AnyOperation,
  input: unknown,
  ctx: OpContext,
  services: Pick<Services, 'arbiter'>,
): ApiError | undefined {
  const refuses = op.refusedAfterStop;
  const arrived = ctx.arrivedAtStop;
  if (!refuses || arrived === undefined || arrived === services.arbiter.stopCount) return undefined;
  const detail = refuses(input, ctx);
  return detail === undefined ? undefined : { kind: 'busy', detail };
}
