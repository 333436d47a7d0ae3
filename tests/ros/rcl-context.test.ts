import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  assertNear,
  call,
  checkJointStates,
  checkMoves,
  checkPose,
  checkPositions,
  checkStopCancels,
  checkTrajectoryAndBusyRule,
  detailOf,
  JOINTS,
  jointState,
  type MotionBody,
  moveOk,
  OTHER,
  sleep,
  WORK,
} from '../support/rcl-checks.ts';
import type { RosJointState } from '../support/rclnodejs-standin.ts';
import { type RclTestServer, startRclTestServer } from '../support/rcl-server.ts';

// The rclnodejs context (lib/ros/rcl-context.ts) driven end to end through the handlers of a live
// server, against an in-process STAND-IN for the rclnodejs module backed by the simulator
// (tests/support/rclnodejs-standin.ts). The stand-in is not ROS 2: it does not cover DDS
// discovery, QoS, real message typesupport, serialization or the rcl executor (its header lists
// what else); the suites of tests/ros2 (npm run test:ros2) run the same checks on a real graph.
// One server at a time: the ROS context is the one singleton of the process.

const TIMEOUTS = { server_wait_s: 0.3, fk_s: 0.3 };

describe('rclnodejs context over the stand-in: every handler end to end', () => {
  let t: RclTestServer;
  let url: string;
  const trajectoryLog = async () =>
    (await call<{ lines: string[] }>(url, '/trajectory/logs?n=300')).body.lines.join('\n');
  before(async () => {
    t = await startRclTestServer({ sim: { sim: { time_scale: 5 } }, timeouts: TIMEOUTS, srdfFromNode: true });
    url = t.url;
  });
  after(async () => {
    await t.close();
    assert.deepEqual(
      t.standin.lifecycle,
      { init: 1, shutdown: 1 },
      'rclnodejs initialized once and shut down with the server',
    );
  });

  it('serves joint states in J1..J7 order from messages with typed arrays', async () => {
    const state = await checkJointStates(url);
    assertNear(state.position, WORK, 1e-6, 'initial position');
  });

  it('takes joint states by name: a reordered message with an extra joint gives the same J1..J7 answer', async () => {
    const before = await jointState(url);
    t.standin.knobs.jointStates = (msg: RosJointState) => {
      const order = [6, 2, 0, 4, 1, 5, 3];
      return {
        ...msg,
        name: ['gripper', ...order.map((i) => msg.name[i] ?? '')],
        position: Float64Array.from([0.05, ...order.map((i) => msg.position[i] ?? 0)]),
        velocity: Float64Array.from([0, ...order.map((i) => msg.velocity[i] ?? 0)]),
        effort: Float64Array.from([1, ...order.map((i) => msg.effort[i] ?? 0)]),
      };
    };
    try {
      await sleep(50);
      const state = await jointState(url);
      assert.deepEqual(state.name, JOINTS);
      assertNear(state.position, before.position, 1e-9, 'reordered');
      assertNear(state.effort, before.effort, 1e-6, 'efforts follow their joints');
    } finally {
      t.standin.knobs.jointStates = undefined;
    }
  });

  it('answers 503 naming a joint the joint states lack', async () => {
    t.standin.knobs.jointStates = (msg) => ({
      ...msg,
      name: msg.name.filter((n) => n !== 'joint4'),
      position: msg.position.filter((_, i) => i !== 3),
      velocity: msg.velocity.filter((_, i) => i !== 3),
      effort: msg.effort.filter((_, i) => i !== 3),
    });
    try {
      await sleep(50);
      const reply = await call(url, '/robot/joint_states');
      assert.equal(reply.status, 503);
      assert.match(detailOf(reply), /\/joint_states lack joint4/);
    } finally {
      t.standin.knobs.jointStates = undefined;
    }
    await sleep(50);
    await checkJointStates(url);
  });

  it('computes the pose through GetPositionFK (Float64Array positions, TCP link in the planning frame), as the simulator does', async () => {
    const position = await checkPose(url);
    const fk = t.standin.requests.filter((r) => r.name === '/compute_fk').at(-1)?.request as {
      fk_link_names: string[];
      header: { frame_id: string };
      robot_state: { joint_state: { position: unknown } };
    };
    assert.deepEqual(fk.fk_link_names, ['flange']);
    assert.equal(fk.header.frame_id, 'base_link');
    assert.ok(fk.robot_state.joint_state.position instanceof Float64Array);
    const direct = await t.sim.computeFk({
      header: { stamp: { sec: 0, nanosec: 0 }, frame_id: 'base_link' },
      fk_link_names: ['flange'],
      robot_state: { joint_state: { name: [...JOINTS], position: [...WORK] } },
    });
    assert.ok(direct.ok);
    const p = direct.value.pose_stamped[0]?.pose.position;
    assertNear([position.x, position.y, position.z], [p?.x ?? 0, p?.y ?? 0, p?.z ?? 0], 1e-6, 'TCP position');
  });

  it('answers 503 naming the parameter service while the SRDF node is absent, then lists its group states', async () => {
    t.standin.knobs.absent.add('/move_group/get_parameters');
    const missing = await call(url, '/robot/positions');
    t.standin.knobs.absent.clear();
    assert.equal(missing.status, 503);
    assert.match(detailOf(missing), /\/move_group\/get_parameters.*not available.*0\.3 s/);
    await checkPositions(url);
  });

  it('moves through the action servers and the named-pose service (200, success true), goals per the stack layouts', async () => {
    await checkMoves(url);
    const goal = t.standin.requests.filter((r) => r.name === 'cobot/move_to_joints').at(-1)?.request as {
      joints: unknown;
      speed: number;
    };
    assert.ok(goal.joints instanceof Float64Array && goal.joints.length === 7);
    assert.equal(goal.speed, Math.fround(0.5));
    await call(url, '/robot/move/pose', {
      x: 0.45,
      y: 0.05,
      z: 0.55,
      a: 0,
      b: Math.PI,
      c: 0,
      planner: 'lin',
      speed: 0.3,
    }).then((r) => assert.equal((r.body as MotionBody).success, true, JSON.stringify(r.body)));
    const log = await trajectoryLog();
    assert.match(log, /goal on cobot\/move_to_joints accepted/);
    assert.match(log, /goal on cobot\/move_to_pose succeeded/);
    assert.match(log, /call of cobot\/move_to_named succeeded/);
  });

  it('answers a move to where the arm rests at once, success true, without a goal to the stack; 2 mrad away it sends one', async () => {
    const here = (await jointState(url)).position;
    const goals = () => t.standin.requests.filter((r) => r.name === 'cobot/move_to_joints').length;
    const before = goals();
    const stay = await call<MotionBody>(url, '/robot/move/joints', { joints: here, speed: 0.5 });
    assert.equal(stay.status, 200);
    assert.equal(stay.body.success, true, JSON.stringify(stay.body));
    assert.match(stay.body.message, /already at the target .*nothing was sent to cobot\/move_to_joints/);
    assert.equal(goals(), before, 'no MoveToJoints goal for a move to where the arm is');
    const near = here.map((q, i) => (i === 0 ? q + 2e-3 : q));
    const moved = await call<MotionBody>(url, '/robot/move/joints', { joints: near, speed: 0.5 });
    assert.equal(moved.body.success, true, JSON.stringify(moved.body));
    assert.equal(goals(), before + 1, 'a target 2 mrad away is a goal to the stack');
    await moveOk(url, '/robot/move/named', { name: 'work', speed: 0.5 });
  });

  it('answers a move to where the arm rests by the next joint state when the latest is late, without a goal', async () => {
    const here = (await jointState(url)).position;
    const goals = () => t.standin.requests.filter((r) => r.name === 'cobot/move_to_joints').length;
    const before = goals();
    let late = true;
    t.standin.knobs.jointStates = (msg) => (late ? undefined : msg);
    try {
      // The latest state is now older than the 50 ms a motion acts on, the topic still alive (within 500 ms).
      await sleep(120);
      const answer = call<MotionBody>(url, '/robot/move/joints', { joints: here, speed: 0.5 });
      await sleep(30);
      late = false;
      const stay = await answer;
      assert.equal(stay.status, 200);
      assert.equal(stay.body.success, true, JSON.stringify(stay.body));
      assert.match(stay.body.message, /already at the target .*nothing was sent to cobot\/move_to_joints/);
      assert.equal(goals(), before, 'no MoveToJoints goal for a move to where the arm is, however late its states');
    } finally {
      t.standin.knobs.jointStates = undefined;
    }
  });

  it('moves to a taught position as a MoveToJoints goal (the named-pose service knows SRDF names only); SRDF names stay read-only', async () => {
    const taught = [0.3, 0.4, 0, -1.3, 0, 1.2, 0.1];
    const joints = Object.fromEntries(JOINTS.map((name, i) => [name, taught[i]]));
    const put = async (name: string, body: unknown) =>
      fetch(`${url}/robot/positions/${name}`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    assert.equal((await put('home', {})).status, 409, "the SRDF read from the stack's node owns home");
    const saved = await put('ros_pick', { joints });
    assert.equal(saved.status, 200, await saved.text());
    const listed = await call<{ name: string; source: string }[]>(url, '/robot/positions');
    assert.ok(listed.body.some((p) => p.name === 'ros_pick' && p.source === 'taught'));
    const named = t.standin.requests.filter((r) => r.name === 'cobot/move_to_named').length;
    const moved = await call<MotionBody>(url, '/robot/move/named', { name: 'ros_pick', speed: 0.5 });
    assert.equal(moved.body.success, true, JSON.stringify(moved.body));
    const goal = t.standin.requests.filter((r) => r.name === 'cobot/move_to_joints').at(-1)?.request as {
      joints: Float64Array;
    };
    assertNear(Array.from(goal.joints), taught, 1e-12, 'the goal carries the taught angles');
    assert.equal(
      t.standin.requests.filter((r) => r.name === 'cobot/move_to_named').length,
      named,
      'the named-pose service was not called for a taught name',
    );
    assertNear((await jointState(url)).position, taught, 2e-3, 'at the taught position');
    await moveOk(url, '/robot/move/named', { name: 'work', speed: 0.5 });
  });

  it('keeps a failed or rejected goal a 200 with success false and the reason', async () => {
    const start = (await jointState(url)).position;
    t.standin.knobs.failGoals = 'planning failed: no IK solution';
    const failed = await call<MotionBody>(url, '/robot/move/joints', { joints: OTHER, speed: 0.5 });
    t.standin.knobs.failGoals = undefined;
    assert.deepEqual(
      [failed.status, failed.body],
      [200, { success: false, message: 'planning failed: no IK solution' }],
    );
    t.standin.knobs.rejectGoals = true;
    const rejected = await call<MotionBody>(url, '/robot/move/pose', { x: 0.5, y: 0, z: 0.5, b: Math.PI });
    t.standin.knobs.rejectGoals = false;
    assert.equal(rejected.status, 200);
    assert.match(rejected.body.message, /rejected the goal/);
    const unreachable = await call<MotionBody>(url, '/robot/move/pose', { x: 2, y: 0, z: 0.5, b: Math.PI });
    assert.deepEqual([unreachable.status, unreachable.body.success], [200, false]);
    const circ = await call<MotionBody>(url, '/robot/move/pose', {
      x: 0.5,
      y: 0,
      z: 0.5,
      b: Math.PI,
      planner: 'circ',
      circ_interim: { x: 0.55, y: 0.05, z: 0.5 },
    });
    assert.equal(circ.status, 200);
    assert.match(circ.body.message, /no auxiliary point: circ_interim/);
    assertNear((await jointState(url)).position, start, 1e-4, 'nothing moved');
  });

  it('cancels the goal in flight on POST /stop, then calls the stop service', async () => {
    const cancelsBefore = t.standin.cancels.length;
    const timelineBefore = t.standin.timeline.length;
    await checkStopCancels(url);
    assert.deepEqual(t.standin.cancels.slice(cancelsBefore), ['cobot/move_to_joints']);
    // The hold point reaches the controller first: a cancel makes the real controller hold where the arm is at once.
    assert.deepEqual(
      t.standin.timeline.slice(timelineBefore, timelineBefore + 2),
      ['publish /iiwa_arm_controller/joint_trajectory', 'cancel cobot/move_to_joints'],
      'the hold point, then the cancel',
    );
    const names = t.standin.requests.map((r) => r.name);
    assert.equal(names.at(-1), 'cobot/stop', 'the Trigger after the cancel');
    assert.match(await trajectoryLog(), /goal on cobot\/move_to_joints cancelled: stopped/);
    await call(url, '/robot/move/named', { name: 'work', speed: 0.5 });
  });

  it('answers 503 naming the interface when a server is absent or does not answer in time', async () => {
    const cases: [string, 'absent' | 'silent', () => Promise<{ status: number; body: unknown }>, RegExp][] = [
      [
        '/compute_fk',
        'absent',
        () => call(url, '/robot/pose'),
        /FK service \/compute_fk \(moveit_msgs\/srv\/GetPositionFK\) is not available/,
      ],
      ['/compute_fk', 'silent', () => call(url, '/robot/pose'), /FK service \/compute_fk did not answer within 0\.3 s/],
      [
        'cobot/move_to_joints',
        'absent',
        () => call(url, '/robot/move/joints', { joints: OTHER }),
        /action server cobot\/move_to_joints .* not available/,
      ],
      [
        'cobot/move_to_pose',
        'silent',
        () => call(url, '/robot/move/pose', { x: 0.5, y: 0, z: 0.5, b: Math.PI }),
        /cobot\/move_to_pose did not acknowledge the goal within 0\.3 s/,
      ],
      [
        'cobot/move_to_named',
        'absent',
        () => call(url, '/robot/move/named', { name: 'home' }),
        /cobot\/move_to_named .* not available/,
      ],
    ];
    for (const [name, how, request, expected] of cases) {
      t.standin.knobs[how].add(name);
      try {
        const reply = await request();
        assert.equal(reply.status, 503, `${name} ${how}`);
        assert.match(detailOf(reply), expected);
      } finally {
        t.standin.knobs[how].clear();
      }
    }
    t.standin.knobs.absent.add('cobot/stop');
    const stop = await call<{ planner_stopped: boolean; message: string }>(url, '/stop', {});
    t.standin.knobs.absent.clear();
    assert.deepEqual([stop.status, stop.body.planner_stopped], [200, false]);
    assert.match(stop.body.message, /cobot\/stop .*not available/);
  });

  it('publishes trajectories (Float64Array fields) on the controller topic, with the 409 rule around them', async () => {
    await checkTrajectoryAndBusyRule(url, 2);
    const sent = t.standin.published.find(
      (m) =>
        (m as { points: unknown[] }).points.length === 1 &&
        (m as { points: { time_from_start: { sec: number } }[] }).points[0]?.time_from_start.sec === 2,
    ) as { joint_names: string[]; points: { positions: unknown }[] } | undefined;
    assert.ok(sent, 'the trajectory reached the topic');
    assert.deepEqual(sent.joint_names, JOINTS);
    assert.ok(sent.points[0]?.positions instanceof Float64Array);
    assert.match(
      await trajectoryLog(),
      /published 1 point\(s\) \(2\.000 s\) on \/iiwa_arm_controller\/joint_trajectory/,
    );
  });

  it('solves IK on request through compute_ik (POST /robot/ik): the current pose gives back the current joints', async () => {
    const pose = await call<{
      position: { x: number; y: number; z: number };
      orientation: { euler_rad: { a: number; b: number; c: number } };
    }>(url, '/robot/pose');
    assert.equal(pose.status, 200, detailOf(pose));
    const here = (await jointState(url)).position;
    const { position: p, orientation } = pose.body;
    const solved = await call<{ success: boolean; joints?: number[]; message: string }>(url, '/robot/ik', {
      ...p,
      ...orientation.euler_rad,
      seed: here,
    });
    assert.equal(solved.status, 200, detailOf(solved));
    assert.equal(solved.body.success, true, solved.body.message);
    assertNear(solved.body.joints ?? [], here, 1e-3, 'IK of the current pose seeded there');
    const sent = t.standin.requests.filter((r) => r.name === '/compute_ik').at(-1)?.request as {
      ik_request: { ik_link_name: string; avoid_collisions: boolean };
    };
    assert.deepEqual(
      [sent.ik_request.ik_link_name, sent.ik_request.avoid_collisions],
      ['flange', true],
      'the tcp_link; collision_check defaults to true',
    );
    const far = await call<{ success: boolean; message: string }>(url, '/robot/ik', { x: 2, y: 0, z: 0.5 });
    assert.deepEqual([far.status, far.body.success], [200, false], far.body.message);
    assert.match(far.body.message, /\(MoveIt NO_IK_SOLUTION\)/);
    t.standin.knobs.absent.add('/compute_ik');
    const absent = await call(url, '/robot/ik', { ...p, ...orientation.euler_rad });
    t.standin.knobs.absent.clear();
    assert.equal(absent.status, 503, 'no IK service');
    assert.match(detailOf(absent), /\/compute_ik \(moveit_msgs\/srv\/GetPositionIK\) is not available/);
  });

  it('confirms completion through follow_joint_trajectory (POST /trajectory/send with wait): finished, then stopped by /stop', async () => {
    const start = (await jointState(url)).position;
    const end = start.map((q, i) => (i === 6 ? q + 0.1 : q));
    const done = await call<{ status: string; outcome: string; message: string; duration_s: number }>(
      url,
      '/trajectory/send',
      { points: [{ positions: end, time_from_start: 1 }], wait: true },
    );
    assert.equal(done.status, 200, detailOf(done));
    assert.deepEqual([done.body.status, done.body.outcome], ['sent', 'finished'], done.body.message);
    assert.ok(done.body.duration_s >= 0.15, `answered after the trajectory's ${1 / 5} s (${done.body.duration_s} s)`);
    assertNear((await jointState(url)).position, end, 2e-3, 'at the last point');
    const goal = t.standin.requests.filter((r) => r.name === '/iiwa_arm_controller/follow_joint_trajectory').at(-1);
    assert.ok(goal, 'the trajectory went to the action, not only the topic');
    const cancelsBefore = t.standin.cancels.length;
    const waited = call<{ outcome: string; message: string }>(url, '/trajectory/send', {
      points: [{ positions: start, time_from_start: 20 }],
      wait: true,
    });
    await sleep(300);
    const timelineBefore = t.standin.timeline.length;
    assert.equal((await call(url, '/stop', {})).status, 200, 'stop');
    assert.equal(
      t.standin.timeline[timelineBefore],
      'publish /iiwa_arm_controller/joint_trajectory',
      'the hold point first',
    );
    const stopped = await waited;
    assert.equal(stopped.status, 200, detailOf(stopped));
    assert.equal(stopped.body.outcome, 'stopped', stopped.body.message);
    // The hold point replaced the goal's trajectory on the controller, which ends the goal there: a cancel would make
    // joint_trajectory_controller hold where the arm is at once, without braking.
    assert.deepEqual(t.standin.cancels.slice(cancelsBefore), [], 'the goal was not cancelled on the controller');
    assert.match(
      await trajectoryLog(),
      /not cancelled, the hold point on the controller's topic replaced its trajectory/,
    );
    const held = (await jointState(url)).position;
    await sleep(300);
    assertNear((await jointState(url)).position, held, 1e-4, 'holding after the stop');
    await call(url, '/robot/move/named', { name: 'work', speed: 0.5 });
  });

  it('lists the recordable topics of the graph and delivers their messages as plain data', async () => {
    t.standin.knobs.extraTopics.push(
      { name: '/other_arm/joint_states', types: ['sensor_msgs/msg/JointState'] },
      { name: '/camera/image', types: ['sensor_msgs/msg/Image'] },
    );
    const names = t.context.topics().map((x) => x.name);
    assert.deepEqual(names, [
      '/joint_states',
      '/iiwa_arm_controller/joint_trajectory',
      // robot_state_publisher's topics (the stand-in's graph is the simulator's, which offers them).
      '/robot_description',
      '/tf_static',
      '/tf',
      '/other_arm/joint_states',
    ]);
    const got: unknown[] = [];
    const unsubscribe = t.context.subscribe('/joint_states', (msg) => got.push(msg));
    await sleep(60);
    unsubscribe();
    assert.ok(got.length > 0);
    assert.ok(
      Array.isArray((got[0] as { position: unknown }).position),
      'plain arrays (IPC and the bag writer take them)',
    );
  });
});
