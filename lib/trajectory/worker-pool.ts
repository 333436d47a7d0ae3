/**
 * The main thread's side of the trajectory worker: one long-lived worker thread, started on the
 * first request, that parses and checks trajectories so that a 10 MiB CSV or a 1 MiB JSON body
 * never holds the event loop. Jobs are checked in order, one posted at a time; at most {@link MAX_PENDING} JSON
 * bodies and web.limits.max_uploads CSV uploads wait at a time (more is a 503); a job a stop came after is answered
 * without its check when its turn comes; the job being checked may take at most {@link JOB_TIMEOUT_MS} from the moment
 * it is posted (then the worker is replaced): a job's wait behind the others does not count. The worker does not keep the process
 * alive while idle; {@link closeTrajectoryWorker} ends it (server close).
 */
import { Worker } from 'node:worker_threads';
import { DEFAULT_MAX_UPLOADS } from '../settings/schema.ts';
import { type Clock, systemClock, type Timer } from '../clock.ts';
import { giveBackUploadBuffer } from '../body/upload-pool.ts';
import type { ApiError } from '../core/errors.ts';
import type { CheckRequest, CheckResult, CheckSource } from './check.ts';
import type { WorkerJob, WorkerReply } from './worker.ts';

/** Most JSON bodies (1 MiB each at most) waiting for the worker at once. */
export const MAX_PENDING = 8;
/** Longest the job first in line may take before the worker is ended and replaced (ms). */
export const JOB_TIMEOUT_MS = 30_000;
/**
 * How long the checker's thread is kept with nothing to check: then it ends, and its heap (a 10 MiB CSV's parsed rows
 * and points, ~100 MiB) goes back to the system; the next check starts a thread again (tens of milliseconds).
 */
export const WORKER_IDLE_MS = 2_000;

interface Pending {
  readonly id: number;
  readonly kind: CheckSource['kind'];
  readonly request: CheckRequest;
  readonly transfer: ArrayBuffer[];
  readonly refusal: (() => ApiError | undefined) | undefined;
  readonly resolve: (result: CheckResult) => void;
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
let clock: Clock = systemClock;

/**
 * Sets how many CSV uploads may wait for the checker: web.limits.max_uploads (the app does this at start); and the
 * longest a check may take ({@link JOB_TIMEOUT_MS} unless given: tests shorten it), on `clock` (the process clock
 * unless given: tests step one).
 */
export function configureTrajectoryWorker(limits: {
  readonly maxUploads: number;
  readonly jobTimeoutMs?: number;
  readonly clock?: Clock;
}): void {
  waitingLimits = { json: MAX_PENDING, csv: limits.maxUploads };
  jobTimeoutMs = limits.jobTimeoutMs ?? JOB_TIMEOUT_MS;
  clock = limits.clock ?? systemClock;
}

const failure = (detail: string): CheckResult => ({ ok: false, error: { kind: 'unavailable', detail } });

class TrajectoryWorker {
  private worker: Worker | undefined;
  /** Jobs waiting for the worker, in order (still on this thread: nothing is posted before its turn). */
  private readonly queue: Pending[] = [];
  /** The job the worker is checking, and the clock of its timeout. */
  private current: { readonly job: Pending; readonly timer: Timer } | undefined;
  private nextId = 1;
  /** Ends an idle worker (set while nothing is checked or waits). */
  private idle: Timer | undefined;

  check(
    request: CheckRequest,
    transfer: ArrayBuffer[],
    refusal: (() => ApiError | undefined) | undefined,
  ): Promise<CheckResult> {
    const kind = request.source.kind;
    let waiting = this.current?.job.kind === kind ? 1 : 0;
    for (const job of this.queue) if (job.kind === kind) waiting++;
    if (waiting >= waitingLimits[kind]) {
      const what = kind === 'csv' ? 'CSV uploads' : 'requests';
      return Promise.resolve(failure(`the trajectory checker has ${waiting} ${what} waiting; try again shortly`));
    }
    return new Promise((resolve) => {
      this.queue.push({ id: this.nextId++, kind, request, transfer, refusal, resolve });
      this.dispatch();
    });
  }

  /**
   * Posts the next job to the worker when it is free. A job whose request would be refused now anyway (a stop came
   * since it arrived) is answered with that refusal without being checked: the jobs a stop came after are answered
   * at once, one check time at most after it, instead of one after another. A job's timeout runs from when it is
   * posted: its wait behind the others does not count.
   */
  private dispatch(): void {
    while (!this.current) {
      const job = this.queue.shift();
      if (!job) {
        this.worker?.unref();
        if (this.worker && !this.idle) {
          this.idle = clock.after(WORKER_IDLE_MS, () => this.endIdle());
          this.idle.unref?.();
        }
        return;
      }
      this.idle?.cancel();
      this.idle = undefined;
      const refused = job.refusal?.();
      if (refused) {
        job.resolve({ ok: false, error: refused });
        continue;
      }
      const worker = this.start();
      const timer = clock.after(jobTimeoutMs, () =>
        this.fail(`the trajectory check took longer than ${jobTimeoutMs / 1000} s`),
      );
      timer.unref?.();
      this.current = { job, timer };
      // A job in progress keeps the process alive; an idle worker does not.
      worker.ref();
      const message: WorkerJob = { id: job.id, request: job.request };
      worker.postMessage(message, job.transfer);
    }
  }

  /** True while a checker thread runs (a job in progress, or idle for less than {@link WORKER_IDLE_MS}). */
  get running(): boolean {
    return this.worker !== undefined;
  }

  /** Ends the worker when nothing is checked or waits (a job that came meanwhile keeps it). */
  private endIdle(): void {
    this.idle = undefined;
    const worker = this.worker;
    if (!worker || this.current || this.queue.length > 0) return;
    this.worker = undefined;
    void worker.terminate();
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
      const current = this.current;
      if (!current || current.job.id !== reply.id) return;
      current.timer.cancel();
      this.current = undefined;
      current.job.resolve(reply.result);
      this.dispatch();
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

  /** Fails the job being checked and every waiting one, and drops the worker (the next job starts a new one). */
  private fail(detail: string): void {
    this.idle?.cancel();
    this.idle = undefined;
    const worker = this.worker;
    this.worker = undefined;
    const current = this.current;
    this.current = undefined;
    if (current) {
      current.timer.cancel();
      current.job.resolve(failure(detail));
    }
    for (const job of this.queue.splice(0)) job.resolve(failure(detail));
    if (worker) void worker.terminate();
  }
}

let shared: TrajectoryWorker | undefined;

/**
 * Runs the check of one trajectory request on the worker thread. `transfer` lists buffers of the
 * request handed over rather than copied when its turn comes (the caller must not use them afterwards, unless the
 * job was refused before). `refusal`: asked when the job's turn comes; an error it gives is the job's answer, unchecked
 * (a stop came since the request arrived).
 */
export function checkOffThread(
  request: CheckRequest,
  transfer: ArrayBuffer[] = [],
  refusal?: () => ApiError | undefined,
): Promise<CheckResult> {
  shared ??= new TrajectoryWorker();
  return shared.check(request, transfer, refusal);
}

/** True while the trajectory checker's thread runs (it ends {@link WORKER_IDLE_MS} after its last check). */
export function trajectoryCheckerRunning(): boolean {
  return shared?.running ?? false;
}

/** Ends the trajectory worker, if one runs (the next request starts a new one). */
export async function closeTrajectoryWorker(): Promise<void> {
  const worker = shared;
  shared = undefined;
  await worker?.close();
}
