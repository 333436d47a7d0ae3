/**
 * The test robot stack on a real ROS 2 graph: four nodes as the original stack has them
 * (joint_state_broadcaster, iiwa_arm_controller, move_group, iiwa_motion_server), each interface
 * wired to the simulated arm, the controller, move_group's services and the cobot server, with the
 * test hooks (events, faults) around every call. See README.md for the contract.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Arm } from './arm.ts';
import { CobotServer } from './cobot.ts';
import type { Emit, Faults, Iface } from './hooks.ts';
import {
  type ControllerGoal,
  FJT,
  type GoalEnd,
  type JointToleranceMsg,
  segmentTolerances,
  type TimeMsg,
  TrajectoryController,
  type TrajectoryMsg,
  seconds,
} from './jtc.ts';
import { at, groupStates, loadModel } from './model.ts';
import { CODE, MoveGroup, stampNow } from './moveit.ts';
import { plainGoal, type StackGoalHandle, type StackNode, type StackRcl } from './rcl.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../../..');

/** The data files the stack reads (all in the repository). */
export const FILES = {
  urdf: path.join(here, 'iiwa7-stack.urdf'),
  srdf: path.join(root, 'tests/fixtures/stack/install/share/iiwa_config/config/moveit/iiwa7.srdf'),
  limits: path.join(root, 'tests/fixtures/stack/install/share/iiwa_config/config/moveit/joint_limits.yaml'),
};

/** The fixed order of `--shuffle`. */
const SHUFFLED = [2, 0, 6, 4, 1, 5, 3];
/** The arm's pose at start: the SRDF's `home`... a little bent, so that IK and planning start off a singularity. */
const START = [0, 0.3, 0, -1.2, 0, 0.9, 0];

export interface StackOptions {
  readonly shuffle: boolean;
  /** cobot/stop also stops trajectories that did not come from the cobot server (not what the original does). */
  readonly stopAll: boolean;
  readonly faults: Faults;
  readonly emit: Emit;
  readonly log: (line: string) => void;
}

export interface Stack {
  state(): { positions: number[]; moving: boolean };
  set(positions: number[]): string | undefined;
  /** Aborts the goals in flight, gives their results a moment to leave, destroys the nodes. */
  shutdown(): Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const nowS = () => Date.now() / 1000;

type Msg = Record<string, unknown>;

export async function startStack(rcl: StackRcl, options: StackOptions): Promise<Stack> {
  const { faults, emit, log } = options;
  const urdf = readFileSync(FILES.urdf, 'utf8');
  const srdf = readFileSync(FILES.srdf, 'utf8');
  const model = loadModel(urdf, readFileSync(FILES.limits, 'utf8'));
  const arm = new Arm(model.limits, START);
  const controller = new TrajectoryController(model.jointNames, arm);
  const moveGroup = new MoveGroup(model, srdf, () => arm.positions, 'tcp');
  /** Goals in flight, by what ends each at shutdown. */
  const inFlight = new Set<() => void>();

  await rcl.init();
  rcl.removeSignalHandlers();
  const broadcaster = new rcl.Node('joint_state_broadcaster');
  const controllerNode = new rcl.Node('iiwa_arm_controller');
  const moveGroupNode = new rcl.Node('move_group');
  const motionNode = new rcl.Node('iiwa_motion_server');
  const nodes: StackNode[] = [broadcaster, controllerNode, moveGroupNode, motionNode];

  // move_group's parameters, served by rclnodejs's parameter services.
  moveGroupNode.declareParameter(new rcl.Parameter('robot_description', rcl.ParameterType.PARAMETER_STRING, urdf));
  moveGroupNode.declareParameter(
    new rcl.Parameter('robot_description_semantic', rcl.ParameterType.PARAMETER_STRING, srdf),
  );

  /** A service with the hooks: the event, then the fault (silent, late, abort/reject: a failure answer). */
  const serve = (
    node: StackNode,
    type: string,
    name: string,
    iface: Iface,
    failure: Msg,
    handler: (request: Msg) => Msg | Promise<Msg>,
  ) =>
    node.createService(type, name, {}, (request) => {
      emit({ event: 'service', iface });
      const fault = faults.get(iface);
      if (fault?.mode === 'silent') return undefined;
      if (fault?.mode === 'abort' || fault?.mode === 'reject') return failure;
      const answer = Promise.resolve(handler((request ?? {}) as Msg));
      if (fault?.mode !== 'late') return answer;
      return answer.then(async (r) => {
        await sleep(fault.delayS * 1000);
        return r;
      });
    });

  /** An action server with the hooks: goal event, silent/late goal responses, reject, accept-then-abort. */
  const action = (
    node: StackNode,
    type: string,
    name: string,
    iface: Iface,
    handlers: {
      check(goal: Msg): string | undefined;
      execute(handle: StackGoalHandle, goal: Msg): Promise<{ result: Msg; status: string; code: unknown }>;
      cancel(handle: StackGoalHandle): void;
      failure: Msg;
    },
  ) => {
    const execute = async (handle: StackGoalHandle): Promise<object> => {
      const goal = plainGoal(handle);
      if (faults.get(iface)?.mode === 'abort') {
        await sleep(50);
        settle(handle, 'aborted');
        emit({ event: 'result', iface, status: 'aborted', code: 'fault' });
        return handlers.failure;
      }
      const { result, status, code } = await handlers.execute(handle, goal);
      emit({ event: 'result', iface, status, code });
      return result;
    };
    const goalCallback = (goal: unknown): number => {
      if (faults.get(iface)?.mode === 'reject') {
        emit({ event: 'result', iface, status: 'rejected', code: 'fault' });
        return rcl.GoalResponse.REJECT;
      }
      const refused = handlers.check((goal ?? {}) as Msg);
      if (refused) {
        log(`${name}: goal rejected: ${refused}`);
        emit({ event: 'result', iface, status: 'rejected', code: refused });
        return rcl.GoalResponse.REJECT;
      }
      return rcl.GoalResponse.ACCEPT;
    };
    const cancelCallback = (handle?: StackGoalHandle): number => {
      emit({ event: 'cancel', iface });
      if (handle) setImmediate(() => handlers.cancel(handle));
      return rcl.CancelResponse.ACCEPT;
    };
    const server = new rcl.ActionServer(node, type, name, execute, goalCallback, undefined, cancelCallback);
    // The goal request itself: the event, and the silent and late faults (before rclnodejs answers it).
    const raw = server as unknown as {
      processGoalRequest(header: unknown, request: { goal?: { toPlainObject?: () => unknown } }): void;
      processCancelRequest(header: unknown, request: unknown): void;
    };
    // Every cancel request as it arrives, also for a goal that has already ended (rclnodejs calls the
    // cancel callback, and so emits `cancel`, only for a goal still cancelable).
    const originalCancel = raw.processCancelRequest.bind(server);
    raw.processCancelRequest = (header, request) => {
      emit({ event: 'cancel_request', iface });
      originalCancel(header, request);
    };
    const original = raw.processGoalRequest.bind(server);
    raw.processGoalRequest = (header, request) => {
      emit({ event: 'goal', iface, goal: request.goal?.toPlainObject?.() ?? null });
      const fault = faults.get(iface);
      if (fault?.mode === 'silent') return;
      if (fault?.mode === 'late') setTimeout(() => original(header, request), fault.delayS * 1000);
      else original(header, request);
    };
    return server;
  };

  // /joint_states at 100 Hz from the tick below.
  const jointStates = broadcaster.createPublisher('sensor_msgs/msg/JointState', '/joint_states');
  const order = options.shuffle ? SHUFFLED : model.jointNames.map((_, i) => i);

  // The controller: its topic and its FollowJointTrajectory action.
  controllerNode.createSubscription(
    'trajectory_msgs/msg/JointTrajectory',
    '/iiwa_arm_controller/joint_trajectory',
    {},
    (message) => {
      const msg = message as TrajectoryMsg;
      const last = msg.points?.[msg.points.length - 1];
      const duration = last ? seconds(last.time_from_start) : 0;
      if (faults.get('trajectory')?.mode === 'silent') {
        emit({
          event: 'trajectory',
          joint_names: msg.joint_names,
          points: msg.points?.length ?? 0,
          duration_s: duration,
          accepted: false,
          reason: 'fault: silent',
        });
        return;
      }
      const refused = controller.replace(msg, nowS());
      if (refused) log(`/iiwa_arm_controller/joint_trajectory: ${refused}`);
      emit({
        event: 'trajectory',
        joint_names: msg.joint_names,
        points: msg.points?.length ?? 0,
        duration_s: duration,
        accepted: refused === undefined,
        ...(refused ? { reason: refused } : {}),
      });
    },
  );
  const fjtGoals = new Map<StackGoalHandle, ControllerGoal>();
  const point = (s: { positions: number[]; velocities: number[] }) => ({
    positions: s.positions,
    velocities: s.velocities,
    accelerations: [],
    effort: [],
    time_from_start: { sec: 0, nanosec: 0 },
  });
  action(
    controllerNode,
    'control_msgs/action/FollowJointTrajectory',
    '/iiwa_arm_controller/follow_joint_trajectory',
    'follow_joint_trajectory',
    {
      failure: { error_code: FJT.INVALID_GOAL, error_string: 'fault injected: aborted' },
      check: (goal) => controller.check(goal.trajectory as TrajectoryMsg, nowS()),
      cancel: (handle) => {
        const goal = fjtGoals.get(handle);
        if (goal) controller.cancel(goal, nowS());
      },
      execute: (handle, goalMsg) =>
        new Promise((resolve) => {
          let lastFeedback = 0;
          const end = (e: GoalEnd) => {
            fjtGoals.delete(handle);
            inFlight.delete(stopOnShutdown);
            settle(handle, e.status);
            resolve({
              result: { error_code: e.errorCode, error_string: e.errorString },
              status: e.status,
              code: e.errorCode,
            });
          };
          const goal: ControllerGoal = {
            tolerances: segmentTolerances(
              model.jointNames,
              (goalMsg.path_tolerance ?? []) as JointToleranceMsg[],
              (goalMsg.goal_tolerance ?? []) as JointToleranceMsg[],
              (goalMsg.goal_time_tolerance ?? { sec: 0, nanosec: 0 }) as TimeMsg,
            ),
            feedback: (state) => {
              const t = nowS();
              // The action monitor publishes at action_monitor_rate (20 Hz in the original's config).
              if (t - lastFeedback < 0.05) return;
              lastFeedback = t;
              handle.publishFeedback({
                header: { stamp: stampNow(), frame_id: '' },
                joint_names: [...model.jointNames],
                desired: point(state.desired),
                actual: point(state.actual),
                error: point(state.error),
              });
            },
            finish: end,
          };
          const stopOnShutdown = () => controller.abort('the controller shut down', nowS());
          fjtGoals.set(handle, goal);
          inFlight.add(stopOnShutdown);
          controller.accept(goalMsg.trajectory as TrajectoryMsg, goal);
        }),
    },
  );

  // move_group's services.
  serve(
    moveGroupNode,
    'moveit_msgs/srv/GetPositionFK',
    '/compute_fk',
    'compute_fk',
    { error_code: { val: CODE.FAILURE } },
    (r) => moveGroup.computeFk(r),
  );
  serve(
    moveGroupNode,
    'moveit_msgs/srv/GetPositionIK',
    '/compute_ik',
    'compute_ik',
    { error_code: { val: CODE.FAILURE } },
    (r) => moveGroup.computeIk(r),
  );
  serve(
    moveGroupNode,
    'moveit_msgs/srv/GetMotionPlan',
    '/plan_kinematic_path',
    'plan_kinematic_path',
    { motion_plan_response: { error_code: { val: CODE.FAILURE, message: 'fault injected', source: 'test stack' } } },
    (r) => moveGroup.planKinematicPath(r),
  );
  serve(
    moveGroupNode,
    'moveit_msgs/srv/ApplyPlanningScene',
    '/apply_planning_scene',
    'apply_planning_scene',
    { success: false },
    (r) => {
      const { response, objects } = moveGroup.applyPlanningScene(r);
      emit({ event: 'planning_scene', objects });
      return response;
    },
  );

  // The cobot server (iiwa_planning's move_to_pose_server.py).
  const cobot = new CobotServer({
    model,
    moveGroup,
    controller,
    arm,
    groupStates: groupStates(model, srdf, 'iiwa_arm'),
    log,
    onShutdown: inFlight,
  });
  for (const [iface, type] of [
    ['move_to_joints', 'iiwa_msgs/action/MoveToJoints'],
    ['move_to_pose', 'iiwa_msgs/action/MoveToPose'],
  ] as const) {
    action(motionNode, type, `cobot/${iface}`, iface, {
      failure: { success: false, message: 'Выполнение траектории завершилось ошибкой' },
      check: () => undefined, // goal_callback=lambda _: GoalResponse.ACCEPT
      cancel: () => undefined, // the execution polls is_cancel_requested
      execute: async (handle, goal) => {
        const { status, success, message } = await (iface === 'move_to_joints'
          ? cobot.moveToJoints(handle, goal)
          : cobot.moveToPose(handle, goal));
        settle(handle, status);
        return { result: { success, message }, status, code: success };
      },
    });
  }
  serve(
    motionNode,
    'iiwa_msgs/srv/MoveToNamedPose',
    'cobot/move_to_named',
    'move_to_named',
    { success: false, message: 'fault injected' },
    async (r) => {
      const response = await cobot.moveToNamed(r);
      emit({ event: 'result', iface: 'move_to_named', status: 'answered', code: response.success });
      return response;
    },
  );
  serve(motionNode, 'std_srvs/srv/Trigger', 'cobot/stop', 'stop', { success: false, message: 'fault injected' }, () => {
    emit({ event: 'stop' });
    cobot.stop();
    if (options.stopAll) {
      for (const [handle, goal] of fjtGoals) {
        // The goal is cancelled by the server, not by its client: through CANCELING, as rcl_action requires.
        try {
          (handle as unknown as { _updateState?: (event: number) => void })._updateState?.(1);
        } catch {
          // Already terminal.
        }
        controller.cancel(goal, nowS());
      }
      controller.stopAll(nowS());
    }
    return { success: true, message: 'Выполнение траектории остановлено' };
  });

  // The control loop: 100 Hz, the controller commands the arm, the broadcaster publishes.
  let last = nowS();
  const tick = setInterval(() => {
    const t = nowS();
    const dt = Math.min(0.1, Math.max(0, t - last));
    last = t;
    controller.update(t, dt);
    if (faults.get('joint_states')?.mode === 'silent') return;
    jointStates.publish({
      header: { stamp: stampNow(), frame_id: '' },
      name: order.map((i) => at(model.jointNames, i)),
      position: order.map((i) => at(arm.positions, i)),
      velocity: order.map((i) => at(arm.velocities, i)),
      effort: order.map(() => 0),
    });
  }, 10);

  for (const node of nodes) node.spin();

  return {
    state: () => ({ positions: [...arm.positions], moving: arm.moving || controller.executing }),
    set: (positions) => {
      if (arm.moving || controller.executing || controller.hasGoal) return 'the arm is moving: set only at rest';
      if (!positions.every((p, i) => p >= at(model.limits, i).min && p <= at(model.limits, i).max))
        return 'positions: outside the joint limits';
      arm.set(positions);
      controller.hold();
      return undefined;
    },
    shutdown: async () => {
      for (const end of [...inFlight]) end();
      // The results of the aborted goals leave before the nodes go.
      await sleep(150);
      clearInterval(tick);
      for (const node of nodes) {
        try {
          node.destroy();
        } catch {
          // Already destroyed.
        }
      }
      try {
        rcl.shutdown();
      } catch {
        // Already shut down.
      }
    },
  };
}

/** Puts a goal handle in its terminal state (ignoring a transition rcl_action refuses, e.g. already terminal). */
export function settle(handle: StackGoalHandle, status: string): void {
  try {
    if (status === 'succeeded') handle.succeed();
    else if (status === 'canceled') handle.canceled();
    else handle.abort();
  } catch {
    try {
      handle.abort();
    } catch {
      // Terminal already.
    }
  }
}
