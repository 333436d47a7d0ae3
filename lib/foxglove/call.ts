/**
 * A Foxglove service call runs its operation through the one call pipeline (`invoke` of lib/core/invoke.ts), as REST
 * and MCP calls do: the caller's role, the operation's own input schema, dry-run routing, run, the output check, the
 * audit trail (interface `foxglove`) and the texts. The face adds only what it knows of the call.
 */
import type { ApiError } from '../core/errors.ts';
import { invoke } from '../core/invoke.ts';
import type { AnyOperation, AppState } from '../core/operation.ts';
import type { Principal } from '../core/roles.ts';
import type { Result } from '../result.ts';

/** What a Foxglove call knows besides its input. */
export interface CallFacts {
  readonly principal: Principal;
  /** The service's name, for texts: `the Foxglove service /armgate/stop`. */
  readonly calledAs: string;
  /** The arbiter's stop count when the call's frame arrived. */
  readonly arrivedAtStop: number;
  /** Aborted when the connection that called is gone (the dead-man, lib/control/dead-man.ts). */
  readonly signal: AbortSignal;
}

/** Runs `op` for a Foxglove caller; the error is the operation's (or the role's, or the validation's). */
export function callOperation(
  op: AnyOperation,
  input: unknown,
  facts: CallFacts,
  state: AppState,
): Promise<Result<unknown, ApiError>> {
  return invoke(op, input, {
    ...state,
    caller: facts.principal,
    face: 'foxglove',
    calledAs: facts.calledAs,
    arrivedAtStop: facts.arrivedAtStop,
    signal: facts.signal,
    locate: () => 'request',
  });
}

/** An error as one sentence (a serviceCallFailure's message): validation issues by field, else the detail. */
export function errorText(error: ApiError): string {
  return error.kind === 'validation'
    ? error.issues.map((issue) => `${issue.loc.slice(1).join('.') || 'request'}: ${issue.msg}`).join('; ')
    : error.detail;
}
