/**
 * What the process does with a fault nothing handled (an 'uncaughtException', an 'unhandledRejection'): its state is
 * unknown, so it does not keep serving. It logs one fatal line (what, the stack; the tokens never), brings the arm to
 * rest as POST /stop does (on ros2 the goals in flight are cancelled and a hold point published: a FollowJointTrajectory
 * goal is not cancelled when its client dies, and the arm would go on moving with nobody able to stop it through
 * armgate), ends the runners and closes the bags as SIGTERM's shutdown does, writes the pending log lines and exits
 * {@link FATAL_EXIT_CODE} (a supervisor restarts it). Each step has a deadline, so that a hung backend cannot keep the
 * process alive; a second fault on the way exits at once.
 */
import { inspect } from 'node:util';

/** The exit code after a fault (sysexits' EX_SOFTWARE): not 0, not start-up's 1. */
export const FATAL_EXIT_CODE = 70;
/** The longest the stop may take (the hold point and the cancels go out at once; the stop service may hang). */
export const FATAL_STOP_DEADLINE_MS = 2000;
/** The longest the shutdown's close may take after the stop (the runners get 3 s before SIGKILL, requests 2 s). */
export const FATAL_CLOSE_DEADLINE_MS = 5000;
/** Most characters of a stack in the line. */
const MAX_STACK = 8000;

export type FaultKind = 'uncaught exception' | 'unhandled rejection';

export interface FatalParts {
  /** Brings the arm to rest as POST /stop does; `reason` is what a motion cut short answers. */
  stop(reason: string): Promise<unknown>;
  /** SIGTERM's shutdown: motions, runners, sessions and bags ended, the connections and the context closed. */
  close(): Promise<unknown>;
  /** Texts never to write (the tokens): replaced in the line. */
  readonly secrets: readonly string[];
  log(fields: Record<string, string | number>): void;
  /** Writes the pending log lines. */
  flush(): void;
  exit(code: number): void;
  /** Deadlines of the stop and the close (tests); default {@link FATAL_STOP_DEADLINE_MS}, {@link FATAL_CLOSE_DEADLINE_MS}. */
  readonly stopDeadlineMs?: number;
  readonly closeDeadlineMs?: number;
}

export interface FatalPolicy {
  /** A fault came: the process is on its way out (a shutdown that ends meanwhile exits {@link FATAL_EXIT_CODE} too). */
  readonly faulted: boolean;
  /** Handles a fault: the first starts the way out, a further one exits at once. */
  fault(kind: FaultKind, error: unknown): void;
}

/** What happened to a step raced against its deadline. */
async function within(work: () => Promise<unknown>, ms: number, exited: AbortSignal): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`not done within ${ms} ms`), ms);
    // An exit meanwhile (a second fault) leaves no deadline behind (an exit that does not end the process: a test's).
    exited.addEventListener('abort', () => clearTimeout(timer), { once: true });
  });
  try {
    return await Promise.race([
      Promise.resolve()
        .then(work)
        .then(
          () => 'done',
          (e: unknown) => `failed: ${e instanceof Error ? e.message : String(e)}`,
        ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** The error as text: its stack (an Error) or its inspection, without the secrets, at most {@link MAX_STACK}. */
export function describeFault(error: unknown, secrets: readonly string[]): string {
  let text =
    error instanceof Error ? (error.stack ?? String(error)) : inspect(error, { depth: 2, breakLength: Infinity });
  for (const secret of secrets) if (secret.length > 0) text = text.split(secret).join('[redacted]');
  return text.length > MAX_STACK ? `${text.slice(0, MAX_STACK)}...` : text;
}

/** The policy over `parts`; {@link installFatalPolicy} hands it the process's faults. */
export function fatalPolicy(parts: FatalParts): FatalPolicy {
  let faulted = false;
  const exited = new AbortController();
  const exitNow = () => {
    exited.abort();
    parts.flush();
    parts.exit(FATAL_EXIT_CODE);
  };
  return {
    get faulted() {
      return faulted;
    },
    fault(kind, error) {
      const stack = describeFault(error, parts.secrets);
      if (faulted) {
        parts.log({ level: 'fatal', msg: `${kind} while exiting after a fault: exiting at once`, stack });
        exitNow();
        return;
      }
      faulted = true;
      parts.log({ level: 'fatal', msg: `${kind}: stopping the arm and exiting`, stack });
      void (async () => {
        const reason = `the service failed (${kind})`;
        const stop = await within(
          () => parts.stop(reason),
          parts.stopDeadlineMs ?? FATAL_STOP_DEADLINE_MS,
          exited.signal,
        );
        const close = await within(
          () => parts.close(),
          parts.closeDeadlineMs ?? FATAL_CLOSE_DEADLINE_MS,
          exited.signal,
        );
        parts.log({
          level: stop === 'done' && close === 'done' ? 'info' : 'warn',
          msg: 'exiting after a fault',
          stop,
          close,
          code: FATAL_EXIT_CODE,
        });
        exitNow();
      })();
    },
  };
}

/** Hands the process's uncaught exceptions and unhandled rejections to the policy over `parts`. */
export function installFatalPolicy(parts: FatalParts, target: NodeJS.Process = process): FatalPolicy {
  const policy = fatalPolicy(parts);
  // Whatever ends the process from now on (the loop running dry while the stop waits) ends it non-zero.
  target.on('uncaughtException', (error) => {
    target.exitCode = FATAL_EXIT_CODE;
    policy.fault('uncaught exception', error);
  });
  target.on('unhandledRejection', (reason) => {
    target.exitCode = FATAL_EXIT_CODE;
    policy.fault('unhandled rejection', reason);
  });
  return policy;
}
