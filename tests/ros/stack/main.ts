/**
 * The test robot stack's process: `node --import tsx tests/ros/stack/main.ts [--shuffle]
 * [--stop-all] [--servo] [--fault NAME=MODE]...` in a shell with the ROS 2 environment (scripts/ros2/env.sh).
 * stdout: JSON lines only (events); stdin: JSON lines of commands; stderr: diagnostics. Exits 0 on
 * SIGTERM, SIGINT or the end of stdin (its parent gone), aborting the goals in flight.
 */
import { fstatSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { CONTROLLER_IFACES, type CommandTarget, emitStdout, Faults, handleCommand, IFACES } from './hooks.ts';
import { at } from './model.ts';
import { loadRcl } from './rcl.ts';
import { type Stack, startStack } from './stack.ts';

const log = (line: string) => process.stderr.write(`test-stack: ${line}\n`);

function usage(problem: string): never {
  log(problem);
  log('usage: main.ts [--shuffle] [--stop-all] [--servo] [--fault NAME=silent|abort|reject|late:SECONDS]...');
  log(`NAME: ${IFACES.join(', ')}`);
  process.exit(2);
}

const faults = new Faults();
let shuffle = false;
let stopAll = false;
let servo = false;
const args = process.argv.slice(2);
for (let i = 0; i < args.length; i++) {
  const arg = at(args, i);
  if (arg === '--shuffle') shuffle = true;
  else if (arg === '--stop-all') stopAll = true;
  else if (arg === '--servo') servo = true;
  else if (arg === '--fault' || arg.startsWith('--fault=')) {
    const value = arg === '--fault' ? args[++i] : arg.slice('--fault='.length);
    if (!value) usage('--fault needs NAME=MODE');
    const problem = faults.setFromFlag(value);
    if (problem) usage(problem);
  } else usage(`unknown argument ${arg}`);
}

let stack: Stack | undefined;
let exiting = false;
async function exit(why: string): Promise<void> {
  if (exiting) return;
  exiting = true;
  log(`${why}: shutting down`);
  // However the shutdown goes, the process ends promptly.
  setTimeout(() => process.exit(0), 2000).unref();
  try {
    await stack?.shutdown();
  } catch (e) {
    log(`shutdown: ${(e as Error).message}`);
  }
  process.exit(0);
}
process.on('SIGTERM', () => void exit('SIGTERM'));
process.on('SIGINT', () => void exit('SIGINT'));
process.stdout.on('error', () => void exit('stdout closed'));

// Commands come through a pipe (a test's): its end is the parent's end. A terminal, /dev/null or a
// file (the stack started by hand, `&` in a shell) is not read: signals end the stack then.
const stdinIsPipe = (() => {
  try {
    const stat = fstatSync(0);
    return stat.isFIFO() || stat.isSocket();
  } catch {
    return false;
  }
})();
const pending: string[] = [];
/** Commands run one after another, each answered in order (a `set` waits for its motion). */
let queue: Promise<void> = Promise.resolve();
const run = (line: string, running: Stack) => {
  const target: CommandTarget = {
    faults,
    state: () => running.state(),
    set: (p) => running.set(p),
    fault: (iface, on) => running.fault(iface, on),
  };
  queue = queue.then(async () => {
    for (const event of await handleCommand(line, target)) emitStdout(event);
  });
};
const lines = stdinIsPipe ? createInterface({ input: process.stdin }) : undefined;
if (!lines) log('stdin is not a pipe: no commands are read; SIGTERM or SIGINT ends the stack');
lines?.on('close', () => void exit('stdin closed'));
lines?.on('line', (line) => {
  if (line.trim() === '') return;
  if (!stack) pending.push(line);
  else run(line, stack);
});

try {
  const rcl = await loadRcl();
  stack = await startStack(rcl, { shuffle, stopAll, servo, faults, emit: emitStdout, log });
  // The faults of the flags on the real controller's interfaces.
  for (const iface of faults.keys().filter((i) => CONTROLLER_IFACES.includes(i))) {
    const refused = await stack.fault(iface, true);
    if (refused) throw new Error(`--fault ${iface}: ${refused}`);
  }
} catch (e) {
  log(
    `cannot start: ${(e as Error).message.split('\n')[0]} (is the ROS 2 environment sourced: . scripts/ros2/env.sh, with the ros2_control overlay, and rclnodejs built: npm run ros2:build?)`,
  );
  await stack?.shutdown().catch(() => undefined);
  process.exit(1);
}
const ready = stack;
emitStdout({
  event: 'ready',
  pid: process.pid,
  domain_id: Number(process.env.ROS_DOMAIN_ID ?? 0),
  nodes: [
    '/joint_state_broadcaster',
    '/iiwa_arm_controller',
    '/controller_manager',
    '/robot_state_publisher',
    '/move_group',
    '/iiwa_motion_server',
    ...(servo ? ['/servo_node'] : []),
  ],
  shuffle,
  stop_all: stopAll,
  servo,
  faults: Object.fromEntries(IFACES.flatMap((i) => (faults.get(i) ? [[i, faults.get(i)]] : []))),
});
for (const line of pending.splice(0)) run(line, ready);
