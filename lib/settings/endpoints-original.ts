import * as v from 'valibot';
import { describeIssue } from '../describe-issue.ts';
import { err, ok, type Result } from '../result.ts';

/**
 * The robot stack's own endpoints file (iiwa_config's api_endpoints.yaml): a list of HTTP routes, each naming the
 * ROS interface behind it. armgate reads from it the interface names and types, the pose's frames, the timeouts and
 * which routes are enabled; its request and response field lists describe the stack's own router and are accepted
 * without effect (armgate's schemas are the reference).
 */
const RequestField = v.looseObject({ name: v.string('expected a field name') });

const Entry = v.strictObject({
  path: v.pipe(
    v.string('expected an HTTP path'),
    v.regex(/^\/[\w/.-]*$/, "expected an HTTP path such as '/robot/pose'"),
  ),
  method: v.pipe(
    v.string('expected GET or POST'),
    v.transform((m) => m.toUpperCase()),
    v.picklist(['GET', 'POST'], 'expected GET or POST'),
  ),
  type: v.picklist(['topic', 'service', 'action', 'tf'], "expected 'topic', 'service', 'action' or 'tf'"),
  ros_name: v.optional(v.string('expected a ROS name')),
  msg_type: v.optional(v.string('expected pkg/msg|srv|action/Type')),
  summary: v.optional(v.string()),
  description: v.optional(v.string()),
  tags: v.optional(v.array(v.string())),
  fields: v.optional(v.array(v.string())),
  response_fields: v.optional(v.array(v.string())),
  request_fields: v.optional(v.array(RequestField)),
  timeout: v.optional(v.pipe(v.number('expected seconds'), v.finite(), v.gtValue(0, 'must be > 0'))),
  deprecated: v.optional(v.boolean('expected true or false')),
  enabled: v.optional(v.boolean('expected true or false'), true),
  parent_frame: v.optional(v.string('expected a frame name')),
  child_frame: v.optional(v.string('expected a frame name')),
});

const OriginalFile = v.strictObject({ endpoints: v.array(Entry, 'expected a list of endpoints') });

/** A route of the endpoints file with its `enabled` flag. */
export interface RouteSwitch {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly enabled: boolean;
}

/** The stack's routes armgate serves, with the interface of armgate's endpoints map each one names (if any). */
const SERVED: Readonly<Record<string, { method: 'GET' | 'POST'; iface?: string; type?: string }>> = {
  '/robot/joint_states': { method: 'GET', iface: 'joint_states', type: 'topic' },
  '/robot/pose': { method: 'GET', type: 'tf' },
  '/robot/positions': { method: 'GET' },
  '/robot/stop': { method: 'POST', iface: 'stop', type: 'service' },
  '/robot/move/named': { method: 'POST', iface: 'move_to_named', type: 'service' },
  '/robot/move/pose': { method: 'POST', iface: 'move_to_pose', type: 'action' },
  '/robot/move/joints': { method: 'POST', iface: 'move_to_joints', type: 'action' },
  '/trajectory/send': { method: 'POST' },
  '/trajectory/send_csv': { method: 'POST' },
  '/trajectory/logs': { method: 'GET' },
  '/sequences/start': { method: 'POST' },
  '/sequences/status': { method: 'GET' },
  '/sequences/logs': { method: 'GET' },
  '/stop': { method: 'POST' },
};

const MOVES = new Set(['/robot/move/named', '/robot/move/pose', '/robot/move/joints']);

/** True when a parsed endpoints document is the stack's list format (`endpoints: [...]`). */
export function isOriginalEndpoints(doc: object): boolean {
  return Array.isArray((doc as { endpoints?: unknown }).endpoints);
}

/** What the stack's endpoints file says, as armgate's endpoints map, plus the routes it switches and notices. */
export interface OriginalEndpoints {
  /** An armgate endpoints map (to validate with its schema) holding what the file says. */
  readonly map: Record<string, unknown>;
  readonly routes: readonly RouteSwitch[];
  /** Lines for the operator: routes armgate does not serve. */
  readonly notices: readonly string[];
}

/**
 * Reads the stack's endpoints file: interface names and types from ros_name and msg_type, the pose's frames
 * (parent_frame: the planning frame; child_frame: the TCP link) and timeout (one FK call), the moves' longest
 * timeout (a whole motion), and every route's `enabled`. Errors name the entry and key.
 */
export function readOriginalEndpoints(doc: unknown, key: string): Result<OriginalEndpoints, string> {
  const parsed = v.safeParse(OriginalFile, doc);
  if (!parsed.success) return err(describeIssue(key, parsed.issues));
  const interfaces: Record<string, { name: string; type?: string }> = {};
  const timeouts: Record<string, number> = {};
  const map: Record<string, unknown> = { interfaces, timeouts };
  const routes: RouteSwitch[] = [];
  const notices: string[] = [];
  const seen = new Set<string>();
  for (const [index, entry] of parsed.output.endpoints.entries()) {
    const at = `${key}.endpoints.${index}`;
    const served = SERVED[entry.path];
    if (seen.has(`${entry.method} ${entry.path}`)) return err(`${at}: ${entry.method} ${entry.path} is listed twice`);
    seen.add(`${entry.method} ${entry.path}`);
    if (!served) {
      notices.push(`${at}: ${entry.method} ${entry.path} is not a route armgate serves; the entry is ignored`);
      continue;
    }
    if (served.method !== entry.method)
      return err(`${at}.method: ${entry.path} is a ${served.method} route, not ${entry.method}`);
    if (served.type && entry.type !== served.type)
      return err(`${at}.type: ${entry.path} is served through a ROS ${served.type}, not a ${entry.type}`);
    routes.push({ method: entry.method, path: entry.path, enabled: entry.enabled });
    if (served.iface && entry.ros_name)
      interfaces[served.iface] = { name: entry.ros_name, ...(entry.msg_type ? { type: entry.msg_type } : {}) };
    if (entry.path === '/robot/pose') {
      if (entry.parent_frame) map.planning_frame = entry.parent_frame;
      if (entry.child_frame) map.tcp_link = entry.child_frame;
      if (entry.timeout !== undefined) timeouts.fk_s = entry.timeout;
    }
    if (MOVES.has(entry.path) && entry.timeout !== undefined)
      timeouts.motion_s = Math.max(timeouts.motion_s ?? 0, entry.timeout);
  }
  return ok({ map, routes, notices });
}
