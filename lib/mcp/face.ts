import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  ElicitResultSchema,
  McpError,
  ReadResourceRequestSchema,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { operation as jointStates } from '../../handlers/robot/joint-states.ts';
import { operation as pose } from '../../handlers/robot/pose.ts';
import { operation as positions } from '../../handlers/robot/positions.ts';
import { safetyView } from '../../handlers/robot/safety.ts';
import { API_INFO } from '../openapi/document.ts';
import type { Services } from '../app/services.ts';
import type { AnyOperation, OpContext } from '../ops/operation.ts';
import { ros } from '../ros/context.ts';
import { type Role, roleAllows, roleNeeded } from '../ops/access.ts';
import { type NamedTool, namedTools, servedNames } from './names.ts';
import {
  type CallExtra,
  type ConfirmMotion,
  callTool,
  confirmationText,
  principalOf,
  TOOL_OPERATIONS,
  toolOf,
} from './tools.ts';

/** The JSON-RPC error code of an unknown resource (MCP specification, resources). */
export const RESOURCE_NOT_FOUND = -32002;

const RESOURCES = [
  {
    uri: 'armgate://robot/state',
    name: 'robot_state',
    title: 'Robot state',
    description: 'Joint states and TCP pose right now.',
    mimeType: 'application/json',
  },
  {
    uri: 'armgate://robot/positions',
    name: 'named_positions',
    title: 'Named positions',
    description: 'The named positions with their joint angles (rad).',
    mimeType: 'application/json',
  },
  {
    uri: 'armgate://robot/joint_limits',
    name: 'joint_limits',
    title: 'Joint limits',
    description:
      'Active joint limits: position (rad), velocity (rad/s), acceleration (rad/s^2) per joint, and the Cartesian limits.',
    mimeType: 'application/json',
  },
  {
    uri: 'armgate://robot/safety',
    name: 'safety_envelope',
    title: 'Safety envelope',
    description:
      'The workspace box the TCP never leaves and the keep-out boxes no link enters (m, planning frame), and how long a plan stays executable.',
    mimeType: 'application/json',
  },
] as const;

const NEVER_ABORTED = new AbortController().signal;

/** A read operation's output, or its error under `error`. */
async function read(op: AnyOperation, services: Services): Promise<unknown> {
  const ctx: OpContext = {
    face: 'mcp',
    signal: NEVER_ABORTED,
    progress: () => {},
    arrivedAtStop: undefined,
    caller: { name: 'resource read', role: 'read', face: 'mcp' },
    services,
  };
  const result = await op.run({}, ctx);
  return result.ok ? result.value : { error: 'detail' in result.error ? result.error.detail : result.error.kind };
}

async function readResource(uri: string, services: Services): Promise<unknown> {
  if (uri === 'armgate://robot/state')
    return { joint_states: await read(jointStates, services), tcp_pose: await read(pose, services) };
  if (uri === 'armgate://robot/positions') return read(positions, services);
  if (uri === 'armgate://robot/safety') return safetyView(services.safety);
  if (uri === 'armgate://robot/joint_limits') {
    const l = ros().limits;
    return {
      joints: l.jointNames.map((name, i) => ({
        name,
        min_rad: l.minRad[i],
        max_rad: l.maxRad[i],
        max_velocity_rad_s: l.maxVelRadS[i],
        max_acceleration_rad_s2: l.maxAccRadS2[i],
      })),
      cartesian: {
        max_trans_vel_m_s: l.cartesian.maxTransVelMS,
        max_trans_acc_m_s2: l.cartesian.maxTransAccMS2,
        max_rot_vel_rad_s: l.cartesian.maxRotVelRadS,
      },
    };
  }
  throw new McpError(RESOURCE_NOT_FOUND, `Resource not found: ${uri.slice(0, 200)}`, { uri: uri.slice(0, 200) });
}

const DEFAULT_TOOLS = namedTools(TOOL_OPERATIONS, 'armgate');
const toolLists = new WeakMap<
  readonly NamedTool[],
  { limits: unknown; tools: Tool[]; ops: AnyOperation[]; byRole: Map<Role, Tool[]> }
>();

/** The tools a role may call (all of them by default) of a set of named tools, built once per set of joint limits. */
export function listTools(named: readonly NamedTool[] = DEFAULT_TOOLS, role: Role = 'admin'): Tool[] {
  const limits = ros().limits;
  let list = toolLists.get(named);
  if (list?.limits !== limits) {
    const toolNames = servedNames(named);
    list = {
      limits,
      tools: named.map(({ name, op }) => ({ ...toolOf(op, limits, toolNames), name })),
      ops: named.map(({ op }) => op),
      byRole: new Map(),
    };
    toolLists.set(named, list);
  }
  let tools = list.byRole.get(role);
  if (!tools) {
    const ops = list.ops;
    tools = list.tools.filter((_, i) => roleAllows(role, roleNeeded(ops[i] as AnyOperation)));
    list.byRole.set(role, tools);
  }
  return tools;
}

/** Options of the MCP face (from the settings' armgate.mcp block). */
export interface McpFaceOptions {
  /** The app's state every call's context carries. */
  readonly services: Services;
  /**
   * The tools served: start-up passes those of the enabled routes, under the naming of armgate.mcp.tool_names;
   * default every tool operation under armgate's names.
   */
  readonly tools?: readonly NamedTool[];
  /** armgate.mcp.confirm_motion: ask the person (MCP elicitation) before a motion tool moves the arm. */
  readonly confirmMotion?: boolean;
}

/**
 * The confirmation of mcp.confirm_motion: when the client declared elicitation, the person is asked
 * (a yes/no form) and anything but an explicit yes refuses the call; a client without elicitation
 * cannot ask anyone, and the call runs as without the setting.
 */
function elicitConfirmation(server: Server): ConfirmMotion {
  return async (op, input, extra: CallExtra) => {
    if (!server.getClientCapabilities()?.elicitation) return undefined;
    let answer: { action: string; content?: Record<string, unknown> | undefined };
    try {
      answer = await extra.sendRequest(
        {
          method: 'elicitation/create',
          params: {
            message: confirmationText(op, input),
            requestedSchema: {
              type: 'object',
              properties: {
                confirm: { type: 'boolean', title: 'Move the arm', description: 'Yes: the motion runs now.' },
              },
              required: ['confirm'],
            },
          },
        },
        ElicitResultSchema,
      );
    } catch (e) {
      return `the person could not be asked to confirm the motion (${e instanceof Error ? e.message : String(e)}); nothing moved`;
    }
    if (answer.action === 'accept' && answer.content?.confirm === true) return undefined;
    return `the person did not confirm the motion (${answer.action === 'accept' ? 'answered no' : answer.action}); nothing moved (mcp.confirm_motion)`;
  };
}

/**
 * Answers a tools/call from its params, as the session's Server does (an unknown tool or a bad name is an McpError
 * of code -32602): the direct path of lib/mcp/server.ts calls it without the SDK's Protocol.
 */
export type ToolCaller = (params: Record<string, unknown>, extra: CallExtra) => Promise<CallToolResult>;

/** A session's MCP face: the SDK Server (initialize, lists, resources, streams) and its tools/call as a function. */
export interface McpFace {
  readonly server: Server;
  readonly callTool: ToolCaller;
}

/** A new MCP face with the tools and resources (one per session). */
export function createMcpFace(options: McpFaceOptions): McpFace {
  const tools = options.tools ?? DEFAULT_TOOLS;
  const byName = new Map(tools.map((tool) => [tool.name, tool.op]));
  const toolNames = servedNames(tools);
  /** The name a tool of an operation is served under (the first, when it has several). */
  const said = (op: string) => toolNames.get(op) ?? op;
  const server = new Server(
    { name: 'armgate', version: API_INFO.version },
    {
      capabilities: { tools: {}, resources: {} },
      instructions: `armgate drives a KUKA LBR iiwa 7 R800 arm (real or simulated). Read state with ${said('get_joint_states')} / ${said('get_tcp_pose')}; move with ${said('move_to_named_position')}, ${said('move_to_pose')}, ${said('move_to_joints')}; call ${said('stop')} to halt everything.`,
    },
  );
  const confirm = options.confirmMotion ? elicitConfirmation(server) : undefined;
  const callByName: ToolCaller = async (params, extra) => {
    const name = params.name;
    if (typeof name !== 'string') throw new McpError(ErrorCode.InvalidParams, 'Invalid params: name must be a string');
    const op = byName.get(name);
    if (!op)
      throw new McpError(
        ErrorCode.InvalidParams,
        `unknown tool '${name.slice(0, 100)}'; tools: ${tools.map((t) => t.name).join(', ')}`,
      );
    return callTool(op, params.arguments, extra, { services: options.services, confirm, toolNames });
  };
  // A token sees only the tools its role may call (the call checks it again).
  server.setRequestHandler(ListToolsRequestSchema, async (_request, extra) => ({
    tools: listTools(tools, principalOf(extra).role),
  }));
  server.setRequestHandler(CallToolRequestSchema, (request, extra) => callByName(request.params, extra));
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: [...RESOURCES] }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => ({
    contents: [
      {
        uri: request.params.uri,
        mimeType: 'application/json',
        text: JSON.stringify(await readResource(request.params.uri, options.services)),
      },
    ],
  }));
  return { server, callTool: callByName };
}

/** A new low-level MCP server with the tools and resources (one per session). */
export function createMcpServer(options: McpFaceOptions): Server {
  return createMcpFace(options).server;
}
