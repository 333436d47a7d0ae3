/**
 * The motion sequence runner: a separate OS process started by armgate (POST /sequences/start).
 * Each iteration moves to home, then to each waypoint in order, then home again, then waits the
 * delay (not after the last). The run arrives as one message, a validated {@link SequenceJob}, over
 * the IPC channel. Each point is a MoveToJoints or MoveToPose goal to the job's action. On the simulator the goals and the recorded topics travel
 * over the IPC channel of the process that started the runner; on a ROS 2 stack the runner has its own rclnodejs node (lib/sequences/rcl-backend.ts). Optionally
 * records a rosbag2 (MCAP) bag. Before each goal, on either backend, it asks armgate whether the run
 * still holds the arm (the arbiter's lease): after a stop or at shutdown nothing more is sent. Progress goes to the parent over IPC; a `stop` message, SIGTERM,
 * SIGINT or the parent going away (its IPC channel closing, or EPIPE on the runner's output or
 * channel, as when armgate is SIGKILLed) cancel the goal in flight, close the bag and end the
 * process; output written once armgate is gone is dropped (runner-io.ts). Exit codes: see EXIT in protocol.ts.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { RunnerBackend, Recording } from './backend.ts';
import type { SequencePoint } from './config.ts';
import { createConfinedFolder } from './paths.ts';
import { EXIT, type SequenceJob, type ServerToRunner } from './protocol.ts';
import type { RunnerRosSettings } from './rcl-backend.ts';
import { attachRunnerIo } from './runner-io.ts';

/** How long the runner waits for the action server to confirm a cancel when it is stopped. */
const CANCEL_WAIT_MS = 1500;

let backend: RunnerBackend | undefined;
/** The latest execution rate armgate sent (pause, resume, override), applied once the backend exists. */
let pendingRate: number | undefined;
let recording: Recording | undefined;
let exiting = false;
const early: ServerToRunner[] = [];
let onServerMessage: (message: ServerToRunner) => void = (message) => early.push(message);
const { log, warn, send } = attachRunnerIo(
  (reason) => void finish(EXIT.terminated, `armgate went away (${reason}): stopping`),
);

async function finish(code: number, line?: string): Promise<never> {
  // The first reason to finish wins; later ones (a goal cancelled by the same stop) wait for it.
  if (exiting) return new Promise<never>(() => undefined);
  exiting = true;
  if (line) (code === EXIT.ok ? log : warn)(line);
  // A run that ended well records up to its end (nothing is in flight); a stop cancels first.
  if (code === EXIT.ok) await recording?.catchUp?.().catch(() => undefined);
  try {
    await backend?.close(line ?? 'the sequence ended', CANCEL_WAIT_MS);
  } catch (e) {
    warn(`could not release the ROS node: ${(e as Error).message}`);
  }
  const closing = recording;
  recording = undefined;
  if (closing) {
    try {
      await closing.close();
      log('bag closed');
    } catch (e) {
      warn(`could not close the bag: ${(e as Error).message}`);
      if (code === EXIT.ok) code = EXIT.bagFailed;
    }
  }
  process.exitCode = code;
  if (process.connected) process.disconnect?.();
  // Leave nothing running: stop here even if a goal is still awaited.
  process.exit(code);
}

const claims = new Map<number, (granted: boolean, message: string) => void>();
let nextClaim = 1;

/** Asks armgate whether the run still holds the arm (its arbiter's lease), before each goal on either backend. */
function claimArm(): Promise<{ granted: boolean; message: string }> {
  if (!process.connected) return Promise.resolve({ granted: false, message: 'armgate is gone' });
  const id = nextClaim++;
  return new Promise((resolve) => {
    claims.set(id, (granted, message) => resolve({ granted, message }));
    send({ type: 'claim', id });
  });
}

/** The rates armgate sent, applied one after the other. */
let rates: Promise<void> = Promise.resolve();

/**
 * Applies a rate in the order armgate sent it and acknowledges it once applied: a pause only once the
 * backend's goals are cancelled with the cancels confirmed and none will be sent until a rate above 0.
 */
function applyRate(id: number, rate: number): void {
  rates = rates.then(async () => {
    try {
      await backend?.setRate?.(rate);
      send({ type: 'rate_applied', id });
    } catch (e) {
      send({ type: 'rate_applied', id, error: (e as Error).message });
    }
  });
}

let receiveJob: (job: SequenceJob) => void = () => undefined;
/** The run, sent by armgate as the first message. */
const jobArrived = new Promise<SequenceJob>((resolve) => {
  receiveJob = resolve;
});

process.on('message', (raw: ServerToRunner) => {
  if (raw.type === 'job') receiveJob(raw.job);
  else if (raw.type === 'stop') void finish(EXIT.terminated, 'stopped by armgate');
  else if (raw.type === 'rate') {
    // Before the backend exists the latest rate waits for it (main applies it before the first goal).
    pendingRate = raw.rate;
    applyRate(raw.id, raw.rate);
  } else if (raw.type === 'claim_result') {
    claims.get(raw.id)?.(raw.granted, raw.message);
    claims.delete(raw.id);
  } else onServerMessage(raw);
});
process.on('SIGTERM', () => void finish(EXIT.terminated, 'stopped by SIGTERM'));
process.on('SIGINT', () => void finish(EXIT.terminated, 'stopped by SIGINT'));

/** The backend the job asks for; ends the process with the reason when it cannot be had. */
async function createBackend(kind: string, ros: RunnerRosSettings | undefined): Promise<RunnerBackend> {
  if (kind === 'sim') {
    const { IpcBackend } = await import('./ipc-backend.ts');
    const ipc = new IpcBackend(send, warn);
    onServerMessage = (message) => ipc.onMessage(message);
    for (const message of early.splice(0)) ipc.onMessage(message);
    return ipc;
  }
  if (kind !== 'ros2' || ros === undefined)
    return finish(EXIT.badArguments, 'the job names the ros2 backend without its ROS settings');
  const { loadRclnodejs } = await import('../ros/rcl-load.ts');
  const rcl = await loadRclnodejs(process.env);
  if (!rcl.ok) return finish(EXIT.noActionServer, rcl.error);
  const { RclBackend } = await import('./rcl-backend.ts');
  const { DefinitionSource } = await import('../bag/installed.ts');
  return RclBackend.create(rcl.value, ros, {
    nodeName: `armgate_sequence_runner_${process.pid}`,
    definitions: DefinitionSource.fromEnv(process.env),
    log,
    warn,
  });
}

/** How long the runner waits for its job after it started. */
const JOB_WAIT_MS = 10_000;

async function main(): Promise<void> {
  if (!process.send) await finish(EXIT.badArguments, 'the runner must be started by armgate (no IPC channel)');
  const job = await Promise.race([jobArrived, sleep(JOB_WAIT_MS, undefined, { ref: false })]);
  if (!job) return finish(EXIT.badArguments, `no job from armgate within ${JOB_WAIT_MS / 1000} s`);
  const { config, iterations, delayS, actions, bag } = job;
  const moves = await createBackend(job.backend, job.ros);
  backend = moves;
  moves.prepare?.(actions);
  const rate = pendingRate ?? job.rate;
  if (rate !== undefined && rate !== 1) await moves.setRate?.(rate);
  if (bag) {
    const created = await createConfinedFolder(bag.root, bag.path);
    if (!created.ok) await finish(EXIT.bagFailed, `cannot record the bag: ${created.error}`);
    try {
      recording = await moves.record(bag.path, [...bag.topics]);
    } catch (e) {
      await finish(EXIT.bagFailed, `cannot record the bag: ${(e as Error).message}`);
    }
    log(`recording ${recording?.topics.join(', ')} to ${bag.path}`);
  }
  const route: { label: string; point: SequencePoint }[] = [
    { label: 'home', point: config.home },
    ...config.waypoints.map((point, k) => ({ label: `waypoint ${k + 1}`, point })),
    { label: 'home', point: config.home },
  ];
  log(`sequence started: ${iterations} iteration(s) of ${route.length} points, ${delayS} s between iterations`);
  for (let i = 1; i <= iterations; i++) {
    for (const { label, point } of route) {
      const action = 'joints' in point ? actions.joints : actions.pose;
      send({ type: 'progress', iteration: i, iterations, point: label });
      log(`iteration ${i}/${iterations}: ${label} via ${action}`);
      const claim = await claimArm();
      if (!claim.granted)
        await finish(EXIT.terminated, `iteration ${i}: ${label}: ${claim.message}; nothing more is sent`);
      const answer = await moves.move(action, point);
      if (answer.kind === 'no_server') await finish(EXIT.noActionServer, `iteration ${i}: ${label}: ${answer.message}`);
      else if (!answer.result.success)
        await finish(EXIT.motionFailed, `iteration ${i}: ${label} failed: ${answer.result.message}`);
      log(`iteration ${i}/${iterations}: ${label} reached`);
    }
    if (i < iterations && delayS > 0) {
      log(`waiting ${delayS} s`);
      await sleep(delayS * 1000);
    }
  }
  await finish(EXIT.ok, `sequence finished: ${iterations} iteration(s)`);
}

main().catch((e: unknown) => finish(EXIT.badArguments, `runner failed: ${(e as Error).message}`));
