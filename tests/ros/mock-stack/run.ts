/**
 * A mock ROS 2 stack for the live suite (tests/ros/live.test.ts): armgate's simulator served on
 * a real ROS 2 graph through rclnodejs, under the names and types of the bundled endpoints file.
 * One node, /move_group, which
 *
 * - publishes /joint_states (sensor_msgs/msg/JointState) from the simulator;
 * - follows trajectories on /iiwa_arm_controller/joint_trajectory with the simulated controller;
 * - serves /compute_fk (moveit_msgs/srv/GetPositionFK) and /compute_ik (GetPositionIK), the link
 *   `tcp` (the real stack's TCP) as the simulator's own TCP, cobot/move_to_named
 *   (iiwa_msgs/srv/MoveToNamedPose) and cobot/stop (std_srvs/srv/Trigger);
 * - serves the actions cobot/move_to_joints and cobot/move_to_pose (iiwa_msgs/action/...), with
 *   feedback {state} and cancellation, and the controller's FollowJointTrajectory
 *   (control_msgs/action/FollowJointTrajectory, needs control_msgs);
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
import { abcFromQuat } from '../../../lib/kinematics/rotation.ts';
import {
  FJT_GOAL_TOLERANCE_VIOLATED,
  FJT_INVALID_GOAL,
  FJT_PATH_TOLERANCE_VIOLATED,
  FJT_SUCCESSFUL,
  type GetPositionIkRequest,
  MOVEIT_INVALID_LINK_NAME,
  MOVEIT_NO_IK_SOLUTION,
  MOVEIT_SUCCESS,
  type MotionResultMsg,
} from '../../../lib/ros/messages.ts';
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
  // The simulator's model has no link `tcp` (ros2 settings default to it): it serves that name as its flange.
  endpoints: {
    ...settings.endpoints,
    tcp_link: settings.endpoints.tcp_link === 'tcp' ? 'flange' : settings.endpoints.tcp_link,
  },
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
const {
  joint_states,
  trajectory,
  compute_fk,
  compute_ik,
  follow_joint_trajectory,
  move_to_joints,
  move_to_pose,
  move_to_named,
  stop,
} = config.endpoints.interfaces;
/** The real stack's TCP link name, which armgate asks for on ros2: served as the simulator's own TCP. */
const REAL_TCP = 'tcp';
const ownLink = (link: string) => (link === REAL_TCP ? config.endpoints.tcp_link : link);
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
  const asked = [...r.fk_link_names];
  sim.computeFk({ ...r, fk_link_names: asked.map(ownLink) }).then(
    (fk) =>
      response.send(
        fk.ok
          ? { ...fk.value, fk_link_names: asked, error_code: { val: fk.value.error_code.val } }
          : { error_code: { val: -1 } },
      ),
    () => response.send({ error_code: { val: -1 } }),
  );
});
node.createService(compute_ik.type, compute_ik.name, (request, response) => {
  const r = plainOf(request) as GetPositionIkRequest;
  const ik = r.ik_request;
  const link = ownLink(ik.ik_link_name || config.endpoints.tcp_link);
  const { position: p, orientation: o } = ik.pose_stamped.pose;
  const failed = (val: number) => ({ error_code: { val } });
  if (link !== config.endpoints.tcp_link) return response.send(failed(MOVEIT_INVALID_LINK_NAME));
  const { a, b, c } = abcFromQuat(o);
  const names = ik.robot_state.joint_state.name;
  const seed =
    names.length > 0
      ? config.endpoints.joint_names.map((n) => ik.robot_state.joint_state.position[names.indexOf(n)] ?? 0)
      : undefined;
  sim
    .solveIk({
      ...p,
      a,
      b,
      c,
      frame_id: ik.pose_stamped.header.frame_id,
      collision_check: ik.avoid_collisions,
      ...(seed ? { seed } : {}),
    })
    .then(
      (answer) =>
        response.send(
          answer.ok && answer.value.success && answer.value.joints
            ? {
                solution: { joint_state: { name: [...config.endpoints.joint_names], position: answer.value.joints } },
                error_code: { val: MOVEIT_SUCCESS },
              }
            : failed(MOVEIT_NO_IK_SOLUTION),
        ),
      () => response.send(failed(MOVEIT_NO_IK_SOLUTION)),
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

/** The controller's FollowJointTrajectory: the simulator's outcome as the action's status and error_code. */
new rcl.ActionServer(
  node,
  follow_joint_trajectory.type,
  follow_joint_trajectory.name,
  async (handle) => {
    const goal = goalOf(handle) as { trajectory: unknown };
    const msg = jointTrajectoryFromRos(goal.trajectory);
    if (!msg.ok) {
      handle.abort();
      return { error_code: FJT_INVALID_GOAL, error_string: msg.error };
    }
    const abort = new AbortController();
    const poll = setInterval(() => {
      if (handle.isCancelRequested) abort.abort('cancelled');
    }, 20);
    try {
      const outcome = await sim.executeTrajectory(msg.value, { signal: abort.signal });
      const o = outcome.ok ? outcome.value : { outcome: 'refused' as const, message: outcome.error.message };
      if (abort.signal.aborted || o.outcome === 'preempted') handle.canceled();
      else if (o.outcome === 'finished') handle.succeed();
      else handle.abort();
      const code =
        o.outcome === 'finished' || o.outcome === 'preempted'
          ? FJT_SUCCESSFUL
          : o.outcome === 'stopped'
            ? FJT_PATH_TOLERANCE_VIOLATED
            : o.outcome === 'timeout'
              ? FJT_GOAL_TOLERANCE_VIOLATED
              : FJT_INVALID_GOAL;
      return { error_code: code, error_string: o.message };
    } finally {
      clearInterval(poll);
    }
  },
  accept,
  undefined,
  accept,
);

node.spin();
process.stdout.write(
  `mock stack: /move_group serving ${[
    joint_states,
    trajectory,
    compute_fk,
    compute_ik,
    follow_joint_trajectory,
    move_to_joints,
    move_to_pose,
    move_to_named,
    stop,
  ]
    .map((i) => i.name)
    .join(', ')}\n`,
);
await new Promise<void>((resolve) => {
  process.once('SIGINT', () => resolve());
  process.once('SIGTERM', () => resolve());
});
node.destroy();
rcl.shutdown();
await sim.close();
