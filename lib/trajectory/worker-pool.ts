/**
 * The main thread's side of the trajectory worker: one long-lived worker thread, started on the
 * first request, that parses and checks trajectories so that a 10 MiB CSV or a 1 MiB JSON body
 * never holds the event loop. Jobs are answered in order; at most {@link MAX_PENDING} JSON bodies
 * and web.limits.max_uploads CSV uploads wait at a time (more is a 503); the job being checked may
 * take at most {@link JOB_TIMEOUT_MS} from the moment it is first in line (then the worker is
 * replaced): a job's wait behind the others does not count. The worker does not keep the process
 * alive while idle; {@link closeTrajectoryWorker} ends it (server close).
 */
import { Worker } from 'node:worker_threads';
import { DEFAULT_MAX_UPLOADS } from '../settings/schema.ts';
import { giveBackUploadBuffer } from '../body/upload-pool.ts';
import type { CheckRequest, CheckResult, CheckSource } from './check.ts';
import type { WorkerJob, WorkerReply } from './worker.ts';

/** Most JSON bodies (1 MiB each at most) waiting for the worker at once. */
export const MAX_PENDING = 8;
/** Longest the job first in line may take before the worker is ended and replaced (ms). */
export const JOB_TIMEOUT_MS = 30_000;

interface Pending {
  readonly kind: CheckSource['kind'];
  readonly resolve: (result: CheckResult) => void;
  /** Set once the job is first in line (the worker is checking it). */
  timer?: ReturnType<typeof setTimeout>;
}

/**
 * The file URL of the worker's compiled bundle, set by `npm start`'s build (scripts/start.mjs replaces the name with
 * the string); undeclared where the sources run under tsx.
 */
declare const ARMGATE_COMPILED_TRAJECTORY_WORKER: string | undefined;

/** The worker's entry: its compiled bundle when the server runs compiled, else its TypeScript through tsx. */
const WORKER_ENTRY =
  typeof ARMGATE_COMPILED_TRAJECTORY_WORKER === 'string'
    ? new URL(ARMGATE_COMPILED_TRAJECTORY_WORKER)
    : new URL('./worker-entry.mjs', import.meta.url);

/**
 * Most jobs of each kind waiting at once. CSV uploads: as many as the listener receives at once (web.limits.max_uploads),
 * so that an upload it admitted and read is never refused here after its 10 MiB have come in; the memory they hold is
 * bounded by that cap already.
 */
interface WaitingLimits {
  readonly json: number;
  readonly csv: number;
}

let waitingLimits: WaitingLimits = { json: MAX_PENDING, csv: DEFAULT_MAX_UPLOADS };
let jobTimeoutMs = JOB_TIMEOUT_MS;

/**
 * Sets how many CSV uploads may wait for the checker: web.limits.max_uploads (the app does this at start); and the
 * longest a check may take ({@link JOB_TIMEOUT_MS} unless given: tests shorten it).
 */
export function configureTrajectoryWorker(limits: {
  readonly maxUploads: number;
  readonly jobTimeoutMs?: number;
}): void {
  waitingLimits = { json: MAX_PENDING, csv: limits.maxUploads };
  jobTimeoutMs = limits.jobTimeoutMs ?? JOB_TIMEOUT_MS;
}

const failure = (detail: string): CheckResult => ({ ok: false, error: { kind: 'unavailable', detail } });

class TrajectoryWorker {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;

  check(request: CheckRequest, transfer: ArrayBuffer[]): Promise<CheckResult> {
    const kind = request.source.kind;
    let waiting = 0;
    for (const job of this.pending.values()) if (job.kind === kind) waiting++;
    if (waiting >= waitingLimits[kind]) {
      const what = kind === 'csv' ? 'CSV uploads' : 'requests';
      return Promise.resolve(failure(`the trajectory checker has ${waiting} ${what} waiting; try again shortly`));
    }
    const worker = this.start();
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.pending.set(id, { kind, resolve });
      this.timeFirstInLine();
      // A job in progress keeps the process alive; an idle worker does not.
      worker.ref();
      const job: WorkerJob = { id, request };
      worker.postMessage(job, transfer);
    });
  }

  /**
   * Starts the clock of the job first in line (the worker answers in order: it is the one being checked), so that
   * the timeout bounds a check and not the wait behind max_uploads others on a loaded machine.
   */
  private timeFirstInLine(): void {
    const first = this.pending.values().next().value;
    if (!first || first.timer) return;
    first.timer = setTimeout(
      () => this.fail(`the trajectory check took longer than ${jobTimeoutMs / 1000} s`),
      jobTimeoutMs,
    );
    first.timer.unref();
  }

  /** Ends the worker; waiting jobs fail with 503. */
  async close(): Promise<void> {
    const worker = this.worker;
    this.fail('the service is shutting down');
    if (worker) await worker.terminate();
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(WORKER_ENTRY, { name: 'armgate-trajectory-check' });
    worker.on('message', (reply: WorkerReply) => {
      if (reply.input) giveBackUploadBuffer(reply.input);
      const waiting = this.pending.get(reply.id);
      if (!waiting) return;
      clearTimeout(waiting.timer);
      this.pending.delete(reply.id);
      if (this.pending.size === 0) worker.unref();
      else this.timeFirstInLine();
      waiting.resolve(reply.result);
    });
    worker.on('error', (e: Error) => this.fail(`the trajectory checker failed: ${e.message}`));
    worker.on('exit', () => {
      if (this.worker === worker) this.fail('the trajectory checker stopped');
    });
    // After the listeners: adding a 'message' listener refs the worker's port again.
    worker.unref();
    this.worker = worker;
    return worker;
  }

  /** Fails every waiting job and drops the worker (the next job starts a new one). */
  private fail(detail: string): void {
    const worker = this.worker;
    this.worker = undefined;
    for (const [id, waiting] of this.pending) {
      clearTimeout(waiting.timer);
      this.pending.delete(id);
      waiting.resolve(failure(detail));
    }
    if (worker) void worker.terminate();
  }
}

let shared: TrajectoryWorker | undefined;

/**
 * Runs the check of one trajectory request on the worker thread. `transfer` lists buffers of the
 * request handed over rather than copied (the caller must not use them afterwards).
 */
export function checkOffThread(request: CheckRequest, transfer: ArrayBuffer[] = []): Promise<CheckResult> {
  shared ??= new TrajectoryWorker();
  return shared.check(request, transfer);
}

/** Ends the trajectory worker, if one runs (the next request starts a new one). */
export async function closeTrajectoryWorker(): Promise<void> {
  const worker = shared;
  shared = undefined;
  await worker?.close();
}
