/**
 * A finished call on the audit trail: both faces record each call they ran (or refused) through here, with the
 * outcome the result comes to.
 */
import { type AuditOutcome, type AuditTrail, cut, TEXT_MAX } from '../audit/trail.ts';
import type { Result } from '../result.ts';
import type { ApiError } from './errors.ts';
import type { AnyOperation } from './operation.ts';
import type { Caller } from './roles.ts';

/** The status an error kind answers over HTTP. */
function statusOfKind(kind: ApiError['kind']): number {
  const table: Record<ApiError['kind'], number> = {
    validation: 422,
    unauthorized: 401,
    forbidden: 403,
    unsupported_media_type: 415,
    not_found: 404,
    method_not_allowed: 405,
    busy: 409,
    conflict: 409,
    payload_too_large: 413,
    unavailable: 503,
    internal: 500,
  };
  return table[kind];
}

/** The outcome of an operation's result: an error's status and text, or 200 with the result's success and message. */
export function outcomeOf(result: Result<unknown, ApiError>, face: 'rest' | 'mcp'): AuditOutcome {
  const toolError = face === 'mcp' ? { tool_error: !result.ok } : {};
  if (!result.ok) {
    const e = result.error;
    const message = e.kind === 'validation' ? e.issues.map((i) => `${i.loc.join('.')}: ${i.msg}`).join('; ') : e.detail;
    return { status: statusOfKind(e.kind), ...toolError, success: false, message: cut(message, TEXT_MAX) };
  }
  const value = result.value as Record<string, unknown> | null;
  const success = typeof value?.success === 'boolean' ? value.success : true;
  const message = typeof value?.message === 'string' ? cut(value.message, TEXT_MAX) : undefined;
  return { status: 200, ...toolError, success, ...(message !== undefined ? { message } : {}) };
}

/** Records a finished call on `trail`, if there is one. */
export function recordCall(
  trail: AuditTrail | undefined,
  op: AnyOperation,
  caller: Caller,
  startedMs: number,
  input: unknown,
  result: Result<unknown, ApiError>,
): void {
  // The outcome is worked out only for a call the trail keeps (reads are kept only with audit.reads).
  if (trail?.wants(op)) trail.record(op, caller, startedMs, input, outcomeOf(result, caller.face));
}
