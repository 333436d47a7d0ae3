/**
 * Stops the listener carries out though their request is not served as it came: the rule that a stop always wins, at
 * the HTTP edge. Each goes through the app as any stop does (admission, its token, its role, the audit line under its
 * token's name, its log line); only its answer is not the app's:
 * - a stop pipelined behind a request refused with `Connection: close` (a cap's 503, written by the listener, or the
 *   503 the app gives an MCP POST beyond a cap): no answer follows that one on its connection, which closes (RFC 9112,
 *   9.6, whose rule that such a request is not processed a stop is the exception to). Its client sees the close before
 *   the stop's answer, as for any request a server did not answer, and may send it again on a new connection (a
 *   second stop is a no-op 200);
 * - a stop with more than one Authorization line: it is answered 400 as every such request is (which caller it is
 *   would be a guess), and carried out for the first of its lines (at most {@link AUTHORIZATION_LINES_TRIED}) whose
 *   token the app serves it for, each line tried in turn as a request of its own (a wrong token is a refused guess,
 *   counted against its address as any). A request with two Host lines is not carried out: where it goes is a guess.
 * A stop offered with an upgrade behind a pending answer is carried out at once too (lib/server/upgrades.ts): its answer
 * is written in its turn.
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { headerLines } from '../admission/front-door.ts';
import type { RouteMatch } from '../http/routes.ts';
import type { LogSink } from './own-answers.ts';
import { BodylessRequest } from './request.ts';

/** The app as the listener hands it a request (lib/server/listener.ts's ListenerOptions.fetch). */
export type AppFetch = (
  request: Request,
  address: string,
  arrivedAtStop: number | undefined,
  beyond: undefined,
  match: RouteMatch,
) => Promise<Response>;

/** What of a request's target the app is handed: its origin-form path, and the authority of an absolute-form one. */
export interface ServedTarget {
  readonly path: string;
  readonly authority?: string | undefined;
}

/** Most Authorization lines of one stop tried, in order: an integrator sends one, a proxy may add one. */
export const AUTHORIZATION_LINES_TRIED = 8;

/** The stops carried out without their own answer, and the answer of a stop carried out ahead of its turn. */
export interface UnansweredStops {
  /**
   * Carries out the stop `req` is (its route `match`, found by the listener), its answer not written: behind a close,
   * or with more than one Authorization line (see the module comment). Its body, if any, is read and dropped.
   */
  carryOut(req: IncomingMessage, target: ServedTarget, match: RouteMatch, stamp: number | undefined): void;
  /** Carries out the stop `req` is now, through the app: its answer, for the listener to write in its turn. */
  answerOf(req: IncomingMessage, target: ServedTarget, match: RouteMatch, stamp: number | undefined): Promise<Response>;
}

export function unansweredStops(fetch: AppFetch, log: LogSink): UnansweredStops {
  const answerOf = (
    req: IncomingMessage,
    target: ServedTarget,
    match: RouteMatch,
    stamp: number | undefined,
    headers: IncomingMessage['headers'] = req.headers,
  ): Promise<Response> => {
    const own = target.authority === undefined ? headers : { ...headers, host: target.authority };
    const request = new BodylessRequest(
      match.method,
      `http://${own.host ?? 'localhost'}${target.path}`,
      req,
      undefined,
      own,
    );
    return fetch(request as unknown as Request, (req.socket as Socket).remoteAddress ?? '', stamp, undefined, match);
  };
  const failed = (e: unknown) =>
    log({ level: 'error', msg: 'a stop not answered failed', error: e instanceof Error ? e.message : String(e) });
  return {
    answerOf: (req, target, match, stamp) => answerOf(req, target, match, stamp),
    carryOut: (req, target, match, stamp) => {
      req.on('error', () => {});
      req.resume();
      if (headerLines(req.rawHeaders, 'host').length > 1) return;
      const lines = headerLines(req.rawHeaders, 'authorization');
      if (lines.length <= 1) return void answerOf(req, target, match, stamp).catch(failed);
      void (async () => {
        for (const authorization of lines.slice(0, AUTHORIZATION_LINES_TRIED)) {
          const response = await answerOf(req, target, match, stamp, { ...req.headers, authorization });
          if (response.ok) return;
        }
      })().catch(failed);
    },
  };
}
