/**
 * A Foxglove service call runs its operation as the MCP face runs a tool (lib/mcp/tools.ts): the caller's role
 * first, then the operation's own input schema, then run with the call's context, and the call on the audit trail.
 * NOTE: until the shared pipeline (`invoke(operation, input, facts)` in lib/core, the "One call pipeline" issue)
 * lands, this mirrors lib/mcp/tools.ts's runTool; once it lands, `callOperation` becomes one call of invoke.
 */
import * as v from 'valibot';
import { recordCall } from '../core/audit.ts';
import { type ApiError, locatedIssues } from '../core/errors.ts';
import { type AnyOperation, type AppState, inputSchemaOf, type OpContext, renderError } from '../core/operation.ts';
import { type Caller, type Principal, refusal } from '../core/roles.ts';
import { err, type Result } from '../result.ts';

/** What a Foxglove call knows besides its input. */
export interface CallFacts {
  readonly principal: Principal;
  /** The service's name, for texts: `the Foxglove service /armgate/stop`. */
  readonly calledAs: string;
  /** The arbiter's stop count when the call's frame arrived. */
  readonly arrivedAtStop: number;
  /** Aborted when the connection that called is gone (the dead-man, lib/motion/dead-man.ts). */
  readonly signal: AbortSignal;
}

/** Runs `op` for a Foxglove caller; the error is the operation's (or the role's, or the validation's). */
export async function callOperation(
  op: AnyOperation,
  input: unknown,
  facts: CallFacts,
  state: AppState,
): Promise<Result<unknown, ApiError>> {
  const started = performance.now();
  const caller: Caller = { ...facts.principal, face: 'foxglove' };
  const result = await run(op, input, caller, facts, state);
  recordCall(state.services.audit, op, caller, started, input ?? {}, result);
  return result;
}

async function run(
  op: AnyOperation,
  input: unknown,
  caller: Caller,
  facts: CallFacts,
  state: AppState,
): Promise<Result<unknown, ApiError>> {
  const refused = refusal(op, caller, facts.calledAs);
  if (refused) return err(refused);
  let parsedInput: unknown = {};
  if (op.rawJson) parsedInput = { text: JSON.stringify(input ?? {}) };
  else if (op.input) {
    const parsed = v.safeParse(inputSchemaOf(op, state.ros.limits) as v.GenericSchema, input);
    if (!parsed.success) return err(locatedIssues(parsed.issues, () => 'request'));
    parsedInput = parsed.output;
  }
  const ctx: OpContext = {
    ...state,
    signal: facts.signal,
    progress: () => {},
    arrivedAtStop: facts.arrivedAtStop,
    caller,
    calledAs: facts.calledAs,
  };
  return op.run(parsedInput, ctx);
}

/** An error as one sentence (a serviceCallFailure's message): validation issues by field, else the detail. */
export function errorText(error: ApiError): string {
  const said = renderError(error, 'foxglove');
  return said.kind === 'validation'
    ? said.issues.map((issue) => `${issue.loc.slice(1).join('.') || 'request'}: ${issue.msg}`).join('; ')
    : said.detail;
}
