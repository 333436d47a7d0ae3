/**
 * The original stack's cobot server (lightweight-cobot, iiwa_planning/scripts/move_to_pose_server.py
 * on its dev branch) as it behaves: every goal accepted; feedback "planning" then "executing"
 * before planning; speed clamped to [0.01, 1]; a failed plan aborts (success false); a cancel stops
 * the execution and ends CANCELED ("canceled"); an execution that ends any other way, stopped by
 * cobot/stop or preempted by another trajectory included, SUCCEEDS with success true (the server
 * checks only for an exception); move_to_named plans and executes inside the service call and
 * answers when the motion has ended; cobot/stop stops what the server (MoveIt) executes, nothing
 * else. MoveIt's execution is a goal of the controller, as MoveIt's FollowJointTrajectory goal is.
 */
import type { Arm } from './arm.ts';
import type { ControllerGoal, GoalEnd, TrajectoryController, TrajectoryMsg } from './jtc.ts';
import { at, axisAngle, compose, quatMul, type RobotModel } from './model.ts';
import { poseFromMsg, type MoveGroup } from './moveit.ts';
import { planJointPath, type PlannedPoint } from './planner.ts';
import type { StackGoalHandle } from './rcl.ts';

/** move_to_pose_server.py's planner table: the pipelines' planning times. */
const PLANNERS: Record<string, number> = { ompl: 10, ptp: 2, lin: 2, circ: 2, chomp: 10 };
/** MoveIt's trajectory execution manager: how far the start may be from the current state (rad). */
const ALLOWED_START_TOLERANCE = 0.01;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const nowS = () => Date.now() / 1000;

export interface CobotDeps {
  readonly model: RobotModel;
  readonly moveGroup: MoveGroup;
  readonly controller: TrajectoryController;
  readonly arm: Arm;
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
  private readonly executions = new Set<ControllerGoal>();

  private readonly deps: CobotDeps;

  constructor(deps: CobotDeps) {
    this.deps = deps;
  }

  /** cobot/stop: MoveIt's stop_execution cancels the controller goals MoveIt sent. */
  stop(): void {
    for (const goal of [...this.executions]) this.deps.controller.cancel(goal, nowS());
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
        time_from_start: { sec: Math.floor(p.t), nanosec: Math.round((p.t - Math.floor(p.t)) * 1e9) % 1e9 },
      })),
    };
  }

  /**
   * MoveIt executes a plan: a goal to the controller, watched for cancel (polled every 50 ms as the
   * server does) and for its duration (allowed_execution_duration_scaling 1.1 + 0.5 s margin).
   * Resolves with how the controller ended it.
   */
  private execute(points: readonly PlannedPoint[], cancelled: () => boolean): Promise<GoalEnd | 'canceled-by-client'> {
    const { controller, arm } = this.deps;
    const first = at(points, 0);
    if (first.positions.some((p, i) => Math.abs(p - at(arm.positions, i)) > ALLOWED_START_TOLERANCE))
      return Promise.resolve({
        status: 'aborted',
        errorCode: -1,
        errorString: 'start point deviates from current robot state',
      });
    const duration = at(points, points.length - 1).t;
    return new Promise((resolve) => {
      let byClient = false;
      const started = nowS();
      const watch = setInterval(() => {
        if (!byClient && cancelled()) {
          byClient = true;
          controller.cancel(goal, nowS());
        } else if (nowS() - started > duration * 1.1 + 0.5) controller.cancel(goal, nowS());
      }, 50);
      const endAtShutdown = () => controller.abort('the controller shut down', nowS());
      const goal: ControllerGoal = {
        tolerances: {
          path: this.deps.model.jointNames.map(() => ({ position: 0, velocity: 0, acceleration: 0 })),
          goal: this.deps.model.jointNames.map(() => ({ position: 0, velocity: 0.01, acceleration: 0 })),
          goalTime: 0,
        },
        feedback: () => undefined,
        finish: (end) => {
          clearInterval(watch);
          this.executions.delete(goal);
          this.deps.onShutdown.delete(endAtShutdown);
          resolve(byClient ? 'canceled-by-client' : end);
        },
      };
      this.executions.add(goal);
      this.deps.onShutdown.add(endAtShutdown);
      controller.accept(this.trajectory(points), goal);
    });
  }

  /** _plan_and_execute + _finish_action: the plan, then the execution, then the goal's ending. */
  private async planAndExecute(
    handle: StackGoalHandle,
    goal: readonly number[] | undefined,
    speed: number,
  ): Promise<CobotOutcome> {
    const { model, moveGroup, arm } = this.deps;
    // OMPL takes its time even for a simple query.
    await sleep(30);
    const plan = goal ? planJointPath(model, arm.positions, goal, moveGroup.boxes(), speed, speed) : undefined;
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
      ? this.deps.moveGroup.solvePose(
          compose(reference, target),
          'tcp',
          this.deps.arm.positions,
          Math.min(planningTime, 1),
        )
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
    const plan = planJointPath(
      this.deps.model,
      this.deps.arm.positions,
      goal,
      this.deps.moveGroup.boxes(),
      speed,
      accel,
    );
    if (!plan.ok) return { success: false, message: `Не удалось построить траекторию для '${name}'` };
    const end = await this.execute(plan.points, () => false);
    if (end !== 'canceled-by-client' && end.status === 'succeeded')
      return { success: true, message: `Переместился в '${name}'` };
    return { success: false, message: `Выполнение траектории для '${name}' прервано (hardware fault?)` };
  }
}
