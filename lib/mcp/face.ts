import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  ElicitResultSchema,
  McpError,
  ReadResourceRequestSchema,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { operation as jointStates } from '../../handlers/robot/joint-states.ts';
import { operation as pose } from '../../handlers/robot/pose.ts';
import { operation as positions } from '../../handlers/robot/positions.ts';
import { safetyView } from '../../handlers/robot/safety.ts';
import { API_INFO } from '../openapi/document.ts';
import type { AnyOperation, OpContext } from '../ops/operation.ts';
import { ros } from '../ros/context.ts';
import { type Role, roleAllows, roleNeeded } from '../ops/access.ts';
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

const READ_CONTEXT: OpContext = {
  face: 'mcp',
  signal: new AbortController().signal,
  progress: () => {},
  arrivedAtStop: undefined,
  caller: { name: 'resource read', role: 'read', face: 'mcp' },
};

/** A read operation's output, or its error under `error`. */
async function read(op: AnyOperation): Promise<unknown> {
  const result = await op.run({}, READ_CONTEXT);
  return result.ok ? result.value : { error: 'detail' in result.error ? result.error.detail : result.error.kind };
}

async function readResource(uri: string): Promise<unknown> {
  if (uri === 'armgate://robot/state') return { joint_states: await read(jointStates), tcp_pose: await read(pose) };
  if (uri === 'armgate://robot/positions') return read(positions);
  if (uri === 'armgate://robot/safety') return safetyView();
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

let toolList: { limits: unknown; tools: Tool[]; byRole: Map<Role, Tool[]> } | undefined;

/** The tools a role may call (all of them by default), built once per set of joint limits. */
export function listTools(role: Role = 'admin'): Tool[] {
  const limits = ros().limits;
  if (toolList?.limits !== limits)
    toolList = { limits, tools: TOOL_OPERATIONS.map((op) => toolOf(op, limits)), byRole: new Map() };
  const all = toolList.tools;
  let tools = toolList.byRole.get(role);
  if (!tools) {
    tools = all.filter((_, i) => roleAllows(role, roleNeeded(TOOL_OPERATIONS[i] as AnyOperation)));
    toolList.byRole.set(role, tools);
  }
  return tools;
}

const BY_NAME = new Map(TOOL_OPERATIONS.map((op) => [op.name, op]));

/** Options of the MCP face (from the settings' mcp block). */
export interface McpFaceOptions {
  /** mcp.confirm_motion: ask the person (MCP elicitation) before a motion tool moves the arm. */
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

/** A new low-level MCP server with the tools and resources (one per session). */
export function createMcpServer(options: McpFaceOptions = {}): Server {
  const server = new Server(
    { name: 'armgate', version: API_INFO.version },
    {
      capabilities: { tools: {}, resources: {} },
      instructions:
        'armgate drives a KUKA LBR iiwa 7 R800 arm (real or simulated). Read state with get_joint_states / get_tcp_pose; move with move_to_named_position, move_to_pose, move_to_joints; call stop to halt everything.',
    },
  );
  const confirm = options.confirmMotion ? elicitConfirmation(server) : undefined;
  // A token sees only the tools its role may call (the call checks it again).
  server.setRequestHandler(ListToolsRequestSchema, async (_request, extra) => ({
    tools: listTools(principalOf(extra).role),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const op = BY_NAME.get(request.params.name);
    if (!op)
      throw new McpError(
        ErrorCode.InvalidParams,
        `unknown tool '${request.params.name.slice(0, 100)}'; tools: ${TOOL_OPERATIONS.map((t) => t.name).join(', ')}`,
      );
    return callTool(op, request.params.arguments, extra, confirm);
  });
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: [...RESOURCES] }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => ({
    contents: [
      {
        uri: request.params.uri,
        mimeType: 'application/json',
        text: JSON.stringify(await readResource(request.params.uri)),
      },
    ],
  }));
  return server;
}
