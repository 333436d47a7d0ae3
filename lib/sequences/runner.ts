/**
 * The motion sequence runner: a separate OS process started by armgate (POST /sequences/start).
 * Each iteration moves to home, then to each waypoint in order, then home again, then waits the
 * delay (not after the last). Each point is a MoveToJoints or MoveToPose goal to the action named
 * on the command line; on the simulator the goals travel over the IPC channel of the process
 * that started the runner. Optionally records a rosbag2 (MCAP) bag of the given topics.
 * Exit codes: see EXIT in protocol.ts.
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import type { MotionResultMsg } from '../ros/messages.ts';
import { goalOf, type SequenceConfig, type SequencePoint } from './config.ts';
import { EXIT, type RunnerToServer, type ServerToRunner } from './protocol.ts';

interface BagSink {
  write(topic: string, message: unknown, logTimeNs: bigint): Promise<void>;
  close(): Promise<void>;
}

const log = (line: string) => process.stdout.write(`${line}\n`);
const warn = (line: string) => process.stderr.write(`${line}\n`);

let nextGoalId = 1;
const pending = new Map<number, (answer: ServerToRunner) => void>();
let bag: BagSink | undefined;
let bagWrites: Promise<void> = Promise.resolve();
let topicsReply: ((topics: readonly { name: string; type: string }[]) => void) | undefined;
let exiting = false;

function send(message: RunnerToServer): void {
  process.send?.(message);
}

async function finish(code: number, line?: string): Promise<never> {
  // The first reason to finish wins; later ones (a goal cancelled by the same stop) wait for it.
  if (exiting) return new Promise<never>(() => undefined);
  exiting = true;
  if (line) (code === EXIT.ok ? log : warn)(line);
  const closing = bag;
  bag = undefined;
  if (closing) {
    try {
      await bagWrites;
      await closing.close();
      log('bag closed');
    } catch (e) {
      warn(`could not close the bag: ${(e as Error).message}`);
      if (code === EXIT.ok) code = EXIT.bagFailed;
    }
  }
  process.exitCode = code;
  process.disconnect?.();
  // Leave nothing running: stop here even if a goal is still awaited.
  process.exit(code);
}

process.on('message', (raw: ServerToRunner) => {
  if (raw.type === 'stop') void finish(EXIT.terminated, 'stopped by armgate');
  else if (raw.type === 'result' || raw.type === 'no_server') pending.get(raw.id)?.(raw);
  else if (raw.type === 'topics') topicsReply?.(raw.topics);
  else if (raw.type === 'message' && bag) {
    const sink = bag;
    bagWrites = bagWrites.then(() => sink.write(raw.topic, raw.msg, BigInt(raw.receivedNs))).catch((e: unknown) => {
      warn(`bag write failed: ${(e as Error).message}`);
    });
  }
});
process.on('SIGTERM', () => void finish(EXIT.terminated, 'stopped by SIGTERM'));
process.on('SIGINT', () => void finish(EXIT.terminated, 'stopped by SIGINT'));
process.on('disconnect', () => void finish(EXIT.terminated, 'armgate went away: stopping'));

function sendGoal(action: string, point: SequencePoint): Promise<ServerToRunner> {
  const id = nextGoalId++;
  const { kind, goal } = goalOf(point);
  return new Promise((resolve) => {
    pending.set(id, (answer) => {
      pending.delete(id);
      resolve(answer);
    });
    send(kind === 'joints' ? { type: 'goal', id, action, kind, goal } : { type: 'goal', id, action, kind, goal });
  });
}

async function openBag(folder: string, topics: readonly string[]): Promise<void> {
  const offered = await new Promise<readonly { name: string; type: string }[]>((resolve) => {
    topicsReply = resolve;
    send({ type: 'subscribe', topics });
  });
  const { Rosbag2Writer } = await import('../bag/writer.ts');
  bag = await Rosbag2Writer.open(folder, offered);
  log(`recording ${offered.map((t) => t.name).join(', ')} to ${folder}`);
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function main(): Promise<void> {
  if (!process.send) await finish(EXIT.badArguments, 'the runner must be started by armgate (no IPC channel)');
  const { values } = parseArgs({
    options: {
      config: { type: 'string' },
      iterations: { type: 'string', default: '3' },
      delay: { type: 'string', default: '5' },
      bag: { type: 'string', default: '' },
      topics: { type: 'string', default: '' },
      'joints-action': { type: 'string', default: 'cobot/move_to_joints' },
      'pose-action': { type: 'string', default: 'cobot/move_to_pose' },
    },
  });
  const iterations = Number(values.iterations);
  const delayS = Number(values.delay);
  if (!values.config || !Number.isInteger(iterations) || iterations < 1 || !(delayS >= 0)) await finish(EXIT.badArguments, 'usage: runner --config FILE --iterations N --delay S');
  const config = JSON.parse(await readFile(values.config ?? '', 'utf8')) as SequenceConfig;
  const actions = { joints: values['joints-action'] ?? '', pose: values['pose-action'] ?? '' };
  if (values.bag) await openBag(values.bag, (values.topics ?? '').split(',').map((t) => t.trim()).filter((t) => t.length > 0));
  const route: { label: string; point: SequencePoint }[] = [
    { label: 'home', point: config.home },
    ...config.waypoints.map((point, k) => ({ label: `waypoint ${k + 1}`, point })),
    { label: 'home', point: config.home },
  ];
  log(`sequence started: ${iterations} iteration(s) of ${route.length} points, ${delayS} s between iterations`);
  for (let i = 1; i <= iterations; i++) {
    for (const { label, point } of route) {
      const kind = 'joints' in point ? 'joints' : 'pose';
      const action = kind === 'joints' ? actions.joints : actions.pose;
      send({ type: 'progress', iteration: i, iterations, point: label });
      log(`iteration ${i}/${iterations}: ${label} via ${action}`);
      const answer = await sendGoal(action, point);
      if (answer.type === 'no_server') await finish(EXIT.noActionServer, `iteration ${i}: ${label}: ${answer.message}`);
      const result = (answer as { result: MotionResultMsg }).result;
      if (!result.success) await finish(EXIT.motionFailed, `iteration ${i}: ${label} failed: ${result.message}`);
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
