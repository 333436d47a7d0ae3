import type * as v from 'valibot';
import type { ApiError } from '../http/errors.ts';
import type { Result } from '../result.ts';
import type { Caller, Role } from './access.ts';
import type { JointLimits } from '../robot/limits.ts';
import type { Services } from '../app/services.ts';

/** The two faces an operation is reached through. */
export type Face = 'rest' | 'mcp';

/** A schema, or a function that builds it from the active joint limits (bounds in the schema). */
export type SchemaSource<S extends v.GenericSchema = v.GenericSchema> = S | ((limits: JointLimits) => S);

/** What an operation's run knows of the call besides its input. */
export interface OpContext {
  readonly face: Face;
  /** Aborted when the caller gives up on the call (MCP cancellation); never for a REST request. */
  readonly signal: AbortSignal;
  /** Reports progress (e.g. seconds done of total); a no-op when the caller did not ask for progress. */
  readonly progress: (done: number, total?: number, message?: string) => void;
  /** The arbiter's stop count when the call arrived: a stop since then means it must not move the arm. */
  readonly arrivedAtStop: number | undefined;
  /** Who calls: the face, the token's name and its role (the faces checked the role before run). */
  readonly caller: Caller;
  /** REST multipart: the uploaded files' names, by part (a `json` part reaches the input parsed, without its name). */
  readonly filenames?: Readonly<Record<string, string>>;
  /** The app's state besides the ROS context: arbiter, logs, sequences, events, safety, plans, audit. */
  readonly services: Services;
}

/**
 * What an operation does to the world, for the MCP annotations and the docs: `read` changes
 * nothing, `motion` moves the arm, `stop` stops it (changes state, idempotent, never harmful).
 */
export type Effect = 'read' | 'motion' | 'stop';

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
  readonly method: 'GET' | 'POST';
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
}

/** How the MCP face shows an operation as a tool; absent: REST only. */
export interface McpBinding {
  /** Tool title. */
  readonly title: string;
  /** The output is an array: the structured result wraps it in an object under this key. */
  readonly wrapAs?: string;
}

/** One capability of the service, defined once; the REST and MCP faces are made from it. */
export interface Operation<I = unknown, O = unknown> {
  /** The tool name, and how texts refer to the operation: `{op:name}`. */
  readonly name: string;
  readonly summary: string;
  /** What it does, for people and agents; may refer to other operations as `{op:name}`. */
  readonly description: string;
  readonly effect: Effect;
  /**
   * The role it needs when it is stricter than its effect's (`admin` for admin-only operations);
   * absent: reads and stop need `read`, motions `operate` (lib/ops/access.ts).
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
  readonly rest: RestBinding;
  readonly mcp?: McpBinding;
  readonly run: (input: I, ctx: OpContext) => Promise<Result<O, ApiError>>;
}

/** An operation of any input and output, as the faces hold them. */
// biome-ignore lint/suspicious/noExplicitAny: the faces validate the input with the operation's own schema.
export type AnyOperation = Operation<any, any>;

const registry = new Map<string, AnyOperation>();

/** Defines an operation and registers its name, so texts can refer to it. */
export function defineOperation<S extends v.GenericSchema, O>(
  op: Omit<Operation<v.InferOutput<S>, O>, 'input'> & { readonly input: SchemaSource<S> },
): Operation<v.InferOutput<S>, O>;
export function defineOperation<O>(
  op: Omit<Operation<Record<string, never>, O>, 'input'>,
): Operation<Record<string, never>, O>;
export function defineOperation(op: AnyOperation): AnyOperation {
  if (registry.has(op.name)) throw new Error(`operation ${op.name} is defined twice`);
  registry.set(op.name, op);
  return op;
}

/** The schema of a source for the given limits. */
export function schemaFor(source: SchemaSource, limits: JointLimits): v.GenericSchema {
  return typeof source === 'function' ? source(limits) : source;
}

/** Caches a limits-dependent schema per limits object, so it is built once. */
export function perLimits<S extends v.GenericSchema>(factory: (limits: JointLimits) => S): (limits: JointLimits) => S {
  const cache = new WeakMap<JointLimits, S>();
  return (limits) => {
    let schema = cache.get(limits);
    if (!schema) {
      schema = factory(limits);
      cache.set(limits, schema);
    }
    return schema;
  };
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
    return face === 'mcp' && op.mcp ? (toolNames.get(name) ?? op.name) : `${op.rest.method} ${op.rest.path}`;
  });
}
