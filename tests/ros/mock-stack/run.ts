/**
 * A mock ROS 2 stack for the live suite (tests/ros/live.test.ts): armgate's simulator served on
 * a real ROS 2 graph through rclnodejs, under the names and types of the bundled endpoints file.
 * One node, /move_group, which
 *
 * - publishes /joint_states (sensor_msgs/msg/JointState) from the simulator;
 * - follows trajectories on /iiwa_arm_controller/joint_trajectory with the simulated controller;
 * - serves /compute_fk (moveit_msgs/srv/GetPositionFK), cobot/move_to_named
 *   (iiwa_msgs/srv/MoveToNamedPose) and cobot/stop (std_srvs/srv/Trigger);
 * - serves the actions cobot/move_to_joints and cobot/move_to_pose (iiwa_msgs/action/...), with
 *   feedback {state} and cancellation;
 * - holds the SRDF as its parameter robot_description_semantic.
 *
 * Needs a sourced ROS 2 with moveit_msgs, the iiwa_msgs package beside this file built and
 * sourced, and rclnodejs installed after both (README: "Deploying next to a ROS 2 stack").
 * Run: npx tsx tests/ros/mock-stack/run.ts [--settings FILE]   (Ctrl-C stops it)
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { jointTrajectoryFromRos, plainOf } from '../../../lib/ros/convert.ts';
import type { MotionResultMsg } from '../../../lib/ros/messages.ts';
import { loadRclnodejs } from '../../../lib/ros/rcl-load.ts';
import { parseGroupStates } from '../../../lib/robot/srdf.ts';
import { loadConfig } from '../../../lib/settings/load.ts';
import { PROJECT_ROOT, resolveFileRef } from '../../../lib/settings/resolve.ts';
import { SimContext } from '../../../lib/sim/context.ts';
import { goalOf, type ServerGoalHandle, type ServerModule } from './server-api.ts';

const ACCEPT = 2; // rclnodejs GoalResponse.ACCEPT and CancelResponse.ACCEPT

const fail = (message: string): never => {
  process.stderr.write(`mock stack: ${message}\n`);
  process.exit(1);
};

const { values } = parseArgs({
  options: { settings: { type: 'string', default: path.join(PROJECT_ROOT, 'settings.yaml') } },
});
const loaded = await loadConfig(values.settings ?? '');
if (!loaded.ok) fail(loaded.error);
const outcome = loaded.ok ? loaded.value : undefined;
if (outcome?.kind !== 'serve') fail('the settings disable the web block');
const settings = outcome?.kind === 'serve' ? outcome.config : fail('no settings');
// The simulator needs the SRDF as a file: the endpoints file's, or the bundled one.
const srdfRef = 'file' in settings.endpoints.srdf ? settings.endpoints.srdf.file : 'pkg://armgate/srdf/iiwa7.srdf';
const srdfFile = await resolveFileRef(
  srdfRef,
  path.join(PROJECT_ROOT, 'share/armgate/config'),
  process.env.AMENT_PREFIX_PATH,
);
const srdfXml = srdfFile.ok ? await readFile(srdfFile.value, 'utf8') : fail(srdfFile.error);
const states = parseGroupStates(srdfXml, settings.endpoints.planning_group, settings.endpoints.joint_names);
const config = {
  ...settings,
  robot: { ...settings.robot, backend: 'sim' as const },
  groupStates: states.ok ? states.value : fail(states.error),
};
const module = await loadRclnodejs(process.env);
if (!module.ok) fail(module.error);
const rcl = (module.ok ? module.value : fail('no rclnodejs')) as unknown as ServerModule;
if (typeof rcl.ActionServer !== 'function' || typeof rcl.Parameter !== 'function')
  fail('this rclnodejs has no ActionServer or Parameter');

const sim = await SimContext.create(config);
await rcl.init();
const node = new rcl.Node('move_group');
const { joint_states, trajectory, compute_fk, move_to_joints, move_to_pose, move_to_named, stop } =
  config.endpoints.interfaces;
node.declareParameter(new rcl.Parameter('robot_description_semantic', rcl.ParameterType.PARAMETER_STRING, srdfXml));

const jointStates = node.createPublisher(joint_states.type, joint_states.name);
sim.subscribe(joint_states.name, (msg) => jointStates.publish(msg as object));
node.createSubscription(trajectory.type, trajectory.name, { enableTypedArray: true }, (raw) => {
  const msg = jointTrajectoryFromRos(raw);
  if (msg.ok) void sim.publishTrajectory(msg.value);
  else process.stderr.write(`mock stack: ignoring a malformed trajectory: ${msg.error}\n`);
});

const answer = (
  result: { ok: true; value: MotionResultMsg } | { ok: false; error: { message: string } },
): MotionResultMsg => (result.ok ? result.value : { success: false, message: result.error.message });

node.createService(compute_fk.type, compute_fk.name, (request, response) => {
  const r = plainOf(request) as Parameters<SimContext['computeFk']>[0];
  sim.computeFk(r).then(
    (fk) =>
      response.send(
        fk.ok ? { ...fk.value, error_code: { val: fk.value.error_code.val } } : { error_code: { val: -1 } },
      ),
    () => response.send({ error_code: { val: -1 } }),
  );
});
node.createService(move_to_named.type, move_to_named.name, (request, response) => {
  const r = plainOf(request) as { name: string; speed: number; accel_scale: number };
  sim.moveToNamed(r).then(
    (result) => response.send(answer(result)),
    (e: unknown) => response.send({ success: false, message: String(e) }),
  );
});
node.createService(stop.type, stop.name, (_request, response) => {
  sim.callStop().then(
    (result) => response.send(answer(result)),
    (e: unknown) => response.send({ success: false, message: String(e) }),
  );
});

/** Runs a goal on the simulator; a cancel request aborts it (polled, as rclnodejs's server goal handles offer no event). */
async function execute(
  handle: ServerGoalHandle,
  run: (options: { signal: AbortSignal; onFeedback: (state: string) => void }) => Promise<MotionResultMsg>,
): Promise<object> {
  const abort = new AbortController();
  const poll = setInterval(() => {
    if (handle.isCancelRequested) abort.abort('cancelled');
  }, 20);
  try {
    const result = await run({ signal: abort.signal, onFeedback: (state) => handle.publishFeedback({ state }) });
    if (abort.signal.aborted) handle.canceled();
    else if (result.success) handle.succeed();
    else handle.abort();
    return result;
  } finally {
    clearInterval(poll);
  }
}

const accept = () => ACCEPT;
new rcl.ActionServer(
  node,
  move_to_joints.type,
  move_to_joints.name,
  (handle) =>
    execute(handle, async (options) => {
      const goal = goalOf(handle) as { joints: number[]; speed: number };
      return answer(await sim.moveToJoints(goal, options));
    }),
  accept,
  undefined,
  accept,
);
new rcl.ActionServer(
  node,
  move_to_pose.type,
  move_to_pose.name,
  (handle) =>
    execute(handle, async (options) => {
      const goal = goalOf(handle) as Parameters<SimContext['moveToPose']>[0];
      return answer(await sim.moveToPose(goal, options));
    }),
  accept,
  undefined,
  accept,
);

node.spin();
process.stdout.write(
  `mock stack: /move_group serving ${[joint_states, trajectory, compute_fk, move_to_joints, move_to_pose, move_to_named, stop].map((i) => i.name).join(', ')}\n`,
);
await new Promise<void>((resolve) => {
  process.once('SIGINT', () => resolve());
  process.once('SIGTERM', () => resolve());
});
node.destroy();
rcl.shutdown();
await sim.close();
