import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { abcFromQuat, quatAngle, quatFromAbc } from '../../lib/kinematics/rotation.ts';
import {
  durationFromS,
  FJT_GOAL_TOLERANCE_VIOLATED,
  FJT_INVALID_JOINTS,
  FJT_PATH_TOLERANCE_VIOLATED,
  FJT_INVALID_GOAL,
  FJT_SUCCESSFUL,
  type IkRequest,
  type JointTrajectoryMsg,
  MOVEIT_FAILURE,
  MOVEIT_FRAME_TRANSFORM_FAILURE,
  MOVEIT_GOAL_IN_COLLISION,
  MOVEIT_INVALID_GROUP_NAME,
  MOVEIT_INVALID_LINK_NAME,
  MOVEIT_INVALID_ROBOT_STATE,
  MOVEIT_NO_IK_SOLUTION,
  MOVEIT_SUCCESS,
  MOVEIT_TIMED_OUT,
} from '../../lib/ros/messages.ts';
import { RclContext } from '../../lib/ros/rcl-context.ts';
import type { Config } from '../../lib/settings/load.ts';
import { SimContext } from '../../lib/sim/context.ts';
import { assertNear, JOINTS, OTHER, sleep, WORK } from '../support/rcl-checks.ts';
import {
  createStandin,
  PREEMPTED_BY_NEW_GOAL,
  PREEMPTED_BY_NEW_GOAL_HUMBLE,
  type Standin,
} from '../support/rclnodejs-standin.ts';
import { testConfig } from '../support/server.ts';

// RclContext.solveIk (MoveIt's GetPositionIK, `compute_ik`) and RclContext.executeTrajectory (the
// controller's FollowJointTrajectory action, `follow_joint_trajectory`) through the context's
// public methods, against the in-process STAND-IN for rclnodejs (tests/support/rclnodejs-standin.ts)
// backed by the simulator (time_scale 4: a 1 s trajectory runs in 0.25 s). The stand-in answers
// from the simulator or as a test scripts it (knobs.ikAnswer, knobs.trajectoryGoals). It is not
// ROS 2: no DDS, QoS, typesupport, goal UUIDs or status topics (the suites of tests/ros2, npm run test:ros2, are for those).

const TIMEOUTS = { server_wait_s: 0.3, fk_s: 0.2, ik_s: 0.1, motion_s: 5 };
const IK = '/compute_ik';
const FJT = '/iiwa_arm_controller/follow_joint_trajectory';

interface Rig {
  readonly ctx: RclContext;
  readonly sim: SimContext;
  readonly standin: Standin;
  close(): Promise<void>;
}

/** The simulator, the stand-in over it and the rclnodejs context over the stand-in (no HTTP server). */
async function startRig(prepare?: (standin: Standin) => void): Promise<Rig> {
  const simConfig = await testConfig({ sim: { time_scale: 4 } });
  const sim = await SimContext.create(simConfig);
  const standin = createStandin(sim);
  prepare?.(standin);
  const config: Config = {
    ...simConfig,
    robot: { ...simConfig.robot, backend: 'ros2' },
    endpoints: { ...simConfig.endpoints, timeouts: { ...simConfig.endpoints.timeouts, ...TIMEOUTS } },
  };
  const ctx = await RclContext.create(config, standin.module);
  return {
    ctx,
    sim,
    standin,
    async close() {
      await ctx.close();
      for (let i = 0; i < 100 && sim.armActivity(); i++) await sleep(20);
      await sim.close();
    },
  };
}

/** The arm's joint angles as the context last received them. */
function here(ctx: RclContext): number[] {
  return [...(ctx.latestJointState()?.msg.position ?? WORK)];
}

/** Waits until the simulated arm is at rest (no goal, no trajectory). */
async function rest(rig: Rig): Promise<void> {
  for (let i = 0; i < 300 && (rig.sim.armActivity() || rig.ctx.armActivity()); i++) await sleep(10);
  await sleep(30);
}

/** A two-point trajectory from `from` moving joint 1 to `q1`, arriving at `timeS` (trajectory time). */
function toJoint1(from: readonly number[], q1: number, timeS: number, names: readonly string[] = JOINTS) {
  const goal = [...from];
  goal[0] = q1;
  const msg: JointTrajectoryMsg = {
    header: { stamp: { sec: 0, nanosec: 0 }, frame_id: '' },
    joint_names: [...names],
    points: [
      {
        positions: from.map((q, j) => q + ((goal[j] ?? 0) - q) / 2),
        velocities: [],
        accelerations: [],
        effort: [],
        time_from_start: durationFromS(timeS / 2),
      },
      { positions: goal, velocities: [], accelerations: [], effort: [], time_from_start: durationFromS(timeS) },
    ],
  };
  return msg;
}

/** The last request the stand-in received on `name`. */
function lastRequest<T>(standin: Standin, name: string): T {
  const found = standin.requests.filter((r) => r.name === name).at(-1);
  assert.ok(found, `a request on ${name}`);
  return found.request as T;
}

interface SentIk {
  ik_request: {
    group_name: string;
    robot_state: { joint_state: { name: string[]; position: unknown } };
    avoid_collisions: boolean;
    ik_link_name: string;
    pose_stamped: {
      header: { frame_id: string };
      pose: {
        position: { x: number; y: number; z: number };
        orientation: { x: number; y: number; z: number; w: number };
      };
    };
    timeout: { sec: number; nanosec: number };
  };
}

const POSE = { x: 0.45, y: 0.1, z: 0.5, a: 0.3, b: 2.9, c: -0.2 };

describe('RclContext.solveIk over the stand-in (MoveIt GetPositionIK on compute_ik)', () => {
  let rig: Rig;
  before(async () => {
    rig = await startRig();
    await rig.ctx.nextJointState(2000);
  });
  after(() => rig.close());

  it('sends group, ik_link_name = tcp_link, the pose in the planning frame, the seed as robot_state, avoid_collisions and ik_s', async () => {
    const seed = [0.1, 0.3, -0.1, -1.2, 0.05, 1.1, 0.2];
    await rig.ctx.solveIk({ ...POSE, seed, collision_check: false });
    const sent = lastRequest<SentIk>(rig.standin, IK).ik_request;
    const { endpoints } = rig.ctx;
    assert.equal(sent.group_name, endpoints.planning_group, 'the planning group');
    assert.equal(sent.ik_link_name, endpoints.tcp_link, 'the TCP link of the endpoints file');
    assert.equal(sent.pose_stamped.header.frame_id, endpoints.planning_frame, 'no frame_id: the planning frame');
    assert.deepEqual(sent.pose_stamped.pose.position, { x: POSE.x, y: POSE.y, z: POSE.z });
    const q = sent.pose_stamped.pose.orientation;
    const expected = quatFromAbc(POSE);
    assert.ok(
      quatAngle(q, expected) < 1e-9,
      `orientation ${JSON.stringify(q)} is KUKA ABC ${POSE.a}, ${POSE.b}, ${POSE.c}`,
    );
    assert.ok(Math.abs(Math.hypot(q.x, q.y, q.z, q.w) - 1) < 1e-12, 'a unit quaternion');
    assert.deepEqual(sent.robot_state.joint_state.name, JOINTS, 'the seed named J1..J7');
    assert.ok(sent.robot_state.joint_state.position instanceof Float64Array, 'float64[] as Float64Array');
    assert.deepEqual([...(sent.robot_state.joint_state.position as Float64Array)], seed, 'the seed');
    assert.equal(sent.avoid_collisions, false, 'collision_check false');
    assert.deepEqual(
      sent.timeout,
      { sec: 1, nanosec: 0 },
      "MoveIt's compute_ik reads only timeout.sec: timeouts.ik_s (0.1 s) rounded up to whole seconds, at least 1",
    );
  });

  it('seeds with the current joint state when no seed is given, and passes frame_id and collision_check through', async () => {
    await rig.ctx.solveIk({ ...POSE, frame_id: 'base_link', collision_check: true });
    const sent = lastRequest<SentIk>(rig.standin, IK).ik_request;
    assert.equal(sent.avoid_collisions, true, 'collision_check true');
    assert.equal(sent.pose_stamped.header.frame_id, 'base_link');
    assertNear([...(sent.robot_state.joint_state.position as Float64Array)], here(rig.ctx), 1e-3, 'current state');
    await rig.ctx.solveIk({ ...POSE, frame_id: 'world', collision_check: true });
    assert.equal(lastRequest<SentIk>(rig.standin, IK).ik_request.pose_stamped.header.frame_id, 'world');
  });

  it("answers success with J1..J7 whose FK is the pose (the stand-in solves on the simulator's IK)", async () => {
    const fk = await rig.ctx.computeFk({
      header: { stamp: { sec: 0, nanosec: 0 }, frame_id: 'base_link' },
      fk_link_names: [rig.ctx.endpoints.tcp_link],
      robot_state: { joint_state: { name: [...JOINTS], position: OTHER } },
    });
    assert.ok(fk.ok, 'FK of the target configuration');
    const pose = fk.value.pose_stamped[0]?.pose;
    assert.ok(pose, 'a pose');
    const request: IkRequest = {
      ...pose.position,
      ...abcFromQuat(pose.orientation),
      seed: WORK,
      collision_check: true,
    };
    const answer = await rig.ctx.solveIk(request);
    assert.ok(answer.ok, 'the service answered');
    assert.equal(answer.value.success, true, answer.value.message);
    assert.match(answer.value.message, /solution from MoveIt's \/compute_ik free of collisions/);
    const joints = answer.value.joints ?? [];
    assert.equal(joints.length, 7, 'seven joint angles');
    const back = await rig.ctx.computeFk({
      header: { stamp: { sec: 0, nanosec: 0 }, frame_id: 'base_link' },
      fk_link_names: [rig.ctx.endpoints.tcp_link],
      robot_state: { joint_state: { name: [...JOINTS], position: joints } },
    });
    assert.ok(back.ok, 'FK of the solution');
    const solved = back.value.pose_stamped[0]?.pose;
    assert.ok(solved, 'a solved pose');
    const { position: p } = solved;
    assertNear([p.x, p.y, p.z], [pose.position.x, pose.position.y, pose.position.z], 1e-4, 'FK(IK(pose)) position');
    assert.ok(quatAngle(solved.orientation, pose.orientation) < 1e-3, 'FK(IK(pose)) orientation');
    const noCheck = await rig.ctx.solveIk({ ...request, collision_check: false });
    assert.ok(noCheck.ok && noCheck.value.success, 'solved without the collision check too');
    assert.doesNotMatch(noCheck.value.message, /free of collisions/, 'does not claim a check it did not ask for');
  });

  it('takes the solution by joint name: reordered, with an extra joint, answered J1..J7', async () => {
    const order = [6, 2, 0, 4, 1, 5, 3];
    rig.standin.knobs.ikAnswer = {
      val: MOVEIT_SUCCESS,
      solution: {
        name: ['gripper_joint', ...order.map((i) => JOINTS[i] ?? '')],
        position: [0.04, ...order.map((i) => OTHER[i] ?? 0)],
      },
    };
    try {
      const answer = await rig.ctx.solveIk({ ...POSE, collision_check: true });
      assert.ok(answer.ok, 'answered');
      assert.deepEqual(answer.value.success, true, answer.value.message);
      assert.deepEqual(answer.value.joints, OTHER, 'J1..J7 in order, the gripper dropped');
    } finally {
      rig.standin.knobs.ikAnswer = undefined;
    }
  });

  it("maps each MoveIt error code to success false with the reason and the code's name", async () => {
    const { tcp_link, planning_group } = rig.ctx.endpoints;
    const cases: [number, Partial<IkRequest>, RegExp][] = [
      [
        MOVEIT_NO_IK_SOLUTION,
        { collision_check: true },
        /^no IK solution for \[0\.4500, 0\.1000, 0\.5000\] m within the joint limits and free of collisions: the pose is unreachable there \(MoveIt NO_IK_SOLUTION\)$/,
      ],
      [
        MOVEIT_NO_IK_SOLUTION,
        { collision_check: false },
        /^no IK solution for .* within the joint limits: the pose is unreachable there \(MoveIt NO_IK_SOLUTION\)$/,
      ],
      [MOVEIT_TIMED_OUT, {}, /^no IK solution for .* found within 0\.1 s \(MoveIt TIMED_OUT\)$/],
      [MOVEIT_GOAL_IN_COLLISION, {}, /^the IK solution for .* is in collision \(MoveIt GOAL_IN_COLLISION\)$/],
      [
        MOVEIT_FRAME_TRANSFORM_FAILURE,
        { frame_id: 'camera' },
        /^unknown frame 'camera' \(MoveIt FRAME_TRANSFORM_FAILURE\)$/,
      ],
      [MOVEIT_FRAME_TRANSFORM_FAILURE, {}, /^unknown frame 'base_link' /],
      [
        MOVEIT_INVALID_LINK_NAME,
        {},
        new RegExp(
          `^MoveIt does not know the TCP link '${tcp_link}' \\(set tcp_link .*\\(MoveIt INVALID_LINK_NAME\\)$`,
        ),
      ],
      [
        MOVEIT_INVALID_GROUP_NAME,
        {},
        new RegExp(`^MoveIt does not know the planning group '${planning_group}' .*\\(MoveIt INVALID_GROUP_NAME\\)$`),
      ],
      [MOVEIT_INVALID_ROBOT_STATE, {}, /^no IK solution for .* \(MoveIt INVALID_ROBOT_STATE\)$/],
      [MOVEIT_FAILURE, {}, /^no IK solution for .* \(MoveIt FAILURE\)$/],
      [-99, {}, /^no IK solution for .* \(MoveIt code -99\)$/],
    ];
    for (const [val, extra, expected] of cases) {
      rig.standin.knobs.ikAnswer = { val };
      try {
        const answer = await rig.ctx.solveIk({ ...POSE, collision_check: true, ...extra });
        assert.ok(answer.ok, `code ${val}: an answer, not an error`);
        assert.equal(answer.value.success, false, `code ${val}: success false`);
        assert.equal(answer.value.joints, undefined, `code ${val}: no joints`);
        assert.match(answer.value.message, expected, `code ${val}`);
      } finally {
        rig.standin.knobs.ikAnswer = undefined;
      }
    }
  });

  it("answers the simulator's failures through the service: out of reach, an unknown frame", async () => {
    const far = await rig.ctx.solveIk({ ...POSE, x: 2, collision_check: true });
    assert.ok(far.ok, 'answered');
    assert.equal(far.value.success, false, 'out of reach');
    assert.match(far.value.message, /\(MoveIt NO_IK_SOLUTION\)/);
    const frame = await rig.ctx.solveIk({ ...POSE, frame_id: 'world', collision_check: true });
    assert.ok(frame.ok, 'answered');
    assert.equal(frame.value.success, false, 'unknown frame');
    assert.match(frame.value.message, /^unknown frame 'world' \(MoveIt FRAME_TRANSFORM_FAILURE\)$/);
  });

  it('answers unavailable naming the service for a SUCCESS that lacks a joint or a malformed response', async () => {
    const cases: [Standin['knobs']['ikAnswer'], RegExp][] = [
      [
        { val: MOVEIT_SUCCESS, solution: { name: JOINTS.slice(0, 6), position: OTHER.slice(0, 6) } },
        /^IK service \/compute_ik answered a solution without joint7$/,
      ],
      [{ raw: { solution: {} } }, /^IK service \/compute_ik gave a malformed response: IK response without error_code/],
      [
        { raw: { error_code: { val: 1 }, solution: { joint_state: { name: ['joint1'], position: [] } } } },
        /malformed response: solution has 0 positions for 1 names/,
      ],
    ];
    for (const [script, expected] of cases) {
      rig.standin.knobs.ikAnswer = script;
      try {
        const answer = await rig.ctx.solveIk({ ...POSE, collision_check: true });
        assert.equal(answer.ok, false, `${JSON.stringify(script)}: unavailable`);
        if (!answer.ok) {
          assert.equal(answer.error.iface, IK, 'names the service');
          assert.match(answer.error.message, expected);
        }
      } finally {
        rig.standin.knobs.ikAnswer = undefined;
      }
    }
  });

  it('answers unavailable after timeouts.server_wait_s when the service is absent, and after ik_s (whole seconds) + fk_s when it is silent', async () => {
    rig.standin.knobs.absent.add(IK);
    const started = performance.now();
    const absent = await rig.ctx.solveIk({ ...POSE, collision_check: true });
    const absentS = (performance.now() - started) / 1000;
    rig.standin.knobs.absent.clear();
    assert.equal(absent.ok, false, 'absent: unavailable');
    if (!absent.ok) {
      assert.equal(absent.error.iface, IK);
      assert.equal(
        absent.error.message,
        'IK service /compute_ik (moveit_msgs/srv/GetPositionIK) is not available: no server within 0.3 s',
      );
    }
    assert.ok(absentS >= 0.28 && absentS < 1.5, `waited server_wait_s (${absentS.toFixed(3)} s)`);

    rig.standin.knobs.silent.add(IK);
    const t0 = performance.now();
    const silent = await rig.ctx.solveIk({ ...POSE, collision_check: true });
    const silentS = (performance.now() - t0) / 1000;
    rig.standin.knobs.silent.clear();
    assert.equal(silent.ok, false, 'silent: unavailable');
    if (!silent.ok) assert.equal(silent.error.message, 'IK service /compute_ik did not answer within 1.2 s');
    assert.ok(silentS >= 1.18 && silentS < 2.5, `waited ceil(ik_s) + fk_s (${silentS.toFixed(3)} s)`);
  });

  it("abandons the solve when the signal aborts: success false with the abort's reason", async () => {
    rig.standin.knobs.silent.add(IK);
    try {
      const abort = new AbortController();
      setTimeout(() => abort.abort('the client went away'), 50);
      const answer = await rig.ctx.solveIk({ ...POSE, collision_check: true }, { signal: abort.signal });
      assert.deepEqual(answer, { ok: true, value: { success: false, message: 'the client went away' } });
    } finally {
      rig.standin.knobs.silent.clear();
    }
  });

  it('never moves the arm', async () => {
    const before = here(rig.ctx);
    await rig.ctx.solveIk({ ...POSE, collision_check: true });
    await sleep(50);
    assertNear(here(rig.ctx), before, 1e-6, 'the arm where it was');
    assert.equal(rig.ctx.armActivity(), undefined, 'nothing moves');
  });
});

interface SentGoal {
  trajectory: {
    joint_names: string[];
    points: { positions: unknown; time_from_start: { sec: number; nanosec: number } }[];
  };
}

describe('RclContext.executeTrajectory over the stand-in (FollowJointTrajectory on follow_joint_trajectory)', () => {
  let rig: Rig;
  before(async () => {
    rig = await startRig();
    await rig.ctx.nextJointState(2000);
  });
  after(() => rig.close());

  it('sends the trajectory as the goal and answers finished when the controller reaches its last point', async () => {
    await rest(rig);
    const from = here(rig.ctx);
    const pending = rig.ctx.executeTrajectory(toJoint1(from, from[0] === 0.3 ? 0.1 : 0.3, 1));
    await sleep(80);
    assert.ok(rig.ctx.armActivity(), 'busy while the goal executes');
    const result = await pending;
    assert.ok(result.ok, 'answered');
    const { outcome, message, duration_s } = result.value;
    assert.equal(outcome, 'finished', message);
    assert.equal(message, 'the controller finished the trajectory');
    assert.ok(duration_s >= 0.2 && duration_s < 1.5, `took ${duration_s} s (0.25 s at time_scale 4)`);
    const goal = lastRequest<SentGoal>(rig.standin, FJT).trajectory;
    assert.deepEqual(goal.joint_names, JOINTS, 'J1..J7');
    assert.equal(goal.points.length, 2, 'both points');
    assert.ok(goal.points[1]?.positions instanceof Float64Array, 'float64[] as Float64Array');
    assert.deepEqual(goal.points[1]?.time_from_start, { sec: 1, nanosec: 0 });
    await sleep(30);
    assert.ok(Math.abs((here(rig.ctx)[0] ?? 0) - (from[0] === 0.3 ? 0.1 : 0.3)) < 2e-3, 'joint 1 at its target');
    assert.equal(rig.ctx.armActivity(), undefined, 'the arm rests');
  });

  it('refused: a goal the controller rejects (an unknown joint), at once, nothing moved', async () => {
    await rest(rig);
    const from = here(rig.ctx);
    const names = [...JOINTS.slice(0, 6), 'joint8'];
    const result = await rig.ctx.executeTrajectory(toJoint1(from, 0.2, 1, names));
    assert.ok(result.ok, 'answered');
    assert.equal(result.value.outcome, 'refused', result.value.message);
    assert.equal(
      result.value.message,
      `the controller rejected the trajectory goal on ${FJT} (joints, times or limits)`,
    );
    assert.ok(result.value.duration_s < 0.5, `at once (${result.value.duration_s} s)`);
    assertNear(here(rig.ctx), from, 1e-6, 'nothing moved');
    assert.equal(rig.ctx.armActivity(), undefined, 'nothing executing');
  });

  it('maps every way the controller ends a goal to an outcome, with its error_string and the time', async () => {
    await rest(rig);
    const cases: [Standin['knobs']['trajectoryGoals'], string, RegExp][] = [
      [{ kind: 'rejected' }, 'refused', /^the controller rejected the trajectory goal on /],
      [
        { kind: 'succeeded', afterMs: 100, error_code: FJT_SUCCESSFUL, error_string: '' },
        'finished',
        /^the controller finished the trajectory$/,
      ],
      [
        { kind: 'aborted', afterMs: 100, error_code: FJT_PATH_TOLERANCE_VIOLATED, error_string: 'joint2 off its path' },
        'stopped',
        /^the controller stopped the trajectory: path tolerance violated: joint2 off its path$/,
      ],
      [
        { kind: 'aborted', afterMs: 100, error_code: FJT_GOAL_TOLERANCE_VIOLATED, error_string: 'joint4 0.02 rad off' },
        'timeout',
        /^the controller did not reach the goal within its tolerance in time: joint4 0\.02 rad off$/,
      ],
      [
        { kind: 'aborted', afterMs: 100, error_code: FJT_INVALID_JOINTS, error_string: 'joints do not match' },
        'refused',
        /^the controller aborted the trajectory \(error_code -2\): joints do not match$/,
      ],
      [
        { kind: 'aborted', afterMs: 100, error_code: FJT_INVALID_GOAL, error_string: PREEMPTED_BY_NEW_GOAL },
        'preempted',
        /^the controller ended the trajectory goal \(a newer goal replaced it\): Current goal preempted by new incoming action\.$/,
      ],
      [
        { kind: 'canceled', afterMs: 100, error_code: FJT_SUCCESSFUL, error_string: PREEMPTED_BY_NEW_GOAL_HUMBLE },
        'preempted',
        /^the controller cancelled the trajectory goal \(a newer goal replaced it\): Current goal cancelled/,
      ],
    ];
    for (const [script, outcome, message] of cases) {
      rig.standin.knobs.trajectoryGoals = script;
      try {
        const result = await rig.ctx.executeTrajectory(toJoint1(here(rig.ctx), 0.1, 1));
        assert.ok(result.ok, `${script?.kind}: answered`);
        assert.equal(result.value.outcome, outcome, `${script?.kind}: ${result.value.message}`);
        assert.match(result.value.message, message, `${script?.kind}`);
        const minS = script?.kind === 'rejected' ? 0 : 0.09;
        assert.ok(
          result.value.duration_s >= minS && result.value.duration_s < 2,
          `${script?.kind}: duration_s ${result.value.duration_s} from sending to the outcome`,
        );
      } finally {
        rig.standin.knobs.trajectoryGoals = undefined;
      }
    }
    assert.equal(rig.ctx.armActivity(), undefined, 'nothing left executing');
  });

  it('stopped: aborting the signal cancels the goal on the controller, which decelerates and holds', async () => {
    await rest(rig);
    const cancelsBefore = rig.standin.cancels.length;
    const from = here(rig.ctx);
    const abort = new AbortController();
    const pending = rig.ctx.executeTrajectory(toJoint1(from, from[0] === -0.6 ? 0.6 : -0.6, 4), {
      signal: abort.signal,
    });
    await sleep(200);
    abort.abort('stopped by the test');
    const result = await pending;
    assert.ok(result.ok, 'answered');
    assert.equal(result.value.outcome, 'stopped', result.value.message);
    assert.equal(result.value.message, 'stopped by the test; the controller stops and holds');
    assert.ok(result.value.duration_s >= 0.18 && result.value.duration_s < 2, `${result.value.duration_s} s`);
    assert.deepEqual(rig.standin.cancels.slice(cancelsBefore), [FJT], 'the goal was cancelled on the controller');
    await rest(rig);
    const held = here(rig.ctx);
    assert.ok(Math.abs((held[0] ?? 0) - (from[0] ?? 0)) > 0.01, 'it had moved');
    assert.ok(Math.abs((held[0] ?? 0) - (from[0] === -0.6 ? 0.6 : -0.6)) > 0.1, 'short of the target');
    await sleep(150);
    assertNear(here(rig.ctx), held, 1e-4, 'holds');
  });

  it('stopped: a goal executing until cancelled (scripted) is cancelled by the signal too', async () => {
    rig.standin.knobs.trajectoryGoals = { kind: 'executing' };
    const cancelsBefore = rig.standin.cancels.length;
    try {
      const abort = new AbortController();
      setTimeout(() => abort.abort('the client went away'), 100);
      const result = await rig.ctx.executeTrajectory(toJoint1(here(rig.ctx), 0.1, 1), { signal: abort.signal });
      assert.ok(result.ok, 'answered');
      assert.equal(result.value.outcome, 'stopped', result.value.message);
      assert.match(result.value.message, /^the client went away; /);
      assert.deepEqual(rig.standin.cancels.slice(cancelsBefore), [FJT], 'cancelled on the controller');
    } finally {
      rig.standin.knobs.trajectoryGoals = undefined;
    }
  });

  it("timeout: the wait's time limit cancels the goal and answers timeout", async () => {
    rig.standin.knobs.trajectoryGoals = { kind: 'executing' };
    const cancelsBefore = rig.standin.cancels.length;
    try {
      const result = await rig.ctx.executeTrajectory(toJoint1(here(rig.ctx), 0.1, 1), { timeoutS: 0.2 });
      assert.ok(result.ok, 'answered');
      assert.equal(result.value.outcome, 'timeout', result.value.message);
      assert.equal(
        result.value.message,
        'no outcome within 0.200 s: the trajectory goal was cancelled; the controller stops and holds',
      );
      assert.ok(result.value.duration_s >= 0.19 && result.value.duration_s < 2, `${result.value.duration_s} s`);
      assert.deepEqual(rig.standin.cancels.slice(cancelsBefore), [FJT], 'cancelled on the controller');
    } finally {
      rig.standin.knobs.trajectoryGoals = undefined;
    }
    await rest(rig);
    const from = here(rig.ctx);
    const real = await rig.ctx.executeTrajectory(toJoint1(from, from[0] === 0.5 ? -0.5 : 0.5, 8), { timeoutS: 0.3 });
    assert.ok(real.ok && real.value.outcome === 'timeout', `the simulated controller too: ${JSON.stringify(real)}`);
    await rest(rig);
    const held = here(rig.ctx);
    await sleep(100);
    assertNear(here(rig.ctx), held, 1e-4, 'holds after the timeout');
  });

  it('preempted: a newer trajectory goal replaces the waited one, which answers preempted; the newer finishes', async () => {
    await rest(rig);
    const from = here(rig.ctx);
    const first = rig.ctx.executeTrajectory(toJoint1(from, from[0] === -0.4 ? 0.4 : -0.4, 4));
    await sleep(150);
    const second = rig.ctx.executeTrajectory(toJoint1(here(rig.ctx), 0.05, 1));
    const [a, b] = await Promise.all([first, second]);
    assert.ok(a.ok && b.ok, 'both answered');
    assert.equal(a.value.outcome, 'preempted', a.value.message);
    assert.match(a.value.message, /a newer goal replaced it/);
    assert.equal(b.value.outcome, 'finished', b.value.message);
    await sleep(30);
    assert.ok(Math.abs((here(rig.ctx)[0] ?? 0) - 0.05) < 2e-3, 'the newer trajectory reached its target');
  });

  it('preempted by a trajectory published on the topic: the arm still counts as busy until that one ends', async () => {
    await rest(rig);
    const from = here(rig.ctx);
    const waited = rig.ctx.executeTrajectory(toJoint1(from, from[0] === 0.4 ? -0.4 : 0.4, 4));
    await sleep(150);
    const published = await rig.ctx.publishTrajectory(toJoint1(here(rig.ctx), -0.2, 2));
    assert.ok(published.ok, 'published');
    const result = await waited;
    assert.ok(result.ok, 'answered');
    assert.equal(result.value.outcome, 'preempted', result.value.message);
    assert.equal(
      rig.ctx.armActivity()?.kind,
      'trajectory',
      'the published trajectory (2 s of trajectory time) is still executing',
    );
    await rest(rig);
  });

  it('stopped: stop cancels the waited goal, then calls the stop service', async () => {
    await rest(rig);
    const from = here(rig.ctx);
    const pending = rig.ctx.executeTrajectory(toJoint1(from, from[0] === 0.6 ? -0.6 : 0.6, 4));
    await sleep(150);
    const stop = await rig.ctx.callStop();
    const result = await pending;
    assert.ok(result.ok, 'answered');
    assert.equal(result.value.outcome, 'stopped', result.value.message);
    assert.match(result.value.message, /^stopped; the controller stops and holds$/);
    assert.ok(stop.ok && stop.value.success, 'the stop service answered');
    assert.match(stop.value.message, /^cancelled 1 motion goal\(s\); /);
    assert.equal(rig.standin.requests.at(-1)?.name, 'cobot/stop', 'the Trigger after the cancel');
    await rest(rig);
  });

  it('stopped without sending anything when the signal is already aborted; an empty trajectory stops and holds', async () => {
    await rest(rig);
    const sentBefore = rig.standin.requests.length;
    const abort = new AbortController();
    abort.abort('a stop came first');
    const result = await rig.ctx.executeTrajectory(toJoint1(here(rig.ctx), 0.2, 1), { signal: abort.signal });
    assert.ok(result.ok, 'answered');
    assert.deepEqual([result.value.outcome, result.value.message], ['stopped', 'a stop came first: nothing was sent']);
    assert.equal(rig.standin.requests.length, sentBefore, 'no goal sent');

    const publishedBefore = rig.standin.published.length;
    const empty = await rig.ctx.executeTrajectory({ ...toJoint1(here(rig.ctx), 0.2, 1), points: [] });
    assert.ok(empty.ok, 'answered');
    assert.deepEqual(
      [empty.value.outcome, empty.value.message],
      ['stopped', 'an empty trajectory: the controller stops and holds'],
      'as the simulator answers (the controller would reject an empty goal)',
    );
    assert.equal(rig.standin.requests.length, sentBefore, 'no goal sent');
    assert.equal(rig.standin.published.length, publishedBefore + 1, 'the empty trajectory went to the topic');
  });

  it('answers unavailable naming the action after server_wait_s when it is absent, and when it does not acknowledge', async () => {
    await rest(rig);
    rig.standin.knobs.absent.add(FJT);
    const started = performance.now();
    const absent = await rig.ctx.executeTrajectory(toJoint1(here(rig.ctx), 0.2, 1));
    const absentS = (performance.now() - started) / 1000;
    rig.standin.knobs.absent.clear();
    assert.equal(absent.ok, false, 'absent: unavailable');
    if (!absent.ok) {
      assert.equal(absent.error.iface, FJT);
      assert.equal(
        absent.error.message,
        `action server ${FJT} (control_msgs/action/FollowJointTrajectory) is not available: no server within 0.3 s`,
      );
    }
    assert.ok(absentS >= 0.28 && absentS < 1.5, `waited server_wait_s (${absentS.toFixed(3)} s)`);
    assert.equal(rig.ctx.armActivity(), undefined, 'nothing counts as executing');

    rig.standin.knobs.silent.add(FJT);
    const silent = await rig.ctx.executeTrajectory(toJoint1(here(rig.ctx), 0.2, 1));
    rig.standin.knobs.silent.clear();
    assert.equal(silent.ok, false, 'silent: unavailable');
    if (!silent.ok)
      assert.equal(silent.error.message, `action server ${FJT} did not acknowledge the goal within 0.3 s`);
    assert.equal(rig.ctx.armActivity(), undefined, 'nothing counts as executing');
  });
});

describe('RclContext: compute_ik and follow_joint_trajectory with their types not installed', () => {
  let rig: Rig;
  before(async () => {
    rig = await startRig((s) => {
      s.knobs.missingTypes.add('moveit_msgs/srv/GetPositionIK');
      s.knobs.missingTypes.add('control_msgs/action/FollowJointTrajectory');
    });
  });
  after(() => rig.close());

  it('answers unavailable naming the interface and its type', async () => {
    const ik = await rig.ctx.solveIk({ ...POSE, collision_check: true });
    assert.equal(ik.ok, false, 'IK unavailable');
    if (!ik.ok)
      assert.match(
        ik.error.message,
        /^IK service \/compute_ik: cannot create a moveit_msgs\/srv\/GetPositionIK client: The message required does not exist/,
      );
    const wait = await rig.ctx.executeTrajectory(toJoint1(WORK, 0.2, 1));
    assert.equal(wait.ok, false, 'trajectory wait unavailable');
    if (!wait.ok)
      assert.match(
        wait.error.message,
        /^action server \/iiwa_arm_controller\/follow_joint_trajectory: cannot create a control_msgs\/action\/FollowJointTrajectory action client/,
      );
  });
});
