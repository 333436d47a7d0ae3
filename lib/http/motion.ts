import * as v from 'valibot';
import { services } from '../app/services.ts';
import type { InterfaceUnavailable } from '../ros/context.ts';
import type { MotionResultMsg } from '../ros/messages.ts';
import type { Result } from '../result.ts';
import { errorResponse, json, unavailable } from './errors.ts';
import { ErrorDetailSchema } from './schemas.ts';

/** The motion result resource. */
export const MotionResultSchema = v.pipe(
  v.object({
    success: v.pipe(
      v.boolean(),
      v.description(
        'true: the arm reached the target. false: planning or execution failed, or the motion was stopped or timed out; nothing more will move.',
      ),
    ),
    message: v.pipe(v.string(), v.description('What happened, in one sentence a person can act on.')),
  }),
  v.title('MotionResult'),
);

/** Responses common to the three move endpoints. */
export const MOTION_RESPONSES = {
  200: { description: 'The motion finished, failed or was stopped: check success.', schema: MotionResultSchema },
  409: {
    description: 'The arm is busy with another motion, a trajectory or a sequence (no queue).',
    schema: ErrorDetailSchema,
  },
  503: { description: 'The motion interface of the stack is unavailable.', schema: ErrorDetailSchema },
} as const;

/**
 * Runs a motion under the arbiter: 409 at once when the arm is busy, otherwise the call's result
 * as 200 `{success, message}` (503 when the interface did not answer). The call gets the lease's
 * signal: POST /stop revokes the lease, which cancels the goal.
 */
export async function runMotion(
  what: string,
  call: (signal: AbortSignal) => Promise<Result<MotionResultMsg, InterfaceUnavailable>>,
): Promise<Response> {
  const lease = services().arbiter.acquire('move', what);
  if (!lease.ok) return errorResponse({ kind: 'busy', detail: lease.error });
  try {
    const result = await call(lease.value.signal);
    if (!result.ok) return errorResponse(unavailable(result.error));
    return json({ success: result.value.success, message: result.value.message });
  } finally {
    lease.value.release();
  }
}
