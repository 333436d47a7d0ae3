import type { AnyOperation, ToolNames } from '../core/operation.ts';

/** How tools are named: armgate's own names, or as the robot stack's MCP server (FastMCP over its FastAPI routes) did. */
export type ToolNaming = 'armgate' | 'original';

/**
 * The tool name the stack's MCP server gave the route of an operation: the path without its leading slash, every
 * character that is not a letter, digit or underscore as `_`, then `_` and the method in lower case
 * (GET /robot/joint_states -> robot_joint_states_get, POST /robot/move/joints -> robot_move_joints_post).
 */
export function originalToolName(route: { readonly method: string; readonly path: string }): string {
  return `${route.path.replace(/^\//, '').replace(/\W/g, '_')}_${route.method.toLowerCase()}`;
}

/** The name each operation's tool is served under (the first, when it has several), for texts naming it. */
export function servedNames(tools: readonly NamedTool[]): ToolNames {
  const names = new Map<string, string>();
  for (const tool of tools) if (!names.has(tool.op.name)) names.set(tool.op.name, tool.name);
  return names;
}

/** A tool name and the operation it calls. */
export interface NamedTool {
  readonly name: string;
  readonly op: AnyOperation;
}

/**
 * The tools of the active operations under the chosen naming. With `original`, each tool operation is named by its
 * route, and the stack's `POST /robot/stop` (a tool of its server) is one more name of stop when that route is served.
 */
export function namedTools(
  operations: readonly AnyOperation[],
  naming: ToolNaming,
  extraRoutes: readonly { readonly method: string; readonly path: string; readonly op: AnyOperation }[] = [],
): NamedTool[] {
  const tools = operations.filter((op) => op.mcp);
  if (naming === 'armgate') return tools.map((op) => ({ name: op.name, op }));
  return [
    ...tools.map((op) => ({ name: op.rest ? originalToolName(op.rest) : op.name, op })),
    ...extraRoutes.map((route) => ({ name: originalToolName(route), op: route.op })),
  ];
}
