/**
 * The trajectory worker thread: runs {@link checkTrajectoryRequest} for each job the main thread
 * posts and answers with the result, its point arrays transferred. Loaded through
 * worker-entry.mjs; importing it anywhere else does nothing (there is no parent port).
 */
import { parentPort } from 'node:worker_threads';
import { type CheckRequest, type CheckResult, checkTrajectoryRequest } from './check.ts';
import { lowerThisThreadsPriority } from './worker-priority.ts';

/** A job from the main thread. */
export interface WorkerJob {
  readonly id: number;
  readonly request: CheckRequest;
}

/** The answer to a job. */
export interface WorkerReply {
  readonly id: number;
  readonly result: CheckResult;
  /** A CSV job's buffer, sent back (transferred) for the next upload (lib/body/upload-pool.ts). */
  readonly input?: ArrayBuffer;
}

function run(job: WorkerJob): void {
  let result: CheckResult;
  try {
    result = checkTrajectoryRequest(job.request);
  } catch (e) {
    result = { ok: false, error: { kind: 'internal', detail: `the trajectory check failed: ${(e as Error).message}` } };
  }
  const transfer: ArrayBuffer[] = [];
  if (result.ok) {
    const { times, positions, velocities } = result.points;
    transfer.push(times.buffer as ArrayBuffer, positions.buffer as ArrayBuffer);
    if (velocities) transfer.push(velocities.buffer as ArrayBuffer);
  }
  // The CSV's bytes were decoded into a string: nothing checked refers to them any more.
  const source = job.request.source;
  const input = source.kind === 'csv' ? (source.bytes.buffer as ArrayBuffer) : undefined;
  if (input) transfer.push(input);
  const reply: WorkerReply = { id: job.id, result, ...(input ? { input } : {}) };
  parentPort?.postMessage(reply, transfer);
}

if (parentPort) {
  // Below the event loop's thread: on a busy machine the main thread (a stop) gets the CPU before the checker does.
  lowerThisThreadsPriority();
  parentPort.on('message', run);
}
