/**
 * What the rclnodejs context asks of MoveIt besides FK and IK: the keep-out boxes in its planning
 * scene (ApplyPlanningScene, whenever the service appears) and plan-only requests for dry runs
 * (GetMotionPlan on move_group's /plan_kinematic_path), the plan held to the safety envelope along
 * its whole path.
 */
import { matFromAbc, quatFromMat } from '../kinematics/rotation.ts';
import type { PlannerName } from '../motion/vocabulary.ts';
import type { GroupState } from '../robot/srdf.ts';
import { err, ok, type Result } from '../result.ts';
import type { KeepOutBox } from '../safety/envelope.ts';
import { type TargetGuard, targetOutsideEnvelope } from '../safety/targets.ts';
import { firstEnvelopeViolation } from '../safety/trajectory.ts';
import type { InterfaceUnavailable, MotionPlanAnswer, MotionPlanRequest } from './context.ts';
import type { EndpointsFile } from '../settings/endpoints.ts';
import { type JointStateMsg, type JointTrajectoryMsg, moveitErrorName, secondsOf } from './messages.ts';
import {
  applySceneResponseFromRos,
  keepOutObjectId,
  keepOutSceneRequestToRos,
  MOVEIT_PLANNERS,
  motionPlanRequestToRos,
  motionPlanResponseFromRos,
  type PlanGoal,
} from './moveit.ts';
import { type Iface, type RclCalls, unavailable } from './rcl-calls.ts';

/** How often the planning scene service is looked for (ms). */
export const SCENE_POLL_MS = 1000;

/**
 * Keeps the keep-out boxes in MoveIt's planning scene: each time the ApplyPlanningScene service
 * appears (at start-up, and again after move_group restarts with a fresh scene) the boxes are
 * added as collision objects. Every outcome is one line through `notice`, including that the
 * service is not there yet after server_wait_s.
 */
export class KeepOutScene {
  private readonly calls: RclCalls;
  private readonly iface: Iface;
  private readonly request: object;
  private readonly names: string;
  private readonly serverWaitS: number;
  private readonly notice: (line: string) => void;
  private readonly startedMs = performance.now();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private present = false;
  private toldMissing = false;
  private closed = false;
  /** Resolves with the line of the first attempt's outcome (or of the service missing). */
  readonly firstOutcome: Promise<string>;
  private resolveFirst: (line: string) => void = () => undefined;

  constructor(calls: RclCalls, endpoints: EndpointsFile, boxes: readonly KeepOutBox[], notice: (line: string) => void) {
    this.calls = calls;
    this.iface = endpoints.interfaces.apply_planning_scene;
    this.request = keepOutSceneRequestToRos(boxes, endpoints.planning_frame);
    this.names = boxes.map((b) => `'${b.name}' (${keepOutObjectId(b.name)})`).join(', ');
    this.serverWaitS = endpoints.timeouts.server_wait_s;
    this.firstOutcome = new Promise((resolve) => {
      this.resolveFirst = resolve;
    });
    this.notice = (line) => {
      notice(line);
      this.resolveFirst(line);
    };
  }

  /** Starts looking for the service. */
  start(): void {
    void this.poll();
  }

  /** Stops looking. */
  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
  }

  private async poll(): Promise<void> {
    if (this.closed) return;
    const { name, type } = this.iface;
    const client = this.calls.client(this.iface);
    if (!client.ok) {
      this.notice(
        `the keep-out boxes cannot be added to MoveIt's planning scene: ${name}: ${client.error} (armgate still checks every target against them)`,
      );
      return;
    }
    let available = false;
    try {
      available = client.value.isServiceServerAvailable();
    } catch {
      available = false;
    }
    if (available && !this.present) await this.apply();
    else if (!available && !this.toldMissing && performance.now() - this.startedMs >= this.serverWaitS * 1000) {
      this.toldMissing = true;
      this.notice(
        `MoveIt's planning scene service ${name} (${type}) is not there after ${this.serverWaitS} s: the keep-out boxes ${this.names} are not in its planning scene yet; they are added when it appears (armgate checks every target against them either way)`,
      );
    }
    this.present = available;
    if (this.closed) return;
    this.timer = setTimeout(() => void this.poll(), SCENE_POLL_MS);
    this.timer.unref();
  }

  private async apply(): Promise<void> {
    const { name } = this.iface;
    const answer = await this.calls.call(this.iface, 'planning scene service', this.request, this.serverWaitS * 1000);
    if (this.closed) return;
    if (!answer.ok) {
      this.notice(`the keep-out boxes were not added to MoveIt's planning scene: ${answer.error.message}`);
      return;
    }
    const success = applySceneResponseFromRos(answer.value);
    this.notice(
      success.ok && success.value
        ? `the keep-out boxes ${this.names} are collision objects of MoveIt's planning scene (${name})`
        : `MoveIt's ${name} did not apply the keep-out boxes ${this.names} (${success.ok ? 'success false' : success.error}): they are not in its planning scene`,
    );
  }
}

/** What a plan-only request needs of the context. */
export interface PlanDeps {
  readonly calls: RclCalls;
  readonly endpoints: EndpointsFile;
  /** The envelope with its TCP chain; undefined: none configured. */
  readonly guard: TargetGuard | undefined;
  /** The latest joint state in J1..J7 order, if any. */
  latest(): JointStateMsg | undefined;
  groupStates(): Promise<Result<readonly GroupState[], InterfaceUnavailable>>;
}

/** A request's goal for MoveIt, its planner and its scales; or why it cannot be planned. */
async function goalOf(
  deps: PlanDeps,
  request: MotionPlanRequest,
): Promise<
  Result<
    { goal: PlanGoal; planner: PlannerName; velocity: number; acceleration: number } | { refused: string },
    InterfaceUnavailable
  >
> {
  const { joint_names, tcp_link, planning_frame } = deps.endpoints;
  const joints = (positions: number[]) => ({ kind: 'joints' as const, names: joint_names, positions });
  if (request.kind === 'joints') {
    const q = [...request.goal.joints];
    const speed = request.goal.speed;
    return ok({ goal: joints(q), planner: 'ptp', velocity: speed, acceleration: speed });
  }
  if (request.kind === 'named') {
    const states = await deps.groupStates();
    if (!states.ok) return states;
    const state = states.value.find((s) => s.name === request.request.name);
    if (!state) return ok({ refused: `unknown named position '${request.request.name}'` });
    const q = [...state.jointsRad];
    const { speed, accel_scale } = request.request;
    return ok({
      goal: joints(q),
      planner: 'ptp',
      velocity: speed,
      acceleration: accel_scale > 0 ? accel_scale : speed,
    });
  }
  const g = request.goal;
  const planner = g.planner.toLowerCase() as PlannerName;
  const auxPoint = g.circ_center ?? g.circ_interim;
  const goal: PlanGoal = {
    kind: 'pose',
    link: tcp_link,
    frame: g.frame_id || planning_frame,
    position: { x: g.x, y: g.y, z: g.z },
    orientation: quatFromMat(matFromAbc(new Float64Array(9), g.a, g.b, g.c)),
    ...(auxPoint ? { aux: { name: g.circ_center ? ('center' as const) : ('interim' as const), point: auxPoint } } : {}),
  };
  return ok({ goal, planner, velocity: g.speed, acceleration: g.speed });
}

/** Where a planned trajectory first leaves the envelope, as a sentence; undefined inside. */
function pathOutsideEnvelope(guard: TargetGuard, planner: string, trajectory: JointTrajectoryMsg): string | undefined {
  const points = trajectory.points;
  const joints = trajectory.joint_names.length;
  const withVelocities = points.every((p) => p.velocities.length === joints);
  const found = firstEnvelopeViolation(
    guard.chain,
    guard.checker.envelope,
    {
      count: points.length,
      joints,
      times: Float64Array.from(points, (p) => secondsOf(p.time_from_start)),
      positions: Float64Array.from(points.flatMap((p) => p.positions)),
      velocities: withVelocities ? Float64Array.from(points.flatMap((p) => p.velocities)) : undefined,
    },
    undefined,
  );
  if (!found) return undefined;
  const at = points[found.point];
  const t = at ? secondsOf(at.time_from_start).toFixed(3) : '?';
  return `the ${planner} plan from MoveIt would leave the safety envelope at point ${found.point + 1} of ${points.length} (t = ${t} s): ${found.violation.message}; nothing moved`;
}

/**
 * Plans without moving through MoveIt's plan-only service (`interfaces.plan_kinematic_path`,
 * GetMotionPlan): a joint or named target as joint constraints, a pose target as a position and
 * an orientation constraint of the TCP link (CIRC's auxiliary point as Pilz's path constraint),
 * from the arm's latest joint state, on the pipeline armgate's planner name maps to
 * ({@link MOVEIT_PLANNERS}; joint and named targets: Pilz PTP), scaled by speed (and accel_scale).
 * A target outside the envelope is refused before anything is sent; the plan is checked along
 * its whole path. MoveIt's error codes are success false with the reason.
 */
export async function planWithMoveIt(
  deps: PlanDeps,
  request: MotionPlanRequest,
  signal?: AbortSignal,
): Promise<Result<MotionPlanAnswer, InterfaceUnavailable>> {
  const iface = deps.endpoints.interfaces.plan_kinematic_path;
  const { planning_group, joint_names, timeouts } = deps.endpoints;
  const resolved = await goalOf(deps, request);
  if (!resolved.ok) return resolved;
  if ('refused' in resolved.value) return ok({ success: false, message: resolved.value.refused });
  const { goal, planner, velocity, acceleration } = resolved.value;
  const guard = deps.guard;
  if (guard) {
    const outside = targetOutsideEnvelope(
      guard,
      goal.kind === 'joints'
        ? { kind: 'joints', qRad: goal.positions }
        : { kind: 'pose', positionM: [goal.position.x, goal.position.y, goal.position.z], frameId: goal.frame },
    );
    if (outside)
      return ok({
        success: false,
        message: `the target is outside the safety envelope: ${outside}; nothing was sent to MoveIt, nothing moved`,
      });
  }
  const moveitPlanner = MOVEIT_PLANNERS[planner];
  const latest = deps.latest();
  const rosRequest = motionPlanRequestToRos({
    group: planning_group,
    ...(latest ? { start: { name: latest.name, position: latest.position } } : {}),
    goal,
    planner: moveitPlanner,
    velocityScale: velocity,
    accelerationScale: acceleration,
    allowedPlanningTimeS: timeouts.plan_s,
  });
  const waitMs = (timeouts.plan_s + timeouts.fk_s) * 1000;
  const answer = await deps.calls.callOrAbort(iface, 'plan service', rosRequest, waitMs, signal);
  if (!answer.ok) return answer;
  if ('aborted' in answer.value) return ok({ success: false, message: answer.value.aborted });
  const response = motionPlanResponseFromRos(answer.value.value, joint_names);
  if (!response.ok)
    return err(unavailable(iface.name, `plan service ${iface.name} gave a malformed response: ${response.error}`));
  const how = `${moveitPlanner.pipeline_id}${moveitPlanner.planner_id ? ` ${moveitPlanner.planner_id}` : ''}`;
  const { val, message, trajectory, planningTimeS } = response.value;
  if (!trajectory)
    return ok({
      success: false,
      message: `MoveIt (${how}) found no plan${message ? `: ${message}` : ''} (MoveIt ${moveitErrorName(val)})`,
    });
  const leaves = guard ? pathOutsideEnvelope(guard, planner, trajectory) : undefined;
  if (leaves) return ok({ success: false, message: leaves });
  return ok({
    success: true,
    message: `planned by MoveIt's ${iface.name} (${how}) in ${planningTimeS.toFixed(3)} s`,
    planner,
    trajectory,
  });
}
