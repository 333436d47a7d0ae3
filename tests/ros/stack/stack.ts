/**
 * The test robot stack on a real ROS 2 graph: the real ros2_control stack (robot_state_publisher,
 * ros2_control_node with a mock iiwa 7, joint_state_broadcaster, joint_trajectory_controller as
 * `iiwa_arm_controller`: control.ts) and, in this process, the nodes the original stack runs beside it
 * (move_group's services and parameters, the cobot server `iiwa_motion_server`, whose executions are
 * FollowJointTrajectory goals of the real controller, as MoveIt's are), with the test hooks (events,
 * faults) around every call. See README.md for the contract.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CobotServer, type Execution, type TrajectoryExecutor } from './cobot.ts';
import {
  BROADCASTER,
  CONTROLLER,
  ControllerManager,
  type ControlProcesses,
  controllersYaml,
  startControlProcesses,
  until,
  withRos2Control,
} from './control.ts';
import { startServoImitation } from './servo.ts';
import type { Emit, Faults, Iface } from './hooks.ts';
import { at, groupStates, loadModel } from './model.ts';
import { CODE, MoveGroup } from './moveit.ts';
import { plainGoal, type StackGoalHandle, type StackNode, type StackRcl } from './rcl.ts';
import { duration, FJT, type GoalEnd, seconds, type TrajectoryMsg } from './trajectory.ts';

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
/** Below this speed (rad/s) every joint counts as at rest. */
const AT_REST = 1e-3;
/** The controller's interfaces. */
const FJT_ACTION = `/${CONTROLLER}/follow_joint_trajectory`;
const TRAJECTORY_TOPIC = `/${CONTROLLER}/joint_trajectory`;
/** action_msgs/msg/GoalStatus values. */
const STATUS = { ACCEPTED: 1, EXECUTING: 2, CANCELING: 3, SUCCEEDED: 4, CANCELED: 5, ABORTED: 6 } as const;
const TERMINAL: Record<number, GoalEnd['status']> = { 4: 'succeeded', 5: 'canceled', 6: 'aborted' };
/** The arm's pose at start: the SRDF's `home`... a little bent, so that IK and planning start off a singularity. */
const START = [0, 0.3, 0, -1.2, 0, 0.9, 0];

export interface StackOptions {
  readonly shuffle: boolean;
  /** cobot/stop also stops trajectories that did not come from the cobot server (not what the original does). */
  readonly stopAll: boolean;
  readonly faults: Faults;
  /** A MoveIt Servo imitation (servo.ts) runs too. */
  readonly servo?: boolean;
  readonly emit: Emit;
  readonly log: (line: string) => void;
}

export interface Stack {
  state(): { positions: number[]; moving: boolean };
  /** Moves the arm there at once through the controller (a 0.2 s goal of the stack's own); resolves when there. */
  set(positions: number[]): Promise<string | undefined>;
  /** A fault on an interface of the real controller: what it does to it, or why it cannot. */
  fault(iface: Iface, on: boolean): Promise<string | undefined>;
  /** Aborts the goals in flight, gives their results a moment to leave, destroys the nodes. */
  shutdown(): Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

type Msg = Record<string, unknown>;

const hex = (uuid: ArrayLike<number>) => Buffer.from(Array.from(uuid, Number)).toString('hex');

interface JointStateMsg {
  readonly name: readonly string[];
  readonly position: ArrayLike<number>;
  readonly velocity: ArrayLike<number>;
}

interface StatusMsg {
  readonly status_list: readonly { goal_info: { goal_id: { uuid: ArrayLike<number> } }; status: number }[];
}

/** rclnodejs's action client as the stack uses it (types/action_client.d.ts). */
interface StackClientGoalHandle {
  isAccepted(): boolean;
  readonly status: number;
  getResult(): Promise<unknown>;
  cancelGoal(): Promise<unknown>;
}
interface StackActionClient {
  waitForServer(timeoutMs?: number): Promise<boolean>;
  sendGoal(goal: object, feedback?: (f: unknown) => void, goalUuid?: object): Promise<StackClientGoalHandle>;
}
type RclWithClient = StackRcl & {
  ActionClient: new (node: StackNode, type: string, name: string) => StackActionClient;
};

export async function startStack(rcl: StackRcl, options: StackOptions): Promise<Stack> {
  const { faults, emit, log } = options;
  const urdf = readFileSync(FILES.urdf, 'utf8');
  const srdf = readFileSync(FILES.srdf, 'utf8');
  const model = loadModel(urdf, readFileSync(FILES.limits, 'utf8'));
  const order = options.shuffle ? SHUFFLED : model.jointNames.map((_, i) => i);
  /** The arm as the real /joint_states says (joint1..joint7); START until the first message. */
  const arm = { positions: [...START], velocities: START.map(() => 0), received: 0 };
  const current = () => arm.positions;
  const moveGroup = new MoveGroup(model, srdf, current, 'tcp');
  /** Goals in flight, by what ends each at shutdown. */
  const inFlight = new Set<() => void>();

  // The real controller: robot_state_publisher (the URDF with its ros2_control tags on /robot_description,
  // which controller_manager reads) and ros2_control_node; the joints in the ros2_control block and the
  // broadcaster's list in the order /joint_states names them.
  const described = withRos2Control(urdf, model, START, order);
  const control: ControlProcesses = startControlProcesses(
    described,
    controllersYaml(
      model.jointNames,
      order.map((i) => at(model.jointNames, i)),
    ),
    log,
    (text) => emit({ event: 'controller_error', text }),
  );

  await rcl.init();
  rcl.removeSignalHandlers();
  const moveGroupNode = new rcl.Node('move_group');
  const motionNode = new rcl.Node('iiwa_motion_server');
  // The stack's own node: controller_manager's client (the spawner's part), the observer of the
  // controller's interfaces (its topic, its action's status) and MoveIt's execution client.
  const stackNode = new rcl.Node('armgate_test_stack');
  const nodes: StackNode[] = [moveGroupNode, motionNode, stackNode];
  if (options.servo) nodes.push(startServoImitation(rcl, emit));
  // move_group's parameters, served by rclnodejs's parameter services: the URDF as the controller has it.
  moveGroupNode.declareParameter(new rcl.Parameter('robot_description', rcl.ParameterType.PARAMETER_STRING, described));
  moveGroupNode.declareParameter(
    new rcl.Parameter('robot_description_semantic', rcl.ParameterType.PARAMETER_STRING, srdf),
  );
  for (const node of nodes) node.spin();

  const shutdownControl = async () => {
    await control.stop(1000);
  };
  const manager = new ControllerManager(stackNode);
  try {
    await manager.activate([BROADCASTER, CONTROLLER]);
  } catch (e) {
    await shutdownControl();
    throw e;
  }
  control.filesRead();

  // /joint_states from the real broadcaster: the arm's state for the stack's own parts.
  stackNode.createSubscription('sensor_msgs/msg/JointState', '/joint_states', {}, (message) => {
    const msg = message as JointStateMsg;
    model.jointNames.forEach((name, i) => {
      const k = msg.name.indexOf(name);
      if (k < 0) return;
      arm.positions[i] = Number(msg.position[k]);
      arm.velocities[i] = k < msg.velocity.length ? Number(msg.velocity[k]) : 0;
    });
    arm.received++;
  });

  // The controller's topic, observed: each message as an event at once; what the controller logs at ERROR
  // (e.g. a trajectory it ignores) as an event of its own, whenever it comes (no window to guess under load).
  stackNode.createSubscription('trajectory_msgs/msg/JointTrajectory', TRAJECTORY_TOPIC, {}, (message) => {
    const msg = message as TrajectoryMsg;
    const last = msg.points?.[msg.points.length - 1];
    emit({
      event: 'trajectory',
      joint_names: msg.joint_names,
      points: msg.points?.length ?? 0,
      duration_s: last ? seconds(last.time_from_start) : 0,
    });
  });

  // The controller's action, observed through its status topic: a goal seen for the first time, its
  // cancel (CANCELING), its end. The goals MoveIt (the cobot server) and `set` send are the stack's own.
  const ownGoals = new Set<string>();
  const goalStatus = new Map<string, number>();
  const activeGoals = () => [...goalStatus.values()].some((s) => TERMINAL[s] === undefined);
  stackNode.createSubscription('action_msgs/msg/GoalStatusArray', `${FJT_ACTION}/_action/status`, {}, (message) => {
    for (const s of (message as StatusMsg).status_list) {
      const id = hex(s.goal_info.goal_id.uuid);
      const before = goalStatus.get(id);
      goalStatus.set(id, s.status);
      if (ownGoals.has(id) || before === s.status) continue;
      if (before === undefined) emit({ event: 'goal', iface: 'follow_joint_trajectory', goal: null });
      if (s.status === STATUS.CANCELING) {
        emit({ event: 'cancel_request', iface: 'follow_joint_trajectory' });
        emit({ event: 'cancel', iface: 'follow_joint_trajectory' });
      }
      const end = TERMINAL[s.status];
      if (end && (before === undefined || TERMINAL[before] === undefined))
        emit({
          event: 'result',
          iface: 'follow_joint_trajectory',
          status: end,
          code: end === 'succeeded' ? FJT.SUCCESSFUL : null,
        });
    }
  });

  // MoveIt's execution: FollowJointTrajectory goals of the real controller.
  const fjt = new (rcl as RclWithClient).ActionClient(
    stackNode,
    'control_msgs/action/FollowJointTrajectory',
    FJT_ACTION,
  );
  const executor: TrajectoryExecutor = {
    send(trajectory: TrajectoryMsg): Execution {
      const uuid = randomBytes(16);
      ownGoals.add(uuid.toString('hex'));
      const handle = fjt.sendGoal(
        {
          trajectory,
          multi_dof_trajectory: { header: trajectory.header, joint_names: [], points: [] },
          path_tolerance: [],
          component_path_tolerance: [],
          goal_tolerance: [],
          component_goal_tolerance: [],
          goal_time_tolerance: { sec: 0, nanosec: 0 },
        },
        undefined,
        { uuid: Array.from(uuid) },
      );
      const ended = handle.then(
        async (h): Promise<GoalEnd> => {
          if (!h.isAccepted()) return { status: 'aborted', errorCode: FJT.INVALID_GOAL, errorString: 'goal rejected' };
          const result = (await h.getResult()) as { error_code?: number; error_string?: string } | undefined;
          return {
            status: TERMINAL[h.status] ?? 'aborted',
            errorCode: Number(result?.error_code ?? FJT.INVALID_GOAL),
            errorString: String(result?.error_string ?? ''),
          };
        },
        (e: Error): GoalEnd => ({ status: 'aborted', errorCode: FJT.INVALID_GOAL, errorString: e.message }),
      );
      return {
        cancel: () => void handle.then((h) => h.cancelGoal()).catch(() => undefined),
        ended,
      };
    },
  };
  if (!(await fjt.waitForServer(20_000))) {
    await shutdownControl();
    throw new Error(`${FJT_ACTION}: the controller's action server did not appear`);
  }
  try {
    await until(() => arm.received > 0, 20_000, '/joint_states from the joint_state_broadcaster');
  } catch (e) {
    await shutdownControl();
    throw e;
  }

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
      _executeCancelRequest(header: unknown, request: unknown): Promise<void>;
      _sendResultResponse(header: unknown, result: unknown): void;
    };
    // A response that cannot be sent is dropped with a warning, as rclcpp_action's server does: Cyclone DDS
    // refuses to send one (RCL_RET_TIMEOUT, "error not set") when the server has not matched the client's
    // response reader within 100 ms (a client created just before its request, on a loaded machine).
    // rclnodejs throws it from its executor, which ended the whole stack process (terminate).
    const dropped = (what: string, send: () => unknown) => {
      try {
        const sent = send();
        if (sent instanceof Promise) sent.catch((e: Error) => log(`${name}: failed to send ${what}: ${e.message}`));
      } catch (e) {
        log(`${name}: failed to send ${what}: ${(e as Error).message}`);
      }
    };
    const cancelResponse = raw._executeCancelRequest.bind(server);
    raw._executeCancelRequest = (header, request) => {
      dropped('cancel response', () => cancelResponse(header, request));
      return Promise.resolve();
    };
    const resultResponse = raw._sendResultResponse.bind(server);
    raw._sendResultResponse = (header, result) => dropped('result response', () => resultResponse(header, result));
    // Every cancel request as it arrives, also for a goal that has already ended (rclnodejs calls the
    // cancel callback, and so emits `cancel`, only for a goal still cancelable).
    const originalCancel = raw.processCancelRequest.bind(server);
    raw.processCancelRequest = (header, request) => {
      emit({ event: 'cancel_request', iface });
      originalCancel(header, request);
    };
    // A goal whose response was dropped stays accepted and is not executed (rclcpp_action neither executes it).
    const processGoal = raw.processGoalRequest.bind(server);
    const original = (header: unknown, request: Parameters<typeof processGoal>[1]) =>
      dropped('goal response', () => processGoal(header, request));
    raw.processGoalRequest = (header, request) => {
      emit({ event: 'goal', iface, goal: request.goal?.toPlainObject?.() ?? null });
      const fault = faults.get(iface);
      if (fault?.mode === 'silent') return;
      if (fault?.mode === 'late') setTimeout(() => original(header, request), fault.delayS * 1000);
      else original(header, request);
    };
    return server;
  };

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
    executor,
    current,
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
  // --stop-all: every goal of the controller cancelled (a zero goal id and stamp: all, as CancelGoal says),
  // a trajectory on its topic stopped by a hold point where the arm comes to rest.
  const cancelAll = (
    stackNode as StackNode & {
      createClient(type: string, name: string): { sendRequest(request: object, callback: (r: unknown) => void): void };
    }
  ).createClient('action_msgs/srv/CancelGoal', `${FJT_ACTION}/_action/cancel_goal`);
  const hold = stackNode.createPublisher('trajectory_msgs/msg/JointTrajectory', TRAJECTORY_TOPIC);
  const holdHere = () => {
    const t = 0.1;
    hold.publish({
      header: { stamp: { sec: 0, nanosec: 0 }, frame_id: '' },
      joint_names: [...model.jointNames],
      points: [
        {
          positions: arm.positions.map((q, i) => q + (at(arm.velocities, i) * t) / 2),
          velocities: model.jointNames.map(() => 0),
          accelerations: [],
          effort: [],
          time_from_start: duration(t),
        },
      ],
    });
  };
  serve(motionNode, 'std_srvs/srv/Trigger', 'cobot/stop', 'stop', { success: false, message: 'fault injected' }, () => {
    emit({ event: 'stop' });
    cobot.stop();
    if (options.stopAll) {
      cancelAll.sendRequest(
        { goal_info: { goal_id: { uuid: new Array(16).fill(0) }, stamp: { sec: 0, nanosec: 0 } } },
        () => undefined,
      );
      holdHere();
    }
    return { success: true, message: 'Выполнение траектории остановлено' };
  });

  const moving = () => arm.velocities.some((v) => Math.abs(v) > AT_REST) || activeGoals();
  return {
    state: () => ({ positions: [...arm.positions], moving: moving() }),
    set: async (positions) => {
      if (moving()) return 'the arm is moving: set only at rest';
      if (!positions.every((p, i) => p >= at(model.limits, i).min && p <= at(model.limits, i).max))
        return 'positions: outside the joint limits';
      // Within the velocity limits the mock arm keeps (the controller manager enforces the URDF's).
      const t = Math.max(
        0.2,
        ...positions.map((p, i) => (1.2 * Math.abs(p - at(arm.positions, i))) / at(model.limits, i).velocity),
      );
      const end = await executor.send({
        header: { stamp: { sec: 0, nanosec: 0 } },
        joint_names: [...model.jointNames],
        points: [
          {
            positions,
            velocities: positions.map(() => 0),
            accelerations: [],
            effort: [],
            time_from_start: duration(t),
          },
        ],
      }).ended;
      return end.status === 'succeeded' ? undefined : `the controller ended the move ${end.status}: ${end.errorString}`;
    },
    fault: async (iface, on) => {
      if (iface === 'joint_states') {
        // The broadcaster deactivated: nothing is published on /joint_states, as a silent topic.
        await manager.switch(on ? [] : [BROADCASTER], on ? [BROADCASTER] : []);
        return undefined;
      }
      return on
        ? `${iface} is the real controller's: no fault can be injected there (joint_states: silent only)`
        : undefined;
    },
    shutdown: async () => {
      for (const end of [...inFlight]) end();
      // The results of the aborted goals leave before the nodes go; the controller ends meanwhile.
      await Promise.all([sleep(150), shutdownControl()]);
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
