/**
 * armgate's operations as Foxglove services: a name, a request message (ros2msg, CDR) and how a request message
 * becomes the operation's input (a CDR message has no absent fields: 0, '' and false stand for "not given" where
 * the operation has a default). Every response is armgate_msgs/msg/Outcome: success, message and the operation's
 * whole answer as JSON. A service is offered when its operation is served (the endpoints file's routes), the
 * service_whitelist allows its name and the caller's role may call it.
 */
import type { AnyOperation } from '../core/operation.ts';
import { type Role, roleAllows, roleNeeded } from '../core/roles.ts';
import { err, ok, type Result } from '../result.ts';
import { parseJson } from '../body/parse-json.ts';
import { allowedBy } from '../settings/foxglove.ts';
import { codecOf, type MessageCodec } from './definitions.ts';

/** One service: its Foxglove name and type, the operation it calls and its request. */
export interface ServiceSpec {
  readonly name: string;
  /** The operation's name (lib/core/operation.ts). */
  readonly op: string;
  readonly request: string;
  /** The operation's input from a decoded request message (`jointNames`: J1..J7's names, for inputs by joint name). */
  readonly toInput: (msg: Record<string, unknown>, jointNames: readonly string[]) => Record<string, unknown>;
}

const given = (value: unknown) => (value === 0 || value === '' || value === false ? undefined : value);

/** Only the given fields (a field set to undefined is left out, as the operation's schemas expect). */
function fields(entries: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(entries).filter(([, value]) => value !== undefined));
}

const list = (value: unknown): unknown => (ArrayBuffer.isView(value) ? Array.from(value as Float64Array) : value);

/**
 * The services, by operation. A row whose operation is not served (not in the catalog, or its route switched off by
 * the endpoints file) is left out.
 */
export const SERVICE_SPECS: readonly ServiceSpec[] = [
  { name: '/armgate/stop', op: 'stop', request: 'armgate_msgs/msg/Empty', toInput: () => ({}) },
  { name: '/armgate/pause', op: 'pause', request: 'armgate_msgs/msg/Empty', toInput: () => ({}) },
  { name: '/armgate/resume', op: 'resume', request: 'armgate_msgs/msg/Empty', toInput: () => ({}) },
  {
    name: '/armgate/set_override',
    op: 'set_override',
    request: 'armgate_msgs/msg/SetOverrideRequest',
    toInput: (m) => ({ percent: m.percent }),
  },
  {
    name: '/armgate/move_to_named_position',
    op: 'move_to_named_position',
    request: 'armgate_msgs/msg/MoveNamedRequest',
    toInput: (m) =>
      fields({ name: m.name, speed: given(m.speed), accel_scale: given(m.accel_scale), dry_run: given(m.dry_run) }),
  },
  {
    name: '/armgate/move_to_joints',
    op: 'move_to_joints',
    request: 'armgate_msgs/msg/MoveJointsRequest',
    toInput: (m) => fields({ joints: list(m.joints), speed: given(m.speed), dry_run: given(m.dry_run) }),
  },
  {
    name: '/armgate/move_to_pose',
    op: 'move_to_pose',
    request: 'armgate_msgs/msg/MovePoseRequest',
    toInput: (m) =>
      fields({
        x: m.x,
        y: m.y,
        z: m.z,
        a: m.a,
        b: m.b,
        c: m.c,
        speed: given(m.speed),
        planner: given(m.planner),
        frame_id: given(m.frame_id),
        dry_run: given(m.dry_run),
      }),
  },
  {
    // The teach work's operation (served once it is in the catalog): joints empty = where the arm stands.
    name: '/armgate/save_position',
    op: 'save_position',
    request: 'armgate_msgs/msg/SavePositionRequest',
    toInput: (m, jointNames) => {
      const joints = (list(m.joints) as number[] | undefined) ?? [];
      return fields({
        name: m.name,
        joints:
          joints.length === 0
            ? undefined
            : Object.fromEntries(joints.slice(0, 64).map((q, i) => [jointNames[i] ?? `joint${i + 1}`, q])),
      });
    },
  },
  {
    // One bounded jog step (the MCP tool jog): joint 1..7 by delta rad, or (joint 0) the TCP along or about axis.
    name: '/armgate/jog',
    op: 'jog',
    request: 'armgate_msgs/msg/JogStepRequest',
    toInput: (m) =>
      typeof m.joint === 'number' && m.joint !== 0
        ? { joint: m.joint, delta: m.delta }
        : fields({ axis: m.axis, delta: m.delta, frame: given(m.frame) }),
  },
];

/** The response type of every service. */
export const OUTCOME_TYPE = 'armgate_msgs/msg/Outcome';

/** A service as served: its id, spec, operation and codecs. */
export interface ServedService {
  readonly id: number;
  readonly spec: ServiceSpec;
  readonly op: AnyOperation;
  readonly request: MessageCodec;
  readonly response: MessageCodec;
}

/** The services of the served operations that the whitelist allows, numbered from 1. */
export function servedServices(operations: readonly AnyOperation[], whitelist: readonly RegExp[]): ServedService[] {
  const byName = new Map(operations.map((op) => [op.name, op]));
  const out: ServedService[] = [];
  for (const spec of SERVICE_SPECS) {
    const op = byName.get(spec.op);
    if (!op || !allowedBy(whitelist, spec.name)) continue;
    out.push({ id: out.length + 1, spec, op, request: codecOf(spec.request), response: codecOf(OUTCOME_TYPE) });
  }
  return out;
}

/** The services a role may call (a read token gets none that moves the arm). */
export function servicesFor(services: readonly ServedService[], role: Role): ServedService[] {
  return services.filter((s) => roleAllows(role, roleNeeded(s.op)));
}

/** A service that brings the arm to rest and takes no input (stop, pause): its request is never read (stop wins). */
export const takesNoInput = (s: ServedService): boolean => s.op.effect === 'stop' && s.op.input === undefined;

/**
 * A call's request message decoded (`cdr` or `json`), or why it is not one of the service's. A JSON request of 16 KiB
 * or more (a frame may hold 1 MiB) is parsed a slice per turn of the event loop (lib/body/parse-json.ts), refused with
 * JSON.parse's own message.
 */
export async function readRequest(
  s: ServedService,
  encoding: string,
  payload: Uint8Array,
): Promise<Result<Record<string, unknown>, string>> {
  try {
    const request: unknown =
      encoding === 'cdr' ? s.request.read(payload) : await parseJson(Buffer.from(payload).toString('utf8'));
    if (typeof request !== 'object' || request === null || Array.isArray(request)) throw new Error('not an object');
    return ok(request as Record<string, unknown>);
  } catch (e) {
    return err(`the request is not a ${s.request.type} in ${encoding}: ${(e as Error).message}`);
  }
}

/** The advertiseServices entry of a service (request and response as ros2msg schemas, CDR). */
export function advertisedService(s: ServedService) {
  const def = (codec: MessageCodec) => ({
    encoding: 'cdr',
    schemaName: codec.type,
    schemaEncoding: 'ros2msg',
    schema: codec.schema,
  });
  return {
    id: s.id,
    name: s.spec.name,
    type: `armgate_msgs/srv/${s.spec.op}`,
    request: def(s.request),
    response: def(s.response),
  };
}
