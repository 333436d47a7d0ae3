import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import * as jointStates from '../../handlers/robot/joint-states.ts';
import * as pose from '../../handlers/robot/pose.ts';
import * as positions from '../../handlers/robot/positions.ts';
import { API_INFO } from '../openapi/document.ts';
import { ros } from '../ros/context.ts';
import { inputSchemaOf, outputSchemaOf, TOOLS, type ToolSpec } from './tools.ts';

const BASE = 'http://armgate.mcp';

/** Calls a REST handler in process with a JSON body or query, as its REST twin would be called. */
async function callHandler(tool: ToolSpec, args: Record<string, unknown>): Promise<Response> {
  const { route, handler } = tool.module;
  if (tool.input === 'query') {
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(args))
      query.set(key, typeof value === 'string' ? value : JSON.stringify(value));
    return handler(new Request(`${BASE}${route.path}?${query}`, { method: route.method }));
  }
  if (tool.input === 'sequence') {
    const form = new FormData();
    const { config, ...fields } = args;
    form.set('config', new Blob([JSON.stringify(config ?? null)], { type: 'application/json' }), 'config.json');
    for (const [key, value] of Object.entries(fields))
      form.set(key, typeof value === 'string' ? value : JSON.stringify(value));
    return handler(new Request(`${BASE}${route.path}`, { method: 'POST', body: form }));
  }
  if (tool.input === 'body')
    return handler(
      new Request(`${BASE}${route.path}`, {
        method: 'POST',
        body: JSON.stringify(args),
        headers: { 'content-type': 'application/json' },
      }),
    );
  return handler(
    new Request(`${BASE}${route.path}`, { method: route.method, ...(route.method === 'POST' ? { body: '{}' } : {}) }),
  );
}

const ADVICE: Record<number, string> = {
  409: 'The arm is busy (a motion, trajectory or sequence holds it): wait for it to finish and retry, or call stop.',
  413: 'The input is too large.',
  422: 'The arguments are invalid: fix the fields named above and call again.',
  503: 'The robot stack is not answering (controller, planner or FK service): check that it runs, then retry.',
};

/** A tool result from the handler's response: structured content and a short summary, or a tool error. */
async function toToolResult(tool: ToolSpec, response: Response): Promise<CallToolResult> {
  const body = (await response.json()) as unknown;
  if (response.status !== 200) {
    const detail = (body as { detail?: unknown }).detail;
    const text = Array.isArray(detail)
      ? detail
          .map(
            (d: { loc?: unknown[]; msg?: string }) =>
              `${(d.loc ?? []).slice(1).join('.') || 'arguments'}: ${d.msg ?? ''}`,
          )
          .join('; ')
      : String(detail ?? response.statusText);
    return {
      isError: true,
      content: [
        {
          type: 'text',
          text: `${tool.name} failed (${response.status}): ${text}. ${ADVICE[response.status] ?? ''}`.trim(),
        },
      ],
    };
  }
  const structured = (tool.wrapAs ? { [tool.wrapAs]: body } : body) as Record<string, unknown>;
  return { structuredContent: structured, content: [{ type: 'text', text: summarize(tool, structured) }] };
}

function summarize(tool: ToolSpec, result: Record<string, unknown>): string {
  if ('success' in result && 'message' in result)
    return `${result.success ? 'succeeded' : 'did not succeed'}: ${String(result.message)}`;
  const text = JSON.stringify(result);
  return text.length > 2000 ? `${text.slice(0, 2000)}... (${tool.name}: full result in structuredContent)` : text;
}

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
] as const;

async function readResource(uri: string): Promise<unknown> {
  const get = async (module: { handler: (r: Request) => Promise<Response> }, path: string) => {
    const res = await module.handler(new Request(`${BASE}${path}`));
    return res.status === 200
      ? ((await res.json()) as unknown)
      : { error: ((await res.json()) as { detail?: unknown }).detail };
  };
  if (uri === 'armgate://robot/state')
    return { joint_states: await get(jointStates, '/robot/joint_states'), tcp_pose: await get(pose, '/robot/pose') };
  if (uri === 'armgate://robot/positions') return get(positions, '/robot/positions');
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
  throw new Error(`unknown resource ${uri}`);
}

let toolList: { limits: unknown; tools: Tool[] } | undefined;

function listTools(): Tool[] {
  const limits = ros().limits;
  if (toolList?.limits !== limits) {
    toolList = {
      limits,
      tools: TOOLS.map((tool) => {
        const output = outputSchemaOf(tool);
        return {
          name: tool.name,
          title: tool.title,
          description: tool.description,
          inputSchema: inputSchemaOf(tool, limits) as Tool['inputSchema'],
          ...(output ? { outputSchema: output as Tool['outputSchema'] } : {}),
        };
      }),
    };
  }
  return toolList.tools;
}

/** A new low-level MCP server with the tools and resources (one per request: stateless mode). */
export function createMcpServer(): Server {
  const server = new Server(
    { name: 'armgate', version: API_INFO.version },
    {
      capabilities: { tools: {}, resources: {} },
      instructions:
        'armgate drives a KUKA LBR iiwa 7 R800 arm (real or simulated). Read state with get_joint_states / get_tcp_pose; move with move_to_named_position, move_to_pose, move_to_joints; call stop to halt everything.',
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: listTools() }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = TOOLS.find((t) => t.name === request.params.name);
    if (!tool)
      return {
        isError: true,
        content: [
          {
            type: 'text',
            text: `unknown tool '${request.params.name}'; tools: ${TOOLS.map((t) => t.name).join(', ')}`,
          },
        ],
      };
    return toToolResult(tool, await callHandler(tool, request.params.arguments ?? {}));
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
