/**
 * The MCP endpoint's stops past the guess limit: a POST to /mcp/mcp from an address past its wrong tokens is answered
 * 429 whatever its token (lib/admission/front-door.ts), and a stop tool's call in it with a right token is carried out
 * all the same, as POST /stop is (docs/safe-deployment.md, token guessing). The call needs no session: a stop is every
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

/**
 * Carries out the stop tools (an operation that stops and takes no input: `stop`, `pause`) a POST calls, for a right
 * token past the guess limit; a wrong token's body is read the same way (no answer can tell them apart) and nothing
 * runs. The calls go through the one pipeline (role, audit trail) as the tool's own would.
 */
export function mcpStopsPastGuesses(
  tools: readonly NamedTool[],
  state: AppState,
): (request: Request, call: Arrival | undefined) => Promise<void> {
  const stops = new Map(tools.filter(({ op }) => op.effect === 'stop' && !op.input).map(({ name, op }) => [name, op]));
  return async (request, call) => {
    const text = request.method === 'POST' ? await readBoundedText(request, STOP_BODY_MAX_BYTES) : undefined;
    // The 429 is written first (the app answered it before this ran on): no answer waits on what follows, none is
    // timed by it.
    await new Promise((resolve) => setImmediate(resolve));
    if (!call || text === undefined) return;
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return;
    }
    for (const name of calledTools(body)) {
      const op = stops.get(name);
      if (!op) continue;
      await invoke(
        op,
        {},
        { ...state, caller: call.caller, face: 'mcp', calledAs: `the ${name} tool`, arrivedAtStop: call.arrivedAtStop },
      );
    }
  };
}
