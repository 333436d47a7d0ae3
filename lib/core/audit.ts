/**
 * A finished call on the audit trail: both faces record each call they ran (or refused) through here, with the
 * outcome the result comes to.
 */
import { type AuditOutcome, type AuditTrail, cut, TEXT_MAX } from '../audit/trail.ts';
import type { Result } from '../result.ts';
import { type ApiError, statusOf } from './errors.ts';
import type { AnyOperation } from './operation.ts';
import type { Caller, Face } from './roles.ts';

/** The outcome of an operation's result: an error's status and text, or 200 with the result's success and message. */
export function outcomeOf(result: Result<unknown, ApiError>, face: Face): AuditOutcome {
  const toolError = face === 'mcp' ? { tool_error: !result.ok } : {};
  if (!result.ok) {
    const e = result.error;
    const message = e.kind === 'validation' ? e.issues.map((i) => `${i.loc.join('.')}: ${i.msg}`).join('; ') : e.detail;
    return { status: statusOf(e), ...toolError, success: false, message: cut(message, TEXT_MAX) };
  }
  const value = result.value as Record<string, unknown> | null;
  const success = typeof value?.success === 'boolean' ? value.success : true;
  const message = typeof value?.message === 'string' ? cut(value.message, TEXT_MAX) : undefined;
  return { status: 200, ...toolError, success, ...(message !== undefined ? { message } : {}) };
}

/** Records a finished call on `trail` (the caller asked `trail.wants(op)` first: reads are kept only with audit.reads). */
export function recordCall(
  trail: AuditTrail,
  op: AnyOperation,
  caller: Caller,
  startedMs: number,
  input: unknown,
  result: Result<unknown, ApiError>,
): void {
  trail.record(op, caller, startedMs, input, outcomeOf(result, caller.face));
}

/**
 * The input a call's trail line will show, summarized now, before the call runs (its upload's bytes may be handed to
 * the trajectory checker's thread meanwhile), when the trail keeps calls of `op`; otherwise `input` as it is. `acted`
 * is the validated input the operation runs with: the trail tells a repeated call by it.
 */
export function auditedBeforeRun(trail: AuditTrail, op: AnyOperation, input: unknown, acted: unknown): unknown {
  return trail.wants(op) ? trail.before(op, input, acted) : input;
}
