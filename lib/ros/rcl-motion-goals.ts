/**
 * The motion goals of the rclnodejs context: a move to joints or to a pose through the stack's action servers, a
 * move to a named position through its MoveToNamedPose service; each target held to the safety envelope first, sent
 * at the speed override in force, and answered once a joint state received after it has arrived.
 */
import type { GroupState } from '../robot/srdf.ts';
import { ok, type Result } from '../result.ts';
import { type SafetyTarget, type TargetGuard, targetOutsideEnvelope } from '../safety/targets.ts';
import { REST_SPAN_RAD } from './at-rest.ts';
import type { ArmActivity, GoalOptions, InterfaceUnavailable } from './context.ts';
import { moveToJointsGoalToRos, moveToNamedToRos, moveToPoseGoalToRos } from './convert.ts';
import type { EndpointsFile } from '../settings/endpoints.ts';
import type {
  MotionResultMsg,
  MoveToJointsGoal,
  MoveToNamedRequest,
  MoveToPoseGoal,
  TriggerResponse,
} from './messages.ts';
import type { RclGoals } from './rcl-goals.ts';
import type { RclJointStates } from './rcl-joint-states.ts';

/** What the motion goals need of the context they are part of. */
export interface MotionGoalPorts {
  readonly endpoints: EndpointsFile;
  readonly goals: RclGoals;
  readonly jointStates: RclJointStates;
  /** A goal with its speed scaled by the override in force. */
  scaled<G extends { readonly speed: number }>(goal: G): G;
  armActivity(): ArmActivity | undefined;
  groupStates(): Promise<Result<readonly GroupState[], InterfaceUnavailable>>;
  /** The stop service (what stops a named-pose call, which cannot be cancelled). */
  callTrigger(): Promise<Result<TriggerResponse, InterfaceUnavailable>>;
  log(line: string): void;
}

export class RclMotionGoals {
  readonly #ports: MotionGoalPorts;
  /** The safety envelope the targets are held to; undefined: none configured. */
  guard: TargetGuard | undefined;

  constructor(ports: MotionGoalPorts) {
    this.#ports = ports;
  }

  async moveToJoints(
    goal: MoveToJointsGoal,
    options: GoalOptions = {},
  ): Promise<Result<MotionResultMsg, InterfaceUnavailable>> {
    const { endpoints, goals, jointStates } = this.#ports;
    const iface = endpoints.interfaces.move_to_joints;
    const refused = this.outsideEnvelope({ kind: 'joints', qRad: goal.joints }, iface.name);
    if (refused) return ok(refused);
    if (await this.restsAt(goal.joints)) {
      const message = `already at the target (every joint within ${REST_SPAN_RAD} rad, at rest): nothing was sent to ${iface.name}`;
      this.#ports.log(`goal for ${iface.name}: ${message}`);
      return ok({ success: true, message });
    }
    return jointStates.after(
      await goals.runAction(iface, () => moveToJointsGoalToRos(this.#ports.scaled(goal)), options),
    );
  }

  async moveToPose(
    goal: MoveToPoseGoal,
    options: GoalOptions = {},
  ): Promise<Result<MotionResultMsg, InterfaceUnavailable>> {
    const iface = this.#ports.endpoints.interfaces.move_to_pose;
    const rosGoal = moveToPoseGoalToRos(goal);
    if (!rosGoal.ok) return ok({ success: false, message: rosGoal.error });
    const build = () => {
      const scaled = moveToPoseGoalToRos(this.#ports.scaled(goal));
      return scaled.ok ? scaled.value : rosGoal.value;
    };
    const refused = this.outsideEnvelope(
      { kind: 'pose', positionM: [goal.x, goal.y, goal.z], frameId: goal.frame_id },
      iface.name,
    );
    if (refused) return ok(refused);
    return this.#ports.jointStates.after(await this.#ports.goals.runAction(iface, build, options));
  }

  async moveToNamed(
    request: MoveToNamedRequest,
    options: GoalOptions = {},
  ): Promise<Result<MotionResultMsg, InterfaceUnavailable>> {
    const iface = this.#ports.endpoints.interfaces.move_to_named;
    if (this.guard) {
      // The named position's joint angles are the target: read from the SRDF MoveIt runs with.
      const states = await this.#ports.groupStates();
      if (!states.ok) return states;
      const state = states.value.find((s) => s.name === request.name);
      const refused = state ? this.outsideEnvelope({ kind: 'joints', qRad: state.jointsRad }, iface.name) : undefined;
      if (refused) return ok(refused);
    }
    return this.#ports.jointStates.after(
      await this.#ports.goals.runService(
        iface,
        () => moveToNamedToRos(this.#ports.scaled(request)),
        options,
        () => this.#ports.callTrigger(),
      ),
    );
  }

  /**
   * The arm rests at `target` by a joint state of the last few periods (lib/ros/rcl-joint-states.ts) and nothing
   * moves it (no goal, trajectory, jog, pause or stop's brake): a motion there has nothing to do, and the stack's
   * round trips (its plan, a controller goal, the result) cost about 100 ms over DDS for it. Found on a real graph.
   */
  private async restsAt(target: readonly number[]): Promise<boolean> {
    return (await this.#ports.jointStates.restsAt(target)) && !this.#ports.armActivity();
  }

  /**
   * The refusal of a target outside the safety envelope (nothing is sent to `iface`), or undefined
   * when it is inside or no envelope is configured. The stack plans the path itself: only the
   * target can be checked here.
   */
  private outsideEnvelope(target: SafetyTarget, iface: string): MotionResultMsg | undefined {
    const why = this.guard ? targetOutsideEnvelope(this.guard, target) : undefined;
    if (!why) return undefined;
    this.#ports.log(`goal for ${iface} refused: outside the safety envelope: ${why}`);
    return {
      success: false,
      message: `the target is outside the safety envelope: ${why}; nothing was sent to ${iface}, nothing moved`,
    };
  }
}
