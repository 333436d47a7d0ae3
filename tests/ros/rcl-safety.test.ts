/**
 * The safety envelope and plan-then-execute on robot.backend ros2 (issue 15's ros2 part), over the
 * in-process rclnodejs STAND-IN (tests/support/rclnodejs-standin.ts, backed by a simulator that has
 * no envelope of its own, so every refusal here is armgate's rclnodejs context's): the keep-out
 * boxes in MoveIt's planning scene, targets outside the envelope refused before anything is sent
 * (moves, sequence goals, dry runs), dry runs through MoveIt's GetMotionPlan, and execution of a
 * plan MoveIt returned. The stand-in is not ROS 2 (no DDS, QoS or real typesupport; its header
 * says what else): message fields are checked here as the context hands them to rclnodejs.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { quatFromAbc } from '../../lib/kinematics/rotation.ts';
import { type JointTrajectoryMsg, MOVEIT_PLANNING_FAILED, MOVEIT_SUCCESS, secondsOf } from '../../lib/ros/messages.ts';
import { RclContext } from '../../lib/ros/rcl-context.ts';
import { type RunningServer, startServer } from '../../lib/server/start.ts';
import { catalog } from '../../handlers/index.ts';
import type { Config } from '../../lib/settings/load.ts';
import { SimContext } from '../../lib/sim/context.ts';
import { safetyStateFor } from '../../lib/safety/store.ts';
import { createTargetGuard, targetOutsideEnvelope } from '../../lib/safety/targets.ts';
import { atRest, maxDiff, post, positions, sleep, WORK } from '../support/live.ts';
import { sequenceForm } from '../support/multipart.ts';
import { FIXTURE_AMENT_PREFIX } from '../support/rcl-server.ts';
import {
  createStandin,
  motionPlanResponse,
  type RosMotionPlanRequest,
  type Standin,
} from '../support/rclnodejs-standin.ts';
import { testConfig } from '../support/server.ts';
import { type StandinGraph, serveStandinGraph } from '../support/standin-graph.ts';
import { JOINTS } from '../support/arm.ts';

/** Joint 1 at +90 degrees swings the work pose's TCP to (0, 0.4, 0.61): into the fixture. */
const INTO_FIXTURE = [1.57, 0, 0, -1.57, 0, 1.57, 0];
const SAFE_TARGET = [0.3, 0.3, 0, -1.3, 0, 1.3, 0];
const FIXTURE = { name: 'fixture', min: [-0.25, 0.3, 0], max: [0.25, 0.8, 0.9] };
const WORKSPACE = { min: [-1, -1, 0.2], max: [1, 1, 1.1] };
const TIMEOUTS = { server_wait_s: 1, fk_s: 0.5, plan_s: 2 };

interface MoveAnswer {
  success: boolean;
  message: string;
  plan?: { id: string; planner: string; start_joints: number[]; final_joints: number[]; duration_s: number };
}

/** The rclnodejs context over the stand-in, the envelope only in the context's settings (the simulator has none). */
async function rosConfig(overrides: Partial<Config['endpoints']['timeouts']> = TIMEOUTS) {
  const simConfig = await testConfig({ sim: { time_scale: 5 } });
  const withSafety = await testConfig({ safety: { workspace: WORKSPACE, keep_out: [FIXTURE], plan_ttl_s: 30 } });
  const config: Config = {
    ...simConfig,
    safety: withSafety.safety,
    robot: { ...simConfig.robot, backend: 'ros2' },
    endpoints: { ...simConfig.endpoints, timeouts: { ...simConfig.endpoints.timeouts, ...overrides } },
  };
  return { simConfig, config };
}

/** POSTs a move (or a plan's execution) and returns its 200 body. */
async function move(url: string, route: string, body: object): Promise<MoveAnswer> {
  const reply = await post<MoveAnswer>(url, route, body);
  assert.equal(reply.status, 200, `${route}: ${JSON.stringify(reply.body)}`);
  return reply.body;
}

/** The requests the stand-in received on `name` since index `from`. */
const requestsOn = (standin: Standin, name: string, from = 0) =>
  standin.requests.slice(from).filter((r) => r.name === name || r.name === `/${name}`);

describe('targets of motions the stack plans, against the envelope', () => {
  it('checks a pose target by its TCP position and refuses one in another frame', async () => {
    const config = (await rosConfig()).config;
    const safety = safetyStateFor(config);
    assert.ok(safety.ok && safety.value.envelope, 'an envelope');
    const guard = createTargetGuard(safety.value.chain, safety.value.envelope, 'base_link');
    const pose = (x: number, y: number, z: number, frameId = '') =>
      targetOutsideEnvelope(guard, { kind: 'pose', positionM: [x, y, z], frameId });
    assert.equal(pose(0.4, 0, 0.6), undefined, 'inside');
    assert.equal(pose(0.4, 0, 0.6, 'base_link'), undefined, 'inside, the planning frame named');
    assert.match(pose(0.4, 0, 1.2) ?? '', /the TCP would leave the workspace .*z above 1\.1/);
    assert.match(pose(0, 0.25, 0.5) ?? '', /keep-out zone 'fixture'/, 'within the link radius of the box');
    assert.match(pose(0.4, 0, 0.6, 'tool0') ?? '', /the target's frame 'tool0' is not the planning frame 'base_link'/);
    assert.equal(targetOutsideEnvelope(guard, { kind: 'joints', qRad: WORK }), undefined, 'work is inside');
    assert.match(
      targetOutsideEnvelope(guard, { kind: 'joints', qRad: INTO_FIXTURE }) ?? '',
      /link\d.* would enter the keep-out zone 'fixture'/,
    );
  });
});

describe('ros2: the keep-out boxes in MoveIt planning scene', () => {
  it('adds each box at start-up as a BOX collision object in the planning frame, and says so', async () => {
    const { simConfig, config } = await rosConfig();
    const sim = await SimContext.create(simConfig);
    const standin = createStandin(sim);
    const notices: string[] = [];
    const ctx = await RclContext.create(config, standin.module, { notice: (line) => notices.push(line) });
    try {
      assert.ok(ctx.keepOutScene, 'a keep-out box is configured: the context keeps the scene');
      const line = await ctx.keepOutScene.firstOutcome;
      assert.match(line, /'fixture' \(armgate_keep_out_fixture\) are collision objects of MoveIt's planning scene/);
      assert.deepEqual(notices, [line], 'one start-up line');
      const sent = requestsOn(standin, '/apply_planning_scene');
      assert.equal(sent.length, 1, 'one ApplyPlanningScene request');
      const scene = ((sent[0]?.request ?? {}) as { scene: Record<string, unknown> }).scene as {
        is_diff: boolean;
        world: { collision_objects: Record<string, unknown>[] };
      };
      assert.equal(scene.is_diff, true, 'a diff: the rest of the scene stays');
      assert.equal(scene.world.collision_objects.length, 1, 'one object per keep-out box');
      const object = scene.world.collision_objects[0] as {
        id: string;
        header: { frame_id: string };
        operation: number;
        primitives: { type: number; dimensions: Float64Array }[];
        primitive_poses: { position: { x: number; y: number; z: number }; orientation: { w: number } }[];
      };
      assert.equal(object.id, 'armgate_keep_out_fixture');
      assert.equal(object.header.frame_id, 'base_link', 'in the planning frame');
      assert.equal(object.operation, 0, 'ADD');
      assert.equal(object.primitives.length, 1, 'one primitive');
      assert.equal(object.primitives[0]?.type, 1, 'a BOX');
      assert.deepEqual(Array.from(object.primitives[0]?.dimensions ?? []), [0.5, 0.5, 0.9], 'the box edges (m)');
      const centre = object.primitive_poses[0]?.position;
      assert.ok(centre, 'the box has a pose');
      assert.ok(
        Math.abs(centre.x) < 1e-12 && Math.abs(centre.y - 0.55) < 1e-12 && Math.abs(centre.z - 0.45) < 1e-12,
        `centred in the box: ${JSON.stringify(centre)}`,
      );
      assert.equal(object.primitive_poses[0]?.orientation.w, 1, 'axis-aligned');
    } finally {
      await ctx.close();
      await sim.close();
    }
  });

  it('says in a log line when the service is not there, then adds the boxes once it appears', async () => {
    const { simConfig, config } = await rosConfig({ server_wait_s: 0.3 });
    const sim = await SimContext.create(simConfig);
    const standin = createStandin(sim);
    standin.knobs.absent.add('/apply_planning_scene');
    const notices: string[] = [];
    const ctx = await RclContext.create(config, standin.module, { notice: (line) => notices.push(line) });
    try {
      const line = await ctx.keepOutScene?.firstOutcome;
      assert.match(
        line ?? '',
        /planning scene service \/apply_planning_scene \(moveit_msgs\/srv\/ApplyPlanningScene\) is not there after 0.3 s: the keep-out boxes 'fixture' .* are added when it appears/,
      );
      assert.equal(requestsOn(standin, '/apply_planning_scene').length, 0, 'nothing sent without a server');
      standin.knobs.absent.delete('/apply_planning_scene');
      for (let i = 0; i < 60 && notices.length < 2; i++) await sleep(50);
      assert.match(notices[1] ?? '', /are collision objects of MoveIt's planning scene/, notices.join('\n'));
      assert.equal(requestsOn(standin, '/apply_planning_scene').length, 1, 'sent once it appeared');
    } finally {
      await ctx.close();
      await sim.close();
    }
  });

  it('says in a log line when the message type is not installed, and when MoveIt answers success false', async () => {
    const { simConfig, config } = await rosConfig();
    const sim = await SimContext.create(simConfig);
    for (const [prepare, expected] of [
      [
        (s: Standin) => s.knobs.missingTypes.add('moveit_msgs/srv/ApplyPlanningScene'),
        /cannot be added to MoveIt's planning scene: \/apply_planning_scene: cannot create a moveit_msgs\/srv\/ApplyPlanningScene client/,
      ],
      [
        (s: Standin) => {
          s.knobs.sceneAnswer = { success: false };
        },
        /did not apply the keep-out boxes 'fixture' .*\(success false\): they are not in its planning scene/,
      ],
    ] as const) {
      const standin = createStandin(sim);
      prepare(standin);
      const ctx = await RclContext.create(config, standin.module, { notice: () => undefined });
      try {
        assert.match((await ctx.keepOutScene?.firstOutcome) ?? '', expected);
      } finally {
        await ctx.close();
      }
    }
    await sim.close();
  });
});

describe('ros2: targets held to the envelope, dry runs through MoveIt, plans executed', () => {
  let sim: SimContext;
  let standin: Standin;
  let server: RunningServer;
  let graph: StandinGraph;
  let url: string;
  let bagRoot: string;
  before(async () => {
    bagRoot = await mkdtemp(path.join(tmpdir(), 'armgate-rcl-safety-'));
    const { simConfig, config } = await rosConfig();
    sim = await SimContext.create(simConfig);
    standin = createStandin(sim);
    const ctx = await RclContext.create(config, standin.module, { notice: () => undefined });
    graph = await serveStandinGraph(standin.module, FIXTURE_AMENT_PREFIX);
    server = await startServer({ ...config, sequences: { bagRoot } }, catalog, {
      context: ctx,
      log: () => undefined,
      runnerEnv: graph.env,
    });
    url = server.url;
  });
  after(async () => {
    await server.close();
    await graph.close();
    for (let i = 0; i < 100 && sim.armActivity(); i++) await sleep(50);
    await sim.close();
    await rm(bagRoot, { recursive: true, force: true });
  });

  /** Moves the arm back to the work position (inside the envelope) through the simulator. */
  async function backToWork(): Promise<void> {
    if (maxDiff(await positions(url), WORK) < 1e-3) return;
    const moved = await sim.moveToJoints({ joints: [...WORK], speed: 1 });
    assert.ok(moved.ok && moved.value.success, 'back at work');
    await atRest(url);
  }

  it('refuses joint, pose and named targets outside the envelope naming the zone, with nothing sent', async () => {
    await backToWork();
    const from = standin.requests.length;
    const cases: { route: string; body: object; expected: RegExp; iface: string }[] = [
      {
        route: '/robot/move/joints',
        body: { joints: INTO_FIXTURE, speed: 0.5 },
        expected:
          /outside the safety envelope: link\d.* would enter the keep-out zone 'fixture'.*nothing was sent to cobot\/move_to_joints/,
        iface: 'cobot/move_to_joints',
      },
      {
        route: '/robot/move/pose',
        body: { x: 0.4, y: 0, z: 1.15, a: 0, b: 0, c: Math.PI, speed: 0.5 },
        expected:
          /the TCP would leave the workspace at \(0\.400, 0\.000, 1\.150\) m \(z above 1\.1\); nothing was sent to cobot\/move_to_pose/,
        iface: 'cobot/move_to_pose',
      },
      {
        route: '/robot/move/pose',
        body: { x: 0, y: 0.5, z: 0.5, a: 0, b: 0, c: Math.PI, speed: 0.5, planner: 'lin' },
        expected: /the TCP would enter the keep-out zone 'fixture' at \(0\.000, 0\.500, 0\.500\) m/,
        iface: 'cobot/move_to_pose',
      },
      {
        route: '/robot/move/named',
        body: { name: 'home', speed: 0.5 },
        expected: /the TCP would leave the workspace at .* \(z above 1\.1\); nothing was sent to cobot\/move_to_named/,
        iface: 'cobot/move_to_named',
      },
    ];
    for (const { route, body, expected, iface } of cases) {
      const answer = await move(url, route, body);
      assert.equal(answer.success, false, `${route} ${JSON.stringify(body)}: ${answer.message}`);
      assert.match(answer.message, expected, `${route}: ${answer.message}`);
      assert.equal(requestsOn(standin, iface, from).length, 0, `nothing was sent to ${iface}`);
    }
    assert.ok(maxDiff(await positions(url), WORK) < 1e-3, 'the arm did not move');
  });

  it('sends a target inside the envelope to the stack as before', async () => {
    await backToWork();
    const from = standin.requests.length;
    const answer = await move(url, '/robot/move/joints', { joints: SAFE_TARGET, speed: 1 });
    assert.equal(answer.success, true, answer.message);
    assert.equal(requestsOn(standin, 'cobot/move_to_joints', from).length, 1, 'the goal was sent');
  });

  it('fails a sequence goal outside the envelope before it is sent: returncode 1 naming the zone', async () => {
    await backToWork();
    const from = standin.requests.length;
    const res = await fetch(`${url}/sequences/start`, {
      method: 'POST',
      body: sequenceForm(
        { home: { joints: WORK, speed: 1 }, waypoints: [{ joints: INTO_FIXTURE, speed: 1 }] },
        { n_iterations: '1', delay_between_iterations: '0' },
      ),
    });
    assert.equal(res.status, 200, await res.text());
    let status: { status: string; returncode?: number } = { status: 'running' };
    for (const end = Date.now() + 30_000; status.status !== 'finished' && Date.now() < end; ) {
      await sleep(100);
      status = (await (await fetch(`${url}/sequences/status`)).json()) as typeof status;
    }
    const logs = ((await (await fetch(`${url}/sequences/logs?n=200`)).json()) as { lines: string[] }).lines.join('\n');
    assert.equal(status.returncode, 1, logs);
    assert.match(
      logs,
      /iteration 1: waypoint 1 failed: the target is outside the safety envelope: .*keep-out zone 'fixture'.*nothing was sent to cobot\/move_to_joints/,
    );
    const goals = requestsOn(standin, 'cobot/move_to_joints', from);
    assert.equal(goals.length, 1, 'home was sent, the waypoint was not');
  });

  it('dry-runs a joint target through GetMotionPlan: Pilz PTP, joint constraints, scales, the start state; nothing moves', async () => {
    await backToWork();
    const from = standin.requests.length;
    const answer = await move(url, '/robot/move/joints', { joints: SAFE_TARGET, speed: 0.4, dry_run: true });
    assert.equal(answer.success, true, answer.message);
    const plan = answer.plan;
    assert.ok(plan, 'the answer carries the plan');
    assert.equal(plan.planner, 'ptp');
    assert.ok(maxDiff(plan.start_joints, WORK) < 1e-3, `starts where the arm is: ${plan.start_joints}`);
    assert.ok(maxDiff(plan.final_joints, SAFE_TARGET) < 1e-6, `ends at the target: ${plan.final_joints}`);
    const sent = requestsOn(standin, '/plan_kinematic_path', from);
    assert.equal(sent.length, 1, 'one GetMotionPlan request');
    const r = ((sent[0]?.request ?? {}) as RosMotionPlanRequest).motion_plan_request;
    assert.equal(r.pipeline_id, 'pilz_industrial_motion_planner');
    assert.equal(r.planner_id, 'PTP');
    assert.equal(r.group_name, 'iiwa_arm');
    assert.equal(r.num_planning_attempts, 1);
    assert.equal(r.allowed_planning_time, TIMEOUTS.plan_s, 'timeouts.plan_s');
    assert.equal(r.max_velocity_scaling_factor, 0.4, 'speed');
    assert.equal(r.max_acceleration_scaling_factor, 0.4, 'as speed');
    assert.equal(r.start_state.is_diff, true, 'over the current state');
    assert.deepEqual(r.start_state.joint_state.name, JOINTS);
    assert.ok(
      maxDiff(Array.from(r.start_state.joint_state.position as Float64Array), WORK) < 1e-3,
      'from the latest joint state',
    );
    assert.equal(r.goal_constraints.length, 1, 'one goal');
    const joints = r.goal_constraints[0]?.joint_constraints ?? [];
    assert.deepEqual(
      joints.map((c) => c.joint_name),
      JOINTS,
    );
    assert.deepEqual(
      joints.map((c) => c.position),
      SAFE_TARGET,
    );
    assert.ok(
      joints.every((c) => c.tolerance_above === 1e-4 && c.tolerance_below === 1e-4),
      'tight joint tolerances',
    );
    assert.equal(requestsOn(standin, 'cobot/move_to_joints', from).length, 0, 'no motion goal');
    assert.equal(requestsOn(standin, '/iiwa_arm_controller/follow_joint_trajectory', from).length, 0, 'no trajectory');
    await sleep(100);
    assert.ok(maxDiff(await positions(url), WORK) < 1e-3, 'nothing moved');
  });

  it('dry-runs a named target with its accel_scale, and refuses one outside the envelope without asking MoveIt', async () => {
    await backToWork();
    const from = standin.requests.length;
    const answer = await move(url, '/robot/move/named', {
      name: 'transport',
      speed: 0.2,
      accel_scale: 0.3,
      dry_run: true,
    });
    const sent = requestsOn(standin, '/plan_kinematic_path', from);
    assert.equal(sent.length, 1, `one GetMotionPlan request (${answer.message})`);
    const r = ((sent[0]?.request ?? {}) as RosMotionPlanRequest).motion_plan_request;
    assert.equal(r.max_velocity_scaling_factor, 0.2, 'speed');
    assert.equal(r.max_acceleration_scaling_factor, 0.3, 'accel_scale');
    assert.deepEqual(
      (r.goal_constraints[0]?.joint_constraints ?? []).map((c) => c.position),
      [0, -0.35, 0, 2.0, 0, -1.2, 0],
      "the SRDF's transport",
    );
    const before = standin.requests.length;
    for (const [route, body] of [
      ['/robot/move/named', { name: 'home', speed: 0.5, dry_run: true }],
      ['/robot/move/joints', { joints: INTO_FIXTURE, speed: 0.5, dry_run: true }],
    ] as const) {
      const refused = await move(url, route, body);
      assert.equal(refused.success, false, refused.message);
      assert.match(refused.message, /outside the safety envelope: .*(workspace|keep-out zone 'fixture')/);
      assert.match(refused.message, /nothing was sent to MoveIt, nothing moved$/);
      assert.equal(refused.plan, undefined, 'no plan');
    }
    assert.equal(requestsOn(standin, '/plan_kinematic_path', before).length, 0, 'MoveIt was not asked');
  });

  it('maps each planner of a pose dry run to its pipeline, with a pose goal of the TCP link', async () => {
    await backToWork();
    const seen: RosMotionPlanRequest[] = [];
    standin.knobs.planAnswer = (request) => {
      seen.push(request);
      return motionPlanResponse(MOVEIT_PLANNING_FAILED, undefined, 'scripted');
    };
    try {
      const pose = { x: 0.45, y: -0.1, z: 0.55, a: 0.2, b: 0, c: Math.PI, speed: 0.3 };
      const table = [
        ['ptp', 'pilz_industrial_motion_planner', 'PTP'],
        ['lin', 'pilz_industrial_motion_planner', 'LIN'],
        ['circ', 'pilz_industrial_motion_planner', 'CIRC'],
        ['ompl', 'ompl', 'RRTConnectkConfigDefault'],
        ['chomp', 'chomp', ''],
      ] as const;
      for (const [planner, pipeline, plannerId] of table) {
        const body = {
          ...pose,
          planner,
          dry_run: true,
          ...(planner === 'circ' ? { circ_center: { x: 0.45, y: 0, z: 0.55 } } : {}),
        };
        const answer = await move(url, '/robot/move/pose', body);
        assert.equal(answer.success, false, answer.message);
        const how = plannerId ? `${pipeline} ${plannerId}` : pipeline;
        assert.ok(
          answer.message.includes(`MoveIt (${how}) found no plan: scripted (MoveIt PLANNING_FAILED)`),
          answer.message,
        );
        const r = seen.at(-1)?.motion_plan_request;
        assert.ok(r, `${planner}: a request`);
        assert.equal(r.pipeline_id, pipeline, planner);
        assert.equal(r.planner_id, plannerId, planner);
        assert.equal(r.max_velocity_scaling_factor, 0.3, `${planner}: speed`);
        const goal = r.goal_constraints[0];
        const position = goal?.position_constraints?.[0];
        const orientation = goal?.orientation_constraints?.[0];
        assert.ok(position && orientation, `${planner}: a position and an orientation constraint`);
        assert.equal(position.link_name, 'flange', 'the TCP link of the endpoints file');
        assert.equal(position.header.frame_id, 'base_link', 'the planning frame');
        assert.deepEqual(position.constraint_region.primitive_poses[0]?.position, { x: 0.45, y: -0.1, z: 0.55 });
        assert.equal(orientation.link_name, 'flange');
        const q = quatFromAbc({ a: 0.2, b: 0, c: Math.PI });
        for (const k of ['x', 'y', 'z', 'w'] as const)
          assert.ok(Math.abs(orientation.orientation[k] - q[k]) < 1e-12, `${planner}: orientation ${k}`);
        if (planner === 'circ') {
          assert.equal(r.path_constraints?.name, 'center', "CIRC's auxiliary point as Pilz reads it");
          assert.deepEqual(
            r.path_constraints?.position_constraints[0]?.constraint_region.primitive_poses[0]?.position,
            {
              x: 0.45,
              y: 0,
              z: 0.55,
            },
          );
        } else assert.equal(r.path_constraints, undefined, `${planner}: no path constraints`);
      }
    } finally {
      standin.knobs.planAnswer = undefined;
    }
  });

  it('refuses a plan from MoveIt that leaves the envelope on its way, naming the point and the zone', async () => {
    await backToWork();
    const point = (positions: readonly number[], t: number) => ({
      positions: [...positions],
      velocities: [],
      accelerations: [],
      effort: [],
      time_from_start: { sec: Math.floor(t), nanosec: Math.round((t % 1) * 1e9) },
    });
    // Reversed joint order, as a stack may answer: the context takes joints by name.
    const order = [6, 5, 4, 3, 2, 1, 0];
    const reorder = (q: readonly number[]) => order.map((j) => q[j] ?? 0);
    const through: JointTrajectoryMsg = {
      header: { stamp: { sec: 0, nanosec: 0 }, frame_id: '' },
      joint_names: order.map((j) => JOINTS[j] ?? ''),
      points: [point(reorder(WORK), 0), point(reorder(INTO_FIXTURE), 1), point(reorder(SAFE_TARGET), 2)],
    };
    standin.knobs.planAnswer = () => motionPlanResponse(MOVEIT_SUCCESS, through);
    try {
      const answer = await move(url, '/robot/move/joints', { joints: SAFE_TARGET, speed: 0.5, dry_run: true });
      assert.equal(answer.success, false, answer.message);
      assert.match(
        answer.message,
        /the ptp plan from MoveIt would leave the safety envelope at point 2 of 3 \(t = 1\.000 s\): .*keep-out zone 'fixture'.*; nothing moved$/,
      );
      assert.equal(answer.plan, undefined, 'no plan kept');
    } finally {
      standin.knobs.planAnswer = undefined;
    }
  });

  it('executes a plan from MoveIt: exactly its trajectory goes to the controller with wait, once', async () => {
    await backToWork();
    let planned: JointTrajectoryMsg | undefined;
    standin.knobs.planAnswer = async () => {
      const p = await sim.planMotion({ kind: 'joints', goal: { joints: SAFE_TARGET, speed: 0.8 } });
      assert.ok(p.ok && p.value.success, 'the simulator planned');
      planned = p.value.trajectory;
      return motionPlanResponse(MOVEIT_SUCCESS, planned);
    };
    let id: string;
    try {
      const answer = await move(url, '/robot/move/joints', { joints: SAFE_TARGET, speed: 0.8, dry_run: true });
      assert.equal(answer.success, true, answer.message);
      assert.ok(answer.plan && planned, 'a plan');
      id = answer.plan.id;
      assert.equal(
        answer.plan.duration_s,
        Number(secondsOf(planned.points.at(-1)?.time_from_start ?? { sec: 0, nanosec: 0 }).toFixed(3)),
        "MoveIt's duration",
      );
    } finally {
      standin.knobs.planAnswer = undefined;
    }
    const from = standin.requests.length;
    const executed = await move(url, `/robot/plans/${id}/execute`, {});
    assert.equal(executed.success, true, executed.message);
    const goals = requestsOn(standin, '/iiwa_arm_controller/follow_joint_trajectory', from);
    assert.equal(goals.length, 1, 'one FollowJointTrajectory goal');
    const sent = ((goals[0]?.request ?? {}) as { trajectory: Record<string, unknown> }).trajectory as {
      header: { stamp: { sec: number; nanosec: number } };
      joint_names: string[];
      points: {
        positions: Float64Array;
        velocities: Float64Array;
        time_from_start: { sec: number; nanosec: number };
      }[];
    };
    assert.deepEqual(sent.header.stamp, { sec: 0, nanosec: 0 }, "MoveIt's stamp cleared: it starts when executed");
    assert.deepEqual(sent.joint_names, JOINTS);
    assert.equal(sent.points.length, planned?.points.length, 'every point of the plan');
    for (const [i, p] of sent.points.entries()) {
      const expected: JointTrajectoryMsg['points'][number] | undefined = planned?.points[i];
      assert.deepEqual(Array.from(p.positions), expected?.positions, `point ${i} positions`);
      assert.deepEqual(Array.from(p.velocities), expected?.velocities, `point ${i} velocities`);
      assert.deepEqual(p.time_from_start, expected?.time_from_start, `point ${i} time`);
    }
    assert.equal(requestsOn(standin, 'cobot/move_to_joints', from).length, 0, 'not through the motion action');
    assert.ok(maxDiff(await positions(url), SAFE_TARGET) < 1e-3, 'the arm is at the plan end');
    const res = await fetch(`${url}/robot/plans/${id}/execute`, { method: 'POST' });
    assert.equal(res.status, 409, 'a plan runs once');
  });
});

describe("ros2: the envelope's TCP chain from the stack's robot_description", () => {
  /** Starts a ros2 server whose tcp_link is the stack's `tcp` (not in the bundled URDF); the stack may serve its URDF. */
  async function prepare(stackUrdf: string | undefined) {
    const { simConfig, config } = await rosConfig();
    const sim = await SimContext.create(simConfig);
    const standin = createStandin(sim);
    const srdfXml = await readFile(new URL('../../share/armgate/srdf/iiwa7.srdf', import.meta.url), 'utf8');
    standin.knobs.srdf = {
      node: '/move_group',
      parameter: 'robot_description_semantic',
      xml: srdfXml,
      ...(stackUrdf ? { more: { robot_description: stackUrdf } } : {}),
    };
    const withTcp: Config = {
      ...config,
      endpoints: {
        ...config.endpoints,
        tcp_link: 'tcp',
        srdf: { node: '/move_group', parameter: 'robot_description_semantic' },
      },
      groupStates: undefined,
    };
    const ctx = await RclContext.create(withTcp, standin.module, { notice: () => undefined });
    return { sim, start: () => startServer(withTcp, catalog, { context: ctx, log: () => undefined }) };
  }

  it('reads the stack URDF when the bundled model lacks the tcp link, and holds the TCP to the workspace', async () => {
    const bundled = await readFile(new URL('../../share/armgate/urdf/iiwa7.urdf', import.meta.url), 'utf8');
    // The stack's model: the same arm with its tool centre point 0.2 m beyond the flange.
    const stackUrdf = bundled.replace(
      '</robot>',
      '<link name="tcp"/><joint name="tcp_joint" type="fixed"><parent link="flange"/><child link="tcp"/>' +
        '<origin xyz="0 0 0.2" rpy="0 0 0"/></joint></robot>',
    );
    const { sim, start } = await prepare(stackUrdf);
    const server = await start();
    try {
      const safety = (await (await fetch(`${server.url}/robot/safety`)).json()) as { workspace?: unknown };
      assert.ok(safety.workspace, 'the envelope is in force');
      // At work the flange points down at about z 0.6; the tcp 0.2 m lower: inside. A pose target above the
      // workspace is refused before anything is sent.
      const refused = await move(server.url, '/robot/move/pose', { x: 0.4, y: 0, z: 1.2, b: Math.PI });
      assert.equal(refused.success, false, 'a TCP target above the workspace is refused');
      assert.match(refused.message, /workspace/, refused.message);
    } finally {
      await server.close();
      await sim.close();
    }
  });

  it('refuses to start, saying both, when neither the bundled model nor the stack has the tcp link', async () => {
    const { sim, start } = await prepare(undefined);
    try {
      await assert.rejects(start(), (e: Error) => {
        assert.match(e.message, /envelope needs the TCP chain/, e.message);
        assert.match(e.message, /robot_description could not be read/, e.message);
        return true;
      });
    } finally {
      await sim.close();
    }
  });
});
