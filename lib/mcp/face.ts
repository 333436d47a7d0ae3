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
import { API_INFO } from '../openapi/document.ts';
import type { AnyOperation, AppState, OpContext, Resource } from '../core/operation.ts';
import { NO_CALLER, type Role, roleAllows, roleNeeded } from '../core/roles.ts';
import type { JointLimits } from '../robot/limits.ts';
import { lazySchemaValidator } from './lazy-validator.ts';
import { type NamedTool, servedNames } from './names.ts';
import { type CallExtra, type ConfirmMotion, callTool, confirmationText, principalOf, toolOf } from './tools.ts';

/** The JSON-RPC error code of an unknown resource (MCP specification, resources). */
export const RESOURCE_NOT_FOUND = -32002;

const NEVER_ABORTED = new AbortController().signal;

const toolLists = new WeakMap<
  readonly NamedTool[],
  { limits: unknown; tools: Tool[]; ops: AnyOperation[]; byRole: Map<Role, Tool[]> }
>();

/** The tools a role may call of a set of named tools, with the joint bounds of `limits` (built once per limits). */
export function listTools(named: readonly NamedTool[], role: Role, limits: JointLimits): Tool[] {
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
  /** The app's services and the ROS context, in every call's context. */
  readonly state: AppState;
  /**
   * The tools served: start-up passes those of the enabled routes' operations, under the naming of
   * armgate.mcp.tool_names (lib/mcp/names.ts).
   */
  readonly tools: readonly NamedTool[];
  /** The resources served (start-up hands the table). */
  readonly resources: readonly Resource[];
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

/** A session's MCP face: the SDK's low-level Server with the tools and resources (one per session). */
export function createMcpFace(options: McpFaceOptions): Server {
  const { tools, state } = options;
  const resources = options.resources;
  const byName = new Map(tools.map((tool) => [tool.name, tool.op]));
  const toolNames = servedNames(tools);
  /** The name a tool of an operation is served under (the first, when it has several). */
  const said = (op: string) => toolNames.get(op) ?? op;
  const server = new Server(
    { name: 'armgate', version: API_INFO.version },
    {
      capabilities: { tools: {}, resources: {} },
      jsonSchemaValidator: lazySchemaValidator(),
      instructions: `armgate drives a KUKA LBR iiwa 7 R800 arm (real or simulated). Read state with ${said('get_joint_states')} / ${said('get_tcp_pose')}; move with ${said('move_to_named_position')}, ${said('move_to_pose')}, ${said('move_to_joints')}; call ${said('stop')} to halt everything.`,
    },
  );
  const confirm = options.confirmMotion ? elicitConfirmation(server) : undefined;
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const name = request.params.name;
    const op = byName.get(name);
    if (!op)
      throw new McpError(
        ErrorCode.InvalidParams,
        `unknown tool '${name.slice(0, 100)}'; tools: ${tools.map((t) => t.name).join(', ')}`,
      );
    return callTool(op, request.params.arguments, extra, { state, confirm, toolNames });
  });
  // A token sees only the tools its role may call (the call checks it again); a request without a caller sees none.
  server.setRequestHandler(ListToolsRequestSchema, async (_request, extra) => {
    const caller = principalOf(extra);
    return { tools: caller ? listTools(tools, caller.role, state.ros.limits) : [] };
  });
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({
    resources: resources.map(({ read: _read, ...listed }) => listed),
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request, extra) => {
    const uri = request.params.uri;
    const resource = resources.find((r) => r.uri === uri);
    if (!resource)
      throw new McpError(RESOURCE_NOT_FOUND, `Resource not found: ${uri.slice(0, 200)}`, { uri: uri.slice(0, 200) });
    const caller = principalOf(extra);
    // Resources are reads (every role may read); a request without a caller is refused.
    if (!caller) throw new McpError(ErrorCode.InvalidRequest, NO_CALLER.detail);
    const ctx: OpContext = {
      signal: extra.signal ?? NEVER_ABORTED,
      progress: () => {},
      arrivedAtStop: undefined,
      caller: { ...caller, face: 'mcp' },
      calledAs: `the ${resource.uri} resource`,
      ...state,
    };
    return { contents: [{ uri, mimeType: resource.mimeType, text: JSON.stringify(await resource.read(ctx)) }] };
  });
  return server;
}
