/**
 * The stops of requests the app answers without serving them: a request past its address's guess limit (429) and an
 * MCP POST on a connection beyond a cap (503). A right token's stop is never kept out, yet the answer is the same
 * whether the token was right or not, so that a guesser or a crowd learns nothing from a stop; the stop runs once the
 * answer is on its way (no answer waits on it, none is timed by it). Used by the app (lib/http/routes.ts).
 */
import type { requestCaller, StopDespiteGuesses } from '../admission/front-door.ts';
import type { AppState } from '../core/operation.ts';
import type { Arrival } from '../core/roles.ts';
import { json } from './errors.ts';
import type { RestHandler } from './rest.ts';

/**
 * The stops a request to a mounted route holds (the MCP endpoint: a stop tool's call), for a request the app answers
 * without serving it: past its address's guess limit (429) or on a connection beyond a cap (503). It reads the
 * request's body (bounded; the same work whatever the token) and answers what carries out its stops for a right
 * token's caller, or undefined when it holds none; the app runs that only for a right token, once the answer is on
 * its way.
 */
export type StopsPastGuesses = (request: Request) => Promise<StopRunner | undefined>;

/** Carries out the stops a request holds, for its caller (a right token's principal), through the one pipeline. */
export type StopRunner = (call: Arrival) => Promise<void>;

/**
 * Why a request the listener let through to the app only for the stops its body may hold is refused: on a connection
 * beyond a cap, as its 503 says (the words and the Retry-After of the listener's own answer); or, with
 * `authorizations`, for carrying more than one Authorization line (400, `detail`). Only its stops are carried out.
 */
export interface BeyondCaps {
  readonly detail: string;
  readonly retryAfterS: number;
  /**
   * The request's Authorization lines (at most the listener's few), when it carries more than one: its stops are
   * carried out for the first line whose token is valid, each tried in turn as the request's own would be.
   */
  readonly authorizations?: readonly string[];
}

/** The answer of such a request: the cap's 503, as the listener answers it itself (lib/server/own-answers.ts), or 400. */
export const beyondAnswer = (beyond: BeyondCaps): Response =>
  beyond.authorizations
    ? json({ detail: beyond.detail }, 400, { connection: 'close' })
    : json({ detail: beyond.detail }, 503, { 'retry-after': String(beyond.retryAfterS), connection: 'close' });

/** The request as each of `authorizations` would send it alone (headers only: its body is read already). */
function askedAs(request: Request, authorizations: readonly string[] | undefined): Request[] {
  if (!authorizations) return [request];
  return authorizations.map((authorization) => {
    const headers = new Headers([...request.headers]);
    headers.set('authorization', authorization);
    return new Request(request.url, { method: request.method, headers });
  });
}

/** Where the stops of a request line are: the route table's lookups, as the app makes them. */
export interface RefusedStopsOptions {
  readonly state: AppState;
  readonly log: (fields: Record<string, string | number>) => void;
  /** The handler of a REST route that brings the arm to rest and takes no input (POST /stop, /robot/stop, /pause). */
  readonly restStop: (method: string, path: string) => RestHandler | undefined;
  /** The stops a mounted route's request may hold in its body (the MCP endpoint's stop tools). */
  readonly mountStops: (method: string, path: string) => StopsPastGuesses | undefined;
}

/** Who sends a request, as the app's authentication answers it (lib/admission/front-door.ts). */
type CallerOf = ReturnType<typeof requestCaller>;

/** The stops of refused requests: past the guess limit (for the front door) and beyond a cap (for the app). */
export function refusedStops(options: RefusedStopsOptions): {
  readonly pastGuesses: (method: string, path: string) => StopDespiteGuesses | undefined;
  readonly beyondCaps: (
    request: Request,
    path: string,
    address: string,
    arrivedAtStop: number | undefined,
    beyond: BeyondCaps,
    callerOf: CallerOf,
  ) => Promise<Response>;
} {
  const { services, ros } = options.state;
  const { log } = options;
  /** The stops held by requests beyond a cap whose body was read before authentication (see `beyondCaps`). */
  const readAlready = new WeakMap<Request, Promise<StopRunner | undefined>>();
  const runStops = (run: StopRunner, call: Arrival, failure: string) =>
    setImmediate(() => void run(call).catch((e: unknown) => log({ level: 'error', msg: failure, error: String(e) })));
  return {
    /**
     * How a request past its address's guess limit may still stop the arm, when its route may hold a stop: a REST
     * route that stops and takes no input, or a mounted route that says which stops a request holds. `stopOnly` (the
     * token's principal, from authentication, which compared it in constant time without counting it) is undefined
     * for a wrong token.
     */
    pastGuesses: (method, path) => {
      const handler = options.restStop(method, path);
      if (handler)
        return (request, caller, arrivedAtStop) => {
          if (!caller) return;
          setImmediate(() => {
            handler(request, { services, ros, caller, arrivedAtStop }).catch((e: unknown) =>
              log({ level: 'error', msg: 'a stop past the guess limit failed', error: String(e) }),
            );
          });
        };
      const carry = options.mountStops(method, path);
      if (!carry) return undefined;
      // The body is read whatever the token (the same work either way; read already for a request beyond a cap); only
      // a right token's stops are carried out.
      return (request, caller, arrivedAtStop) =>
        void (readAlready.get(request) ?? carry(request))
          .then((run) => {
            if (caller && run) runStops(run, { caller, arrivedAtStop }, 'a stop past the guess limit failed');
          })
          .catch((e: unknown) => log({ level: 'error', msg: 'a stop past the guess limit failed', error: String(e) }));
    },
    /**
     * A request the listener let through on a connection beyond a cap because its route may hold a stop (the MCP
     * endpoint's tool calls; the listener refuses every other request there before its body): answered with the 503
     * the listener would have given (its words, Retry-After, Connection: close) whatever its token, so that the answer
     * tells no right token from a wrong one. One with more than one Authorization line likewise, answered 400, its
     * stops carried out for the first valid one. Its body is read first (bounded; the same work for any token), then it is
     * authenticated as every request is (a wrong token counted as a guess, past the guess limit the stops carried out
     * as there), and a right token's stops are carried out once the 503 is on its way. Nothing but stops runs for it.
     */
    beyondCaps: async (request, path, address, arrivedAtStop, beyond, callerOf) => {
      const carry = options.mountStops(request.method, path);
      if (carry) {
        const reading = carry(request).catch(() => undefined);
        readAlready.set(request, reading);
        const run = await reading;
        for (const asked of askedAs(request, beyond.authorizations)) {
          readAlready.set(asked, reading);
          const who = callerOf(asked, path, address, arrivedAtStop);
          if (run && 'caller' in who && who.caller) {
            runStops(run, { caller: who.caller, arrivedAtStop }, 'a stop beyond the caps failed');
            break;
          }
        }
      }
      return beyondAnswer(beyond);
    },
  };
}
