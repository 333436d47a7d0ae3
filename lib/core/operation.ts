/**
 * The operation: one capability of the service as plain data (name, schemas, text, effect, errors, bindings) and its
 * `run(input, ctx)`. Start-up hands the list of operations to each face (lib/http, lib/mcp, lib/openapi), which derive
 * the REST route, the MCP tool and the OpenAPI entry from it and build each call's context.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type * as v from 'valibot';
import type { Services } from '../app/services.ts';
import type { Result } from '../result.ts';
import type { JointLimits } from '../robot/limits.ts';
import type { RobotContext } from '../ros/context.ts';
import type { ApiError, ValidationIssue } from './errors.ts';
import type { Caller, Face, Role } from './roles.ts';

export type { Face };

/** A schema, or a function that builds it from the active joint limits (bounds in the schema). */
export type SchemaSource<S extends v.GenericSchema = v.GenericSchema> = S | ((limits: JointLimits) => S);

/**
 * What start-up hands each face once, for every call: the app's services and the ROS context (the one shared
 * singleton of the design card, made at start-up).
 */
export interface AppState {
  /** The app's state besides the ROS context: arbiter, logs, sequences, events, safety, plans, audit. */
  readonly services: Services;
  /** The robot: the simulated arm or the rclnodejs context. */
  readonly ros: RobotContext;
}

/** A service of the app's bag (lib/app/services.ts) an operation may declare it needs. */
export type ServiceName = keyof Services;

/**
 * What an operation's run knows of the call besides its input; the face that calls it builds it. It does not say
 * which face: where the faces differ, the operation declares it in its data (its bindings) and the face applies it.
 * `N`: the services it may reach (its `needs`); all of them when it declares none.
 */
export interface OpContext<N extends ServiceName = ServiceName> extends Omit<AppState, 'services'> {
  /** The app's services the operation declared it needs (`needs`), or all of them when it declares none. */
  readonly services: Pick<Services, N>;
  /** Aborted when the caller gives up on the call: an MCP cancellation, or the caller gone (its connection closed: lib/control/dead-man.ts). */
  readonly signal: AbortSignal;
  /** Reports progress (e.g. seconds done of total); a no-op when the caller did not ask for progress. */
  readonly progress: (done: number, total?: number, message?: string) => void;
  /** The arbiter's stop count when the call arrived: a stop since then means it must not move the arm. */
  readonly arrivedAtStop: number | undefined;
  /** Who calls: the face, the token's name and its role (the faces checked the role before run; never absent). */
  readonly caller: Caller;
  /** How the face names this call, for logs: `POST /trajectory/send` over REST, `the send_trajectory tool` over MCP. */
  readonly calledAs: string;
  /** REST multipart: the uploaded files' names, by part (a `json` part reaches the input parsed, without its name). */
  readonly filenames?: Readonly<Record<string, string>>;
  /**
   * The connection that carries many calls of one client (a WebSocket), when the face has one: what an operation
   * holds for its client (a jog) it holds for this channel; absent, for the caller.
   */
  readonly channel?: Channel;
}

/** A connection carrying many calls of one client: a key equal for its calls only, and what it is. */
export interface Channel {
  readonly key: string;
  readonly via: 'websocket';
}

/**
 * What an operation does to the world, for the MCP annotations and the docs: `read` changes
 * nothing, `motion` moves the arm, `stop` stops it (changes state, idempotent, never harmful),
 * `write` changes what armgate keeps (the taught positions) and never moves the arm.
 */
export type Effect = 'read' | 'motion' | 'stop' | 'write';

/** A multipart file part of the REST face: `json` is parsed into the input; `upload` arrives as an {@link Upload}. */
export interface FilePart {
  readonly as: 'json' | 'upload';
  readonly description: string;
  readonly maxBytes?: number;
}

/** An uploaded file as an operation receives it. */
export interface Upload {
  readonly filename: string;
  readonly bytes: Uint8Array;
}

/** How the REST face reaches an operation. */
export interface RestBinding {
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  readonly path: string;
  readonly operationId: string;
  readonly tags: readonly string[];
  /** Where the input comes from: a JSON body, a multipart form, or only the query (`none`: no input). */
  readonly body?: 'json' | 'multipart';
  /** Input fields read from the query string (a GET's whole input). */
  readonly query?: readonly string[];
  /** Input fields read from the path: `path` names them as `{name}` (e.g. `/robot/plans/{id}/execute`). */
  readonly params?: readonly string[];
  /** Multipart file parts, by field name. */
  readonly files?: Readonly<Record<string, FilePart>>;
  /** A documented description of the 200 response. */
  readonly ok: string;
  /**
   * Input fields the REST face fills in when the request leaves them out (after validation, before run): where the
   * REST contract defaults a field that the operation otherwise treats as absent (move_to_pose: an omitted ABC angle
   * is 0 over REST, the current one over MCP).
   */
  readonly defaults?: Readonly<Record<string, unknown>>;
  /**
   * A request that works as sent on the simulator (from the work position): the JSON body, or a multipart form's
   * fields (a file part as its text). The docs page's Try-it-out starts from it.
   */
  readonly example?: Readonly<Record<string, unknown>>;
}

/** How the MCP face shows an operation as a tool; absent: REST only. */
export interface McpBinding {
  /** Tool title. */
  readonly title: string;
  /** The output is an array: the structured result wraps it in an object under this key. */
  readonly wrapAs?: string;
}

/** One capability of the service, defined once; the REST and MCP faces are made from it. */
export interface Operation<I = unknown, O = unknown, N extends ServiceName = ServiceName> {
  /** The tool name, and how texts refer to the operation: `{op:name}`. */
  readonly name: string;
  readonly summary: string;
  /** What it does, for people and agents; may refer to other operations as `{op:name}`. */
  readonly description: string;
  readonly effect: Effect;
  /**
   * The role it needs when it is stricter than its effect's (`admin` for admin-only operations);
   * absent: reads and stop need `read`, motions `operate` (lib/core/roles.ts).
   */
  readonly role?: Role;
  /** Calling it twice with the same input has the effect of calling it once. */
  readonly idempotent: boolean;
  /** The input schema; absent: no input. */
  readonly input?: SchemaSource;
  /**
   * The body is handed to run as `{text}` and validated there with `input` (off the event loop):
   * the REST face does not parse it, the MCP face serializes the arguments.
   */
  readonly rawJson?: boolean;
  readonly output: v.GenericSchema;
  /** The errors it may answer besides validation, with what they mean here. */
  readonly errors: Partial<Record<ApiError['kind'], string>>;
  /** How the REST face serves it; absent: no route. */
  readonly rest?: RestBinding;
  /** How the MCP face shows it as a tool; absent: no tool. */
  readonly mcp?: McpBinding;
  /**
   * The app's services its run reaches (`ctx.services` holds these only: lib/core/invoke.ts hands it no other, and
   * the type of `ctx` has no other); absent: all of them.
   */
  readonly needs?: readonly N[];
  /**
   * Whether a call with this (validated) input is put to the face's confirmation before it runs (MCP's
   * mcp.confirm_motion); absent: a motion that would move (not `dry_run: true`) is, nothing else is.
   */
  readonly confirms?: (input: I, ctx: OpContext<N>) => boolean;
  /**
   * Its calls are adjustments that may come as a stream (a jog command, the speed override, a taught position): past
   * lib/audit/quiet.ts's EFFECT_LINES_MAX lines a window from one caller, the audit trail counts them instead of
   * writing each. Absent: every effect line of it is written, as for anything that starts, ends or stops a motion.
   */
  readonly countedInBursts?: boolean;
  /**
   * Why a call with this (validated) input may not run once a stop came after its arrival (`arrivedAtStop`): a 409,
   * as the arbiter refuses a motion then (the person who stopped the arm did not see this call); undefined when it
   * may run. The pipeline asks just before the run, after any confirmation (lib/core/stop-stamp.ts). Absent: no call
   * is refused so by the pipeline (a motion is, by the arbiter, when it takes the arm).
   */
  readonly refusedAfterStop?: (input: I, ctx: OpContext<N>) => string | undefined;
  readonly run: (input: I, ctx: OpContext<N>) => Promise<Result<O, ApiError>>;
}

/** An operation of any input and output, as the faces hold them. */
// biome-ignore lint/suspicious/noExplicitAny: the faces validate the input with the operation's own schema.
export type AnyOperation = Operation<any, any>;

/** An operation the REST face serves (it has a route). */
export type RestOperation = AnyOperation & { readonly rest: RestBinding };

/** True when the REST face serves `op`. */
export function hasRest(op: AnyOperation): op is RestOperation {
  return op.rest !== undefined;
}

const registry = new Map<string, AnyOperation>();

/** The input of a `rawJson` operation: the JSON text, validated by run with the operation's schema. */
export interface RawJsonInput {
  readonly text: string;
}

/** Defines an operation and registers its name, so texts can refer to it. */
export function defineOperation<S extends v.GenericSchema, O, N extends ServiceName = ServiceName>(
  op: Omit<Operation<RawJsonInput, O, N>, 'input' | 'rawJson'> & {
    readonly input: SchemaSource<S>;
    readonly rawJson: true;
  },
): Operation<RawJsonInput, O, N>;
export function defineOperation<S extends v.GenericSchema, O, N extends ServiceName = ServiceName>(
  op: Omit<Operation<v.InferOutput<S>, O, N>, 'input'> & { readonly input: SchemaSource<S> },
): Operation<v.InferOutput<S>, O, N>;
export function defineOperation<O, N extends ServiceName = ServiceName>(
  op: Omit<Operation<Record<string, never>, O, N>, 'input'>,
): Operation<Record<string, never>, O, N>;
export function defineOperation(op: AnyOperation): AnyOperation {
  if (registry.has(op.name)) throw new Error(`operation ${op.name} is defined twice`);
  registry.set(op.name, op);
  return op;
}

/** The operation's input schema with the given joint limits (when it depends on them); undefined: no input. */
export function inputSchemaOf(op: Pick<AnyOperation, 'input'>, limits: JointLimits): v.GenericSchema | undefined {
  const source = op.input;
  if (!source) return undefined;
  return typeof source === 'function' ? source(limits) : source;
}

const REFERENCE = /\{op:([a-z_]+)\}/g;

/** Operation name -> the name its tool is served under (armgate.mcp.tool_names); a missing one: its own name. */
export type ToolNames = ReadonlyMap<string, string>;

const OWN_NAMES: ToolNames = new Map();

/**
 * A text with its `{op:name}` references as the face says them: `POST /stop` over REST, `stop`
 * (the tool, under the name it is served by: `toolNames`) over MCP; an operation without a tool is
 * named by its route on both faces.
 */
export function renderText(text: string, face: Face, toolNames: ToolNames = OWN_NAMES): string {
  if (!text.includes('{op:')) return text;
  return text.replace(REFERENCE, (whole, name: string) => {
    const op = registry.get(name);
    if (!op) return whole;
    if ((face === 'mcp' && op.mcp) || !op.rest) return toolNames.get(name) ?? op.name;
    return `${op.rest.method} ${op.rest.path}`;
  });
}

/**
 * `value` with the `{op:name}` references of every string in it (at any depth) said as the face says them: a schema's
 * descriptions, a document, an operation's output. The same value when no string has one; otherwise a copy of the
 * parts that changed.
 */
export function renderTexts<T>(value: T, face: Face, toolNames?: ToolNames): T {
  if (typeof value === 'string') return (value.includes('{op:') ? renderText(value, face, toolNames) : value) as T;
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      const said = renderTexts(item, face, toolNames);
      if (said !== item) {
        copy ??= [...value];
        copy[i] = said;
      }
    }
    return (copy ?? value) as T;
  }
  // Typed arrays and other non-plain objects hold no text.
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value;
  let copy: Record<string, unknown> | undefined;
  for (const [key, item] of Object.entries(value)) {
    const said = renderTexts(item, face, toolNames);
    if (said !== item) {
      copy ??= { ...(value as Record<string, unknown>) };
      copy[key] = said;
    }
  }
  return (copy ?? value) as T;
}

/** An error with its texts' `{op:...}` references said as the given face says them. */
export function renderError(error: ApiError, face: Face, toolNames?: ToolNames): ApiError {
  if (error.kind === 'validation') {
    const [first, ...rest] = error.issues.map((issue) => ({ ...issue, msg: renderText(issue.msg, face, toolNames) }));
    return { kind: 'validation', issues: [first as ValidationIssue, ...rest] };
  }
  return { ...error, detail: renderText(error.detail, face, toolNames) };
}

/**
 * What armgate serves, as the entry point builds it from handlers/ and hands it to start-up (lib/server), which hands
 * it to the faces: no file under lib/ imports a handler.
 */
export interface Catalog {
  /** Every operation, in the order of the spec's overview of its REST endpoints. */
  readonly operations: readonly RestOperation[];
  /**
   * The handler files of those operations, in the same order: each file's operation and its own exported `handler`
   * (the REST face's fetch-API handler, lib/http/rest.ts's RestHandler), which the route table serves.
   */
  readonly files: readonly HandlerFile[];
  /** The MCP resources. */
  readonly resources: readonly Resource[];
  /** The stop operation (POST /stop): with the stack's tool names, also the tool of POST /robot/stop. */
  readonly stop: AnyOperation;
  /** The WebSocket routes' files (GET /robot/jog): each served while its operation's route is. */
  readonly websockets?: readonly WebSocketFile[];
}

/**
 * A WebSocket route's file as the catalog lists it (lib/http/websocket.ts makes one): its path, the operation each of
 * its messages calls, and how its upgrade handler is made for an app (`open`'s argument is the HTTP face's: the app's
 * state, admission and tokens; the route table hands `upgrade` the upgrades of its path).
 */
export interface WebSocketFile {
  readonly path: string;
  readonly operation: RestOperation;
  readonly open: (app: never) => {
    upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void;
    /** Closes its connections (the server is shutting down). */
    close(): void;
  };
}

/** A handler file as the catalog lists it: its operation and the fetch-API handler it exports for it. */
export interface HandlerFile {
  readonly operation: RestOperation;
  /** The REST face's handler (lib/http/rest.ts's RestHandler: a request and its call facts in, a Response out). */
  readonly handler: (request: Request, call: never) => Promise<Response>;
}

/**
 * A resource the MCP face lists and reads: what it is, and how it is read with the call's context (by running read
 * operations, or from the context). Start-up hands the table to the MCP face with the operations.
 */
export interface Resource {
  readonly uri: string;
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly mimeType: 'application/json';
  /** Its contents now (an operation's error under `error`); reads only, never moves anything. */
  readonly read: (ctx: OpContext) => Promise<unknown>;
}
