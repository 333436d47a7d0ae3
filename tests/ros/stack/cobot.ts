/**
 * The original stack's cobot server (lightweight-cobot, iiwa_planning/scripts/move_to_pose_server.py
 * on its dev branch) as it behaves: every goal accepted; feedback "planning" then "executing"
 * before planning; speed clamped to [0.01, 1]; a failed plan aborts (success false); a cancel stops
 * the execution and ends CANCELED ("canceled"); an execution that ends any other way, stopped by
 * cobot/stop or preempted by another trajectory included, SUCCEEDS with success true (the server
 * checks only for an exception); move_to_named plans and executes inside the service call and
 * answers when the motion has ended; cobot/stop stops what the server (MoveIt) executes, nothing
 * else. MoveIt's execution is a FollowJointTrajectory goal of the real controller (the executor).
 */
import { at, axisAngle, compose, quatMul, type RobotModel } from './model.ts';
import { poseFromMsg, type MoveGroup } from './moveit.ts';
import { planJointPath, type PlannedPoint } from './planner.ts';
import type { StackGoalHandle } from './rcl.ts';
import { duration, type GoalEnd, type TrajectoryMsg } from './trajectory.ts';

/** move_to_pose_server.py's planner table: the pipelines' planning times. */
const PLANNERS: Record<string, number> = { ompl: 10, ptp: 2, lin: 2, circ: 2, chomp: 10 };
/** MoveIt's trajectory execution manager: how far the start may be from the current state (rad). */
const ALLOWED_START_TOLERANCE = 0.01;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const nowS = () => Date.now() / 1000;

/** One trajectory MoveIt sent to the controller (a FollowJointTrajectory goal). */
export interface Execution {
  /** Cancels the goal (MoveIt's stop_execution). */
  cancel(): void;
  /** How the controller ended it (a rejected goal: aborted). */
  readonly ended: Promise<GoalEnd>;
}

/** What executes trajectories: MoveIt's controller manager, a FollowJointTrajectory client of the controller. */
export interface TrajectoryExecutor {
  send(trajectory: TrajectoryMsg): Execution;
}

export interface CobotDeps {
  readonly model: RobotModel;
  readonly moveGroup: MoveGroup;
  readonly executor: TrajectoryExecutor;
  /** The arm's current joint positions (the latest /joint_states), joint1..joint7. */
  readonly current: () => readonly number[];
  readonly groupStates: ReadonlyMap<string, number[]>;
  readonly log: (line: string) => void;
  /** Where an execution in flight registers what ends it at shutdown. */
  readonly onShutdown: Set<() => void>;
}

export interface CobotOutcome {
  readonly status: 'succeeded' | 'aborted' | 'canceled';
  readonly success: boolean;
  readonly message: string;
}

type Msg = Record<string, unknown>;
const num = (v: unknown) => (typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : Number.NaN);
/** max(0.01, min(1.0, float(speed))) as Python computes it (NaN: min(1.0, nan) is 1.0). */
const clampSpeed = (v: number) => (Number.isNaN(v) ? 1 : Math.max(0.01, Math.min(1, v)));

export class CobotServer {
  /** What MoveIt is executing: the controller goals it sent. */
  private readonly executions = new Set<Execution>();

  private readonly deps: CobotDeps;

  constructor(deps: CobotDeps) {
    this.deps = deps;
  }

  /** cobot/stop: MoveIt's stop_execution cancels the controller goals MoveIt sent. */
  stop(): void {
    for (const execution of [...this.executions]) execution.cancel();
  }

  /** A plan's points as the trajectory MoveIt sends to the controller. */
  private trajectory(points: readonly PlannedPoint[]): TrajectoryMsg {
    return {
      header: { stamp: { sec: 0, nanosec: 0 } },
      joint_names: [...this.deps.model.jointNames],
      points: points.map((p) => ({
        positions: p.positions,
        velocities: p.velocities,
        accelerations: p.accelerations,
        effort: [],
        time_from_start: duration(p.t),
      })),
    };
  }

  /**
   * MoveIt executes a plan: a goal to the controller, watched for cancel (polled every 50 ms as the
   * server does) and for its duration (allowed_execution_duration_scaling 1.1 + 0.5 s margin).
   * Resolves with how the controller ended it.
   */
  private execute(points: readonly PlannedPoint[], cancelled: () => boolean): Promise<GoalEnd | 'canceled-by-client'> {
    const { executor, current } = this.deps;
    const first = at(points, 0);
    const now = current();
    if (first.positions.some((p, i) => Math.abs(p - at(now, i)) > ALLOWED_START_TOLERANCE))
      return Promise.resolve({
        status: 'aborted',
        errorCode: -1,
        errorString: 'start point deviates from current robot state',
      });
    const span = at(points, points.length - 1).t;
    return new Promise((resolve) => {
      let byClient = false;
      const started = nowS();
      const execution = executor.send(this.trajectory(points));
      const watch = setInterval(() => {
        if (!byClient && cancelled()) {
          byClient = true;
          execution.cancel();
        } else if (nowS() - started > span * 1.1 + 0.5) execution.cancel();
      }, 50);
      const endAtShutdown = () => execution.cancel();
      this.executions.add(execution);
      this.deps.onShutdown.add(endAtShutdown);
      void execution.ended.then((end) => {
        clearInterval(watch);
        this.executions.delete(execution);
        this.deps.onShutdown.delete(endAtShutdown);
        resolve(byClient ? 'canceled-by-client' : end);
      });
    });
  }

  /** _plan_and_execute + _finish_action: the plan, then the execution, then the goal's ending. */
  private async planAndExecute(
    handle: StackGoalHandle,
    goal: readonly number[] | undefined,
    speed: number,
  ): Promise<CobotOutcome> {
    const { model, moveGroup, current } = this.deps;
    // OMPL takes its time even for a simple query.
    await sleep(30);
    const plan = goal ? planJointPath(model, current(), goal, moveGroup.boxes(), speed, speed) : undefined;
    if (!plan?.ok) {
      const message = 'Планирование не удалось: поза недостижима или в столкновении';
      this.deps.log(`${message}${plan && !plan.ok ? ` (${plan.reason})` : ''}`);
      return { status: 'aborted', success: false, message };
    }
    if (handle.isCancelRequested) return { status: 'canceled', success: false, message: 'canceled' };
    const end = await this.execute(plan.points, () => handle.isCancelRequested);
    if (end === 'canceled-by-client') return { status: 'canceled', success: false, message: 'canceled' };
    return { status: 'succeeded', success: true, message: 'Движение выполнено успешно' };
  }

  async moveToJoints(handle: StackGoalHandle, goal: Msg): Promise<CobotOutcome> {
    const speed = clampSpeed(num(goal.speed));
    const joints = Array.from((goal.joints ?? []) as ArrayLike<number>, Number);
    handle.publishFeedback({ state: 'planning' });
    handle.publishFeedback({ state: 'executing' });
    return this.planAndExecute(handle, joints.length === 7 ? joints : undefined, speed);
  }

  async moveToPose(handle: StackGoalHandle, goal: Msg): Promise<CobotOutcome> {
    const speed = clampSpeed(num(goal.speed));
    const planner = (typeof goal.planner === 'string' && goal.planner !== '' ? goal.planner : 'ompl').toLowerCase();
    const planningTime = PLANNERS[planner];
    if (planningTime === undefined) {
      const message = `Неизвестный планировщик '${planner}'. Доступные: ${Object.keys(PLANNERS).join(', ')}`;
      this.deps.log(message);
      return { status: 'aborted', success: false, message };
    }
    handle.publishFeedback({ state: 'planning' });
    handle.publishFeedback({ state: 'executing' });
    const frame = typeof goal.frame_id === 'string' && goal.frame_id !== '' ? goal.frame_id : 'base_link';
    // scipy's Rotation.from_euler("ZYX", [a, b, c]): Rz(a) Ry(b) Rx(c).
    const q = quatMul(
      axisAngle([0, 0, 1], num(goal.a)),
      quatMul(axisAngle([0, 1, 0], num(goal.b)), axisAngle([1, 0, 0], num(goal.c))),
    );
    const target = poseFromMsg({
      position: { x: num(goal.x), y: num(goal.y), z: num(goal.z) },
      orientation: { x: q[0], y: q[1], z: q[2], w: q[3] },
    });
    const reference = this.deps.moveGroup.framePose(frame);
    const solved = reference
      ? this.deps.moveGroup.solvePose(compose(reference, target), 'tcp', this.deps.current(), Math.min(planningTime, 1))
      : undefined;
    return this.planAndExecute(handle, solved, speed);
  }

  /** _handle_named: PTP to the SRDF state inside the call; answers when the motion has ended. */
  async moveToNamed(request: Msg): Promise<{ success: boolean; message: string }> {
    const name = typeof request.name === 'string' ? request.name.trim() : '';
    const speed = clampSpeed(num(request.speed));
    const rawAccel = num(request.accel_scale);
    const accel = rawAccel > 0 ? clampSpeed(rawAccel) : speed;
    const goal = this.deps.groupStates.get(name);
    if (!goal) {
      const message = `Неизвестное состояние '${name}': no group state '${name}' in the SRDF`;
      this.deps.log(message);
      return { success: false, message };
    }
    const plan = planJointPath(this.deps.model, this.deps.current(), goal, this.deps.moveGroup.boxes(), speed, accel);
    if (!plan.ok) return { success: false, message: `Не удалось построить траекторию для '${name}'` };
    const end = await this.execute(plan.points, () => false);
    if (end !== 'canceled-by-client' && end.status === 'succeeded')
      return { success: true, message: `Переместился в '${name}'` };
    return { success: false, message: `Выполнение траектории для '${name}' прервано (hardware fault?)` };
  }
}
