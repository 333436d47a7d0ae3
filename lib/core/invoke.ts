/**
 * The one call pipeline: every face (REST, MCP, and any other: a WebSocket, Foxglove services) calls an operation
 * through {@link invoke}, which does, in this order, what a call needs whatever carried it:
 *
 * 1. the caller: none (it did not pass authentication) is refused, never run and not on the trail; a role too weak
 *    for the operation is refused (403 naming the role needed) before the input is even read;
 * 2. the input: read (a face's deferred reader: REST reads its body only now), numbers and booleans sent as strings
 *    converted where the schema wants them ("0.5"), then validated with the operation's schema under the active joint
 *    limits (422 issues located as the face says where each field was), the REST
 *    binding's defaults filled in;
 * 3. dry-run routing: a motion that would move (not `dry_run: true`), or a call its operation says so of (`confirms`:
 *    a raise of the speed override), is put to the face's confirmation first, if it has one (MCP's mcp.confirm_motion);
 * 4. run, with the call's context, unless a stop came after the call's arrival and its operation refuses it then
 *    (`refusedAfterStop`, lib/core/stop-stamp.ts: a raise of the speed override);
 * 5. the output checked against the operation's output schema (once per distinct output object);
 * 6. the audit trail (every call with a caller, refusals included);
 * 7. the texts: the error's and the output's `{op:name}` references said as the face says them (an output whose JSON
 *    has no `{op:` is answered as the run answered it; its JSON, made then, is what the faces send: {@link jsonOf}).
 *
 * What comes back is a Result the face only encodes: a Response (lib/http/rest.ts), a CallToolResult
 * (lib/mcp/tools.ts). An error's status is {@link statusOf} of lib/core/errors.ts, the one table of it.
 */
import * as v from 'valibot';
import { err, ok, type Result } from '../result.ts';
import { auditedBeforeRun, recordCall } from './audit.ts';
import { type ApiError, locatedIssues } from './errors.ts';
import { coerceScalarStrings } from './schema-shape.ts';
import { stoppedSinceArrival } from './stop-stamp.ts';
import type { Services } from '../app/services.ts';
import type { JointLimits } from '../robot/limits.ts';
import {
  type AnyOperation,
  type AppState,
  type Channel,
  inputSchemaOf,
  type OpContext,
  renderError,
  renderTexts,
  type ToolNames,
} from './operation.ts';
import {
  type Caller,
  type Face,
  NO_CALLER,
  type Principal,
  ROLES,
  type Role,
  refusal,
  roleAllows,
  roleNeeded,
} from './roles.ts';

/** What a face read from its call, before validation: the input's fields and, for a multipart form, the files' names. */
export interface Decoded {
  /** The fields (a rawJson operation: `{text}`, the JSON text as it came). */
  readonly fields: unknown;
  readonly filenames?: Readonly<Record<string, string>>;
}

/**
 * An input a face reads only once the caller's role allows the call (a REST body: a refused request's body is never
 * read). Its fields are still validated by {@link invoke}; the trail records the validated input. A face may subclass
 * it (one object per call, its `read` on the prototype) or make one from a function with {@link deferred}.
 */
export abstract class Deferred {
  /** `schema`: the input schema the pipeline validates with (the active limits'); undefined: no input, or raw JSON. */
  abstract read(schema: v.GenericSchema | undefined): Result<Decoded, ApiError> | Promise<Result<Decoded, ApiError>>;
}

class DeferredFunction extends Deferred {
  readonly #read: () => Result<Decoded, ApiError> | Promise<Result<Decoded, ApiError>>;
  constructor(read: () => Result<Decoded, ApiError> | Promise<Result<Decoded, ApiError>>) {
    super();
    this.#read = read;
  }
  read() {
    return this.#read();
  }
}

/** An input read by `read` once the caller's role allows the call (see {@link Deferred}). */
export function deferred(read: () => Result<Decoded, ApiError> | Promise<Result<Decoded, ApiError>>): Deferred {
  return new DeferredFunction(read);
}

/**
 * What a face knows of one call besides its input. Only `caller`, `face`, `calledAs` and the app state are required;
 * everything else has the default of a call that cannot be cancelled, reports no progress and needs no confirmation.
 */
export interface CallFacts extends AppState {
  /** The principal authentication found; undefined: refused (401), never run. */
  readonly caller: Principal | undefined;
  /** Which face carries the call: texts name other operations as it does, the trail says it. */
  readonly face: Face;
  /** How the face names this call, in refusals and logs: `POST /trajectory/send`, `the send_trajectory tool`. */
  readonly calledAs: string;
  /** The arbiter's stop count when the call arrived (a stop since then refuses its motion). */
  readonly arrivedAtStop: number | undefined;
  /** The call's cancellation, or how to make it when the operation first looks (a REST client gone). */
  readonly signal?: AbortSignal | (() => AbortSignal);
  /** Progress reports, when the caller asked for them. */
  readonly progress?: OpContext['progress'];
  /** The names other operations are said by in texts (the served MCP tool names). */
  readonly toolNames?: ToolNames;
  /**
   * Where a field of the input was, for a 422 (REST: 'query', 'path' or 'body'; MCP: 'arguments'); the root of the
   * whole input when `field` is undefined. Default: 'arguments'.
   */
  readonly locate?: (field: string | undefined) => string;
  /**
   * Asked before a motion that would move runs (not a dry run): resolves with undefined when it may, otherwise with
   * why not (a 403). `given` is the input as the face received it.
   */
  readonly confirm?: (op: AnyOperation, given: unknown) => Promise<string | undefined>;
  /** The connection the call came over, when it carries many (a WebSocket): see OpContext's `channel`. */
  readonly channel?: Channel;
  /**
   * False: the call is not put on the audit trail (each command of a jog WebSocket, up to 100 a second: the jog's
   * start and end are). Default: the trail's own rule (state-changing calls, reads with `audit.reads`).
   */
  readonly audit?: boolean;
}

/**
 * What the pipeline works out once per operation and app rather than at every call, since it is fixed for them: the
 * roles the operation admits, the services its run may reach (those it declared in `needs`, or all of them), and its
 * input schema under the active joint limits (a schema built from the limits is built once per limits).
 */
class Plan {
  readonly #op: AnyOperation;
  /** The roles allowed to call the operation (lib/core/roles.ts's rule, applied to each role once). */
  readonly admits: ReadonlySet<Role>;
  /** The services handed to its run: the app's whole bag, or a frozen bag of those it declared. */
  readonly services: Partial<Services>;
  /** The input schema under the limits it was last asked with. */
  #schema: { readonly limits: JointLimits; readonly schema: v.GenericSchema | undefined } | undefined;

  constructor(op: AnyOperation, services: Services) {
    this.#op = op;
    const needed = roleNeeded(op);
    this.admits = new Set(ROLES.filter((role) => roleAllows(role, needed)));
    const needs = op.needs;
    this.services = needs ? Object.freeze(Object.fromEntries(needs.map((name) => [name, services[name]]))) : services;
  }

  /** The input schema under `limits`; undefined: no input. */
  schema(limits: JointLimits): v.GenericSchema | undefined {
    let made = this.#schema;
    if (!made || made.limits !== limits) {
      made = { limits, schema: inputSchemaOf(this.#op, limits) };
      this.#schema = made;
    }
    return made.schema;
  }
}

/** The plans by app (its services bag) and operation. */
const plans = new WeakMap<Services, WeakMap<AnyOperation, Plan>>();

/** The plan of `op` in the app whose services are `services`, made at its first call. */
function planOf(op: AnyOperation, services: Services): Plan {
  let byOp = plans.get(services);
  if (!byOp) {
    byOp = new WeakMap();
    plans.set(services, byOp);
  }
  let plan = byOp.get(op);
  if (!plan) {
    plan = new Plan(op, services);
    byOp.set(op, plan);
  }
  return plan;
}

const NEVER_ABORTED = new AbortController().signal;
const NO_PROGRESS: OpContext['progress'] = () => {};
const ARGUMENTS = () => 'arguments';

/**
 * The operation's context for one call. A class with the signal a getter of its prototype: an object literal with a
 * getter was a slow object made anew at every call (docs/benchmarks.md), and the REST signal (a dead-man on the
 * client's connection) is made only when an operation looks.
 */
class CallContext implements OpContext {
  readonly progress: OpContext['progress'];
  readonly arrivedAtStop: number | undefined;
  readonly caller: Caller;
  readonly calledAs: string;
  readonly services: AppState['services'];
  readonly ros: AppState['ros'];
  readonly filenames?: Readonly<Record<string, string>>;
  readonly channel?: Channel;
  #signal: AbortSignal | (() => AbortSignal) | undefined;

  constructor(plan: Plan, facts: CallFacts, caller: Caller, filenames: Readonly<Record<string, string>> | undefined) {
    this.progress = facts.progress ?? NO_PROGRESS;
    this.arrivedAtStop = facts.arrivedAtStop;
    this.caller = caller;
    this.calledAs = facts.calledAs;
    // Only the services the operation declared (its run's ctx type has no others): what it did not declare is absent.
    this.services = plan.services as AppState['services'];
    this.ros = facts.ros;
    if (filenames) this.filenames = filenames;
    if (facts.channel) this.channel = facts.channel;
    this.#signal = facts.signal;
  }

  get signal(): AbortSignal {
    const signal = this.#signal;
    if (typeof signal === 'function') {
      const made = signal();
      this.#signal = made;
      return made;
    }
    return signal ?? NEVER_ABORTED;
  }
}

/** The callers of each principal and face, made once (principals are the tokens' own objects). */
const callers: Record<Face, WeakMap<Principal, Caller>> = {
  rest: new WeakMap(),
  mcp: new WeakMap(),
  foxglove: new WeakMap(),
};

/** The caller of `principal` through `face`: one object per principal and face (no copy per call). */
export function callerOf(principal: Principal, face: Face): Caller {
  const made = callers[face];
  let caller = made.get(principal);
  if (caller === undefined) {
    caller = { ...principal, face };
    made.set(principal, caller);
  }
  return caller;
}

/** The input as the operation takes it, validated; `filenames` of a multipart form. */
interface Validated {
  readonly value: unknown;
  readonly filenames?: Readonly<Record<string, string>> | undefined;
}

/** The validated input with the REST binding's defaults for the fields it leaves out (a REST call only). */
function withDefaults(op: AnyOperation, face: Face, input: unknown): unknown {
  const defaults = face === 'rest' ? op.rest?.defaults : undefined;
  if (!defaults || typeof input !== 'object' || input === null) return input;
  const filled: Record<string, unknown> = { ...(input as Record<string, unknown>) };
  for (const [name, value] of Object.entries(defaults)) if (filled[name] === undefined) filled[name] = value;
  return filled;
}

/** The fields a face read, validated with the operation's schema under the active limits (`schema`). */
function validate(
  op: AnyOperation,
  schema: v.GenericSchema | undefined,
  decoded: Decoded,
  facts: CallFacts,
  plain: boolean,
): Result<Validated, ApiError> {
  const locate = facts.locate ?? ARGUMENTS;
  const fields = decoded.fields ?? {};
  if (plain && (typeof fields !== 'object' || fields === null || Array.isArray(fields)))
    return err({
      kind: 'validation',
      issues: [{ loc: [locate(undefined)], msg: 'must be an object', type: 'object_type' }],
    });
  // A rawJson operation validates its text in run (off the event loop); an input in hand is serialized for it.
  if (op.rawJson) return ok({ value: plain ? { text: JSON.stringify(fields) } : fields });
  if (!schema) {
    // No input: a field is unknown (its schema says additionalProperties: false); a stop stops whatever it was sent with.
    const unknown = op.effect === 'stop' ? undefined : firstKey(fields as object);
    if (unknown !== undefined)
      return err({
        kind: 'validation',
        issues: [
          {
            loc: [locate(unknown), unknown.slice(0, 64)],
            msg: `unknown argument '${unknown.slice(0, 64)}'; ${facts.calledAs} takes none`,
            type: 'extra_forbidden',
          },
        ],
      });
    return NO_INPUT;
  }
  // Numbers and booleans sent as strings ("0.5", "true") are taken on every face, as FastAPI took them in a REST body;
  // anything else stays the schema's to judge (an unknown key is a 422: docs/api.md, numbers sent as strings).
  const parsed = v.safeParse(schema, coerceScalarStrings(schema, fields));
  if (!parsed.success) return err(locatedIssues(parsed.issues, locate, schema));
  const value = withDefaults(op, facts.face, parsed.output);
  return ok(
    decoded.filenames && Object.keys(decoded.filenames).length > 0
      ? { value, filenames: decoded.filenames }
      : { value },
  );
}

/** The validated input of an operation without input (frozen: shared by every call). */
const NO_INPUT: Result<Validated, ApiError> = ok({ value: Object.freeze({}) });

/** An object's first own key, without making the array of them (a read's input is checked at every call). */
function firstKey(value: object): string | undefined {
  for (const key in value) if (Object.hasOwn(value, key)) return key;
  return undefined;
}

/** True when a validated input asks for a dry run (plan and check; nothing moves). */
function isDryRun(input: unknown): boolean {
  return typeof input === 'object' && input !== null && (input as { dry_run?: unknown }).dry_run === true;
}

/** The output checked against the operation's output schema: an output that does not match is a bug (500). */
function checkOutput(op: AnyOperation, value: unknown): ApiError | undefined {
  const checked = v.safeParse(op.output, value);
  if (checked.success) return undefined;
  const issue = checked.issues[0];
  const where = (issue.path ?? []).map((item) => String(item.key)).join('.') || 'output';
  return { kind: 'internal', detail: `${op.name} answered an output its schema refuses (${where}: ${issue.message})` };
}

/** An output object's answer, once checked and said: by the operation that answered it. */
interface Answered {
  readonly op: AnyOperation;
  readonly result: Result<unknown, ApiError>;
}
type Answers = WeakMap<object, Answered>;

/**
 * The answers of output objects already checked and said, by face and tool naming: a state read many times between
 * updates is checked, said and wrapped once (the REST face then serializes it once too).
 */
const answers: Record<Face, { readonly own: Answers; readonly named: WeakMap<ToolNames, Answers> }> = {
  rest: { own: new WeakMap(), named: new WeakMap() },
  mcp: { own: new WeakMap(), named: new WeakMap() },
  foxglove: { own: new WeakMap(), named: new WeakMap() },
};

function answersFor(face: Face, toolNames: ToolNames | undefined): Answers {
  const byFace = answers[face];
  if (!toolNames) return byFace.own;
  let made = byFace.named.get(toolNames);
  if (!made) {
    made = new WeakMap();
    byFace.named.set(toolNames, made);
  }
  return made;
}

/** The JSON text of each output object answered (outputs are not changed once answered). */
const jsonTexts = new WeakMap<object, string>();

/**
 * The JSON text of an output object, what the faces send: made once per object, whatever face sends it and however
 * many times (a state read many times between updates costs one JSON.stringify).
 */
export function jsonOf(value: object): string {
  let text = jsonTexts.get(value);
  if (text === undefined) {
    text = JSON.stringify(value);
    jsonTexts.set(value, text);
  }
  return text;
}

/**
 * False when no text of the output can refer to an operation: its JSON (what the faces send) has no `{op:` in it, so
 * there is nothing to say and no need to walk it. An output JSON cannot say (a BigInt, a cycle) is walked as before.
 */
function mayReferToOperations(value: object): boolean {
  try {
    return jsonOf(value).includes('{op:');
  } catch {
    return true;
  }
}

/**
 * The answer of a run's output: checked against the schema, its texts said as the face says them. The run's own
 * Result when that changes nothing (most outputs name no operation), so a new output costs no new Result.
 */
function answerOf(
  op: AnyOperation,
  ran: { readonly ok: true; readonly value: unknown },
  facts: CallFacts,
): Result<unknown, ApiError> {
  const value = ran.value;
  if (typeof value !== 'object' || value === null) {
    const wrong = checkOutput(op, value);
    if (wrong) return err(wrong);
    const said = renderTexts(value, facts.face, facts.toolNames);
    return said === value ? ran : ok(said);
  }
  const known = answersFor(facts.face, facts.toolNames);
  const answered = known.get(value);
  if (answered?.op === op) return answered.result;
  const wrong = checkOutput(op, value);
  // A wrong output is not kept: it is answered as the bug it is each time.
  if (wrong) return err(wrong);
  const said = mayReferToOperations(value) ? renderTexts(value, facts.face, facts.toolNames) : value;
  const result = said === value ? ran : ok(said);
  known.set(value, { op, result });
  return result;
}

/** The end of a call that ran or was refused: the output checked and said, the trail written. */
function finish(
  op: AnyOperation,
  facts: CallFacts,
  caller: Caller,
  started: number,
  audited: unknown,
  result: Result<unknown, ApiError>,
): Result<unknown, ApiError> {
  const answer = result.ok ? answerOf(op, result, facts) : result;
  // The trail records the outcome the caller gets (an output its schema refuses: the 500); only a call it keeps (reads
  // only with audit.reads) has its outcome worked out.
  const trail = facts.services.audit;
  if (facts.audit !== false && trail?.wants(op))
    recordCall(trail, op, caller, started, audited, answer.ok ? result : answer);
  if (!answer.ok) return err(renderError(answer.error, facts.face, facts.toolNames));
  return answer;
}

/**
 * Calls `op` with `input` for the caller `facts` names, through the whole pipeline (see the module comment). `input`
 * is the input as the face received it (MCP: the tool's arguments; a WebSocket or Foxglove service: the request's
 * object), or a {@link Deferred} reader of it (REST: the body, read only once the role allows the call). The answer is
 * the output (texts said as the face says them) or the error (its status: `statusOf(error)`); it never throws for a
 * bad input or a refused call.
 */
export function invoke(op: AnyOperation, input: unknown, facts: CallFacts): Promise<Result<unknown, ApiError>> {
  const principal = facts.caller;
  // A call that did not pass authentication has no caller: refused, never run (and no one to put on the trail).
  if (!principal) return Promise.resolve(err(renderError(NO_CALLER, facts.face, facts.toolNames)));
  const started = performance.now();
  const caller = callerOf(principal, facts.face);
  const plain = !(input instanceof Deferred);
  // The trail shows what the face had in hand: an input given as is, or (deferred) the input once read and validated.
  const given = plain ? (input ?? {}) : undefined;
  const plan = planOf(op, facts.services);
  const refused = plan.admits.has(caller.role) ? undefined : refusal(op, caller, facts.calledAs);
  if (refused) return Promise.resolve(finish(op, facts, caller, started, given, err(refused)));
  // A rawJson operation validates its text in run: its schema is not the face's to read with.
  const schema = op.rawJson ? undefined : plan.schema(facts.ros.limits);
  const decoded = plain ? ok({ fields: given }) : input.read(schema);
  // A face whose input is at hand (every read) goes on without waiting: one promise less on the hot path.
  if (decoded instanceof Promise)
    return decoded.then((read) => validateAndRun(op, plan, schema, facts, caller, started, plain, given, read));
  return validateAndRun(op, plan, schema, facts, caller, started, plain, given, decoded);
}

function validateAndRun(
  op: AnyOperation,
  plan: Plan,
  schema: v.GenericSchema | undefined,
  facts: CallFacts,
  caller: Caller,
  started: number,
  plain: boolean,
  given: unknown,
  decoded: Result<Decoded, ApiError>,
): Promise<Result<unknown, ApiError>> {
  const input = decoded.ok ? validate(op, schema, decoded.value, facts, plain) : decoded;
  const audited = plain ? given : input.ok ? input.value.value : undefined;
  if (!input.ok) return Promise.resolve(finish(op, facts, caller, started, audited, input));
  const { value, filenames } = input.value;
  const trail = facts.audit === false ? undefined : facts.services.audit;
  const summary = trail ? auditedBeforeRun(trail, op, audited, value) : audited;
  const ctx = new CallContext(plan, facts, caller, filenames);
  const run = () => {
    // A stop since the call arrived refuses what its operation says it refuses then (a raise of the override).
    const stopped = op.refusedAfterStop && stoppedSinceArrival(op, value, ctx, facts.services);
    if (stopped) return Promise.resolve(finish(op, facts, caller, started, summary, err(stopped)));
    return op.run(value, ctx).then((result) => finish(op, facts, caller, started, summary, result));
  };
  // Dry-run routing: only a motion that would move (or what its operation says is one) is put to the confirmation.
  if (facts.confirm && (op.confirms ? op.confirms(value, ctx) : op.effect === 'motion' && !isDryRun(value)))
    return facts
      .confirm(op, given ?? value)
      .then((declined) =>
        declined === undefined
          ? run()
          : finish(op, facts, caller, started, summary, err({ kind: 'forbidden', detail: declined })),
      );
  return run();
}
