import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type {
  CallToolResult,
  ServerNotification,
  ServerRequest,
  Tool,
  ToolAnnotations,
} from '@modelcontextprotocol/sdk/types.js';
import * as v from 'valibot';
import type { ApiError } from '../core/errors.ts';
import { invoke, jsonOf } from '../core/invoke.ts';
import {
  type AnyOperation,
  type AppState,
  inputSchemaOf,
  type OpContext,
  renderText,
  renderTexts,
  type ToolNames,
} from '../core/operation.ts';
import { isPrincipal, type Principal } from '../core/roles.ts';
import { summarizeInput } from '../audit/trail.ts';
import { jsonSchema } from '../openapi/json-schema.ts';
import type { JointLimits } from '../robot/limits.ts';

/** The SDK's per-request extra of a tools/call. */
export type CallExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/**
 * Asks the person before a motion runs (mcp.confirm_motion, through MCP elicitation): resolves
 * with undefined when they agreed (or nobody can be asked), otherwise with why not.
 */
export type ConfirmMotion = (op: AnyOperation, input: unknown, extra: CallExtra) => Promise<string | undefined>;

/** The question put to the person before a motion tool (or a raise of the override) runs: the tool and its input. */
export function confirmationText(op: AnyOperation, input: unknown): string {
  const summary = JSON.stringify(summarizeInput(op, input) ?? {});
  const what = op.effect === 'motion' ? 'move the arm' : 'change how the arm moves';
  return `An agent asks to ${what}: ${op.name} ${summary.length > 600 ? `${summary.slice(0, 600)}...` : summary}. Allow this motion?`;
}

const EMPTY_OBJECT = { type: 'object', properties: {}, additionalProperties: false } as const;

/** The MCP annotations of an operation's effect. */
export function annotationsOf(op: AnyOperation): ToolAnnotations {
  const title = op.mcp?.title;
  if (op.effect === 'read')
    return { title, readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
  if (op.effect === 'stop')
    return { title, readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true };
  // Changes what armgate keeps (a taught position saved over, or removed), never the arm: closed world.
  if (op.effect === 'write')
    return { title, readOnlyHint: false, destructiveHint: true, idempotentHint: op.idempotent, openWorldHint: false };
  return { title, readOnlyHint: false, destructiveHint: true, idempotentHint: op.idempotent, openWorldHint: true };
}

/**
 * The tool of an operation: its name, text (other operations said by `toolNames`), annotations, and input and output
 * schemas (joint bounds of `limits`).
 */
export function toolOf(op: AnyOperation, limits: JointLimits, toolNames?: ToolNames): Tool {
  const output = op.mcp?.wrapAs ? v.object({ [op.mcp.wrapAs]: op.output }) : op.output;
  return {
    name: op.name,
    title: op.mcp?.title ?? op.summary,
    description: renderText(op.description, 'mcp', toolNames),
    inputSchema: (op.input
      ? renderTexts(jsonSchema(inputSchemaOf(op, limits) as v.GenericSchema), 'mcp', toolNames)
      : EMPTY_OBJECT) as Tool['inputSchema'],
    outputSchema: renderTexts(jsonSchema(output), 'mcp', toolNames) as Tool['outputSchema'],
    annotations: annotationsOf(op),
  };
}

/** What to do about an error, said to an agent. */
const ADVICE: Partial<Record<ApiError['kind'], string>> = {
  busy: 'The arm is busy (a motion, trajectory or sequence holds it): wait for it to finish and retry, or call stop.',
  conflict: 'Nothing was changed, for the reason above.',
  payload_too_large: 'The input is too large.',
  // A role refusal (its text names the role needed) or a motion the person did not confirm (mcp.confirm_motion).
  forbidden: 'Nothing was done, for the reason above.',
  validation: 'The arguments are invalid: fix the fields named above and call again.',
  unavailable: 'The robot stack is not answering (controller, planner or FK service): check that it runs, then retry.',
};

/** A tool error result for an error of the operation (its texts already said as MCP says them). */
function errorResult(op: AnyOperation, said: ApiError): CallToolResult {
  const text =
    said.kind === 'validation'
      ? said.issues.map((issue) => `${issue.loc.slice(1).join('.') || 'arguments'}: ${issue.msg}`).join('; ')
      : said.detail;
  return {
    isError: true,
    content: [{ type: 'text', text: `${op.name} failed: ${text}. ${ADVICE[said.kind] ?? ''}`.trim() }],
  };
}

/**
 * A one-line summary of a result for the text content (the full result is in structuredContent): its JSON, made once
 * per output object (the pipeline's, {@link jsonOf}) when the result is the output itself.
 */
function summarize(op: AnyOperation, result: Record<string, unknown>): string {
  if ('success' in result && 'message' in result)
    return `${result.success ? 'succeeded' : 'did not succeed'}: ${String(result.message)}`;
  const text = op.mcp?.wrapAs ? JSON.stringify(result) : jsonOf(result);
  return text.length > 2000 ? `${text.slice(0, 2000)}... (${op.name}: full result in structuredContent)` : text;
}

/**
 * Who makes a call: the principal the app's authentication found for the HTTP request, handed to
 * the session as the request's authInfo (`extra.principal`; the token itself is never put there).
 * Undefined for a call that did not come through the app's authentication: it is refused. The front door's own
 * object, not a copy: the pipeline makes the caller of a principal once (lib/core/invoke.ts, callerOf).
 */
export function principalOf(extra: Pick<CallExtra, 'authInfo'>): Principal | undefined {
  const given = extra.authInfo?.extra?.principal;
  return isPrincipal(given) ? given : undefined;
}

/**
 * The arbiter's stop count when the HTTP request carrying a call arrived (stamped by the server, handed over as the
 * request's authInfo): a stop since then refuses its motion, however long the body, the queue or a confirmation took.
 */
function arrivalOf(extra: Pick<CallExtra, 'authInfo'>): number | undefined {
  const stamped = extra.authInfo?.extra?.arrivedAtStop;
  return typeof stamped === 'number' ? stamped : undefined;
}

/** What a call without a progress token does with its progress: nothing (one function for all of them). */
const NO_PROGRESS: OpContext['progress'] = () => {};

/** Progress notifications for a call that asked for them (a progress token), each greater than the last; else nothing. */
function progressOf(extra: CallExtra): OpContext['progress'] {
  const token = extra._meta?.progressToken;
  if (token === undefined) return NO_PROGRESS;
  let last = -1;
  return (progress, total, message) => {
    // Progress must increase from one notification to the next.
    if (progress <= last) return;
    last = progress;
    void extra
      .sendNotification({
        method: 'notifications/progress',
        params: {
          progressToken: token,
          progress,
          ...(total !== undefined ? { total } : {}),
          ...(message ? { message } : {}),
        },
      })
      .catch(() => {});
  };
}

/**
 * Calls an operation as a tool, through the call pipeline (lib/core/invoke.ts): the caller's role is checked first (a
 * tool error naming the role needed), the arguments are validated with the operation's own schema (an invalid call is
 * a tool error naming the fields, so the agent can correct it), a motion that would move is put to the person when
 * mcp.confirm_motion asks for it, and every call is written to the audit trail (see lib/audit/trail.ts). The output is
 * the structured result.
 */
export async function callTool(
  op: AnyOperation,
  args: unknown,
  extra: CallExtra,
  face: {
    readonly state: AppState;
    readonly confirm?: ConfirmMotion | undefined;
    /** The names other operations are said by in error texts (the served tool names). */
    readonly toolNames?: ToolNames;
  },
): Promise<CallToolResult> {
  const { state, confirm, toolNames } = face;
  const result = await invoke(op, args, {
    services: state.services,
    ros: state.ros,
    caller: principalOf(extra),
    face: 'mcp',
    calledAs: `the ${op.name} tool`,
    arrivedAtStop: arrivalOf(extra) ?? state.services.arbiter.stopCount,
    // Read only when the operation looks (the pipeline takes the signal lazily).
    signal: () => extra.signal,
    progress: progressOf(extra),
    ...(toolNames ? { toolNames } : {}),
    ...(confirm ? { confirm: (motion: AnyOperation, given: unknown) => confirm(motion, given, extra) } : {}),
  });
  if (!result.ok) return errorResult(op, result.error);
  return toolResultOf(op, result.value);
}

/** The tool results built so far, by operation and output object (a state read many times between updates is one). */
const toolResults = new WeakMap<AnyOperation, WeakMap<object, CallToolResult>>();

/**
 * The tool result of an operation's output: the structured result and its one-line text. The same output object gives
 * the same (unchanged) result object: a state read many times between updates is summarized once.
 */
function toolResultOf(op: AnyOperation, value: unknown): CallToolResult {
  // The pipeline hands the same said output for the same output object: its tool result is kept with it.
  const cacheable = typeof value === 'object' && value !== null;
  let byValue = cacheable ? toolResults.get(op) : undefined;
  const known = byValue?.get(value as object);
  if (known) return known;
  const structured = (op.mcp?.wrapAs ? { [op.mcp.wrapAs]: value } : value) as Record<string, unknown>;
  const built: CallToolResult = {
    structuredContent: structured,
    content: [{ type: 'text', text: summarize(op, structured) }],
  };
  if (cacheable) {
    if (!byValue) {
      byValue = new WeakMap();
      toolResults.set(op, byValue);
    }
    byValue.set(value as object, built);
  }
  return built;
}
