/**
 * The MCP endpoint's stops past the guess limit and beyond the caps: a POST to /mcp/mcp from an address past its wrong
 * tokens is answered 429 whatever its token (lib/admission/front-door.ts), one on a connection beyond a cap 503
 * (lib/server/listener.ts), and a stop tool's call in it with a right token is carried out all the same, as POST /stop
 * is (docs/safe-deployment.md, token guessing; docs/api.md, the caps). The call needs no session: a stop is every
 * role's, and a client whose session was opened before the guessing (or elsewhere) names one the 429 never reaches.
 */
import { invoke } from '../core/invoke.ts';
import type { AppState } from '../core/operation.ts';
import type { Arrival } from '../core/roles.ts';
import { readBoundedText } from '../body/bounded.ts';
import { isRecord } from './wire.ts';
import type { NamedTool } from './names.ts';

/** The largest body looked into past the limit: a stop's call is a few hundred bytes; a guesser's is not read further. */
export const STOP_BODY_MAX_BYTES = 64 * 1024;

/** The names of the tools a JSON-RPC message or batch calls (tools/call requests), in order. */
function calledTools(body: unknown): string[] {
  const names: string[] = [];
  for (const message of Array.isArray(body) ? body : [body])
    if (isRecord(message) && message.method === 'tools/call' && isRecord(message.params))
      if (typeof message.params.name === 'string') names.push(message.params.name);
  return names;
}

/** Carries out the stop tools a message calls, for a caller (the stop count at its request's arrival with it). */
export type StopsRun = (call: Arrival) => Promise<void>;

/**
 * What carries out the stop tools (an operation that stops and takes no input: `stop`, `pause`) a parsed JSON-RPC
 * message or batch calls, whatever else it holds; undefined when it calls none. The calls go through the one pipeline
 * (role, audit trail) as the tool's own would, each with `{}`: a stop acts whatever it is sent with.
 */
export function stopsOfBody(tools: readonly NamedTool[], state: AppState): (body: unknown) => StopsRun | undefined {
  const stops = new Map(tools.filter(({ op }) => op.effect === 'stop' && !op.input).map(({ name, op }) => [name, op]));
  return (body) => {
    const called = calledTools(body).flatMap((name) => {
      const op = stops.get(name);
      return op ? [{ name, op }] : [];
    });
    if (called.length === 0) return undefined;
    return async (call) => {
      for (const { name, op } of called)
        await invoke(
          op,
          {},
          {
            ...state,
            caller: call.caller,
            face: 'mcp',
            calledAs: `the ${name} tool`,
            arrivedAtStop: call.arrivedAtStop,
          },
        );
    };
  };
}

/**
 * Reads a POST's body (bounded; the same work whatever its token) and answers what carries out the stop tools it
 * calls (stopsOfBody), for a right token's caller past the guess limit or beyond the caps (lib/http/routes.ts's
 * createApp); undefined when it calls none.
 */
export function mcpStopsPastGuesses(
  tools: readonly NamedTool[],
  state: AppState,
): (request: Request) => Promise<StopsRun | undefined> {
  const stopsOf = stopsOfBody(tools, state);
  return async (request) => (request.method === 'POST' ? stopsOf(await stopBodyOf(request)) : undefined);
}

/**
 * The JSON body of a POST refused before its body was needed (past the guess limit, beyond the caps, a wrong Accept or
 * charset at the MCP endpoint), read for the stop tools it calls: at most {@link STOP_BODY_MAX_BYTES}, undefined when
 * larger (not read further) or not JSON.
 */
export async function stopBodyOf(request: Request): Promise<unknown> {
  const text = await readBoundedText(request, STOP_BODY_MAX_BYTES);
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
