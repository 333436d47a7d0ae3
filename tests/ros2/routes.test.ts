/**
 * Every route and tool of armgate on `robot.backend: ros2` over real DDS: armgate as its users start it
 * (server.ts, its own process) against the test stack of tests/ros/stack (real ROS 2 nodes, the
 * original stack's interfaces and types), both on this suite's ROS domain. What armgate sent is
 * checked from the stack's side (its event lines), what the user sees from the HTTP and MCP answers.
 * Run by `npm run test:ros2`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { mcpTransport } from '../support/mcp.ts';
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
  setOverride,
  jointState,
  type MotionBody,
  OTHER,
  sleep,
  WORK,
} from '../support/rcl-checks.ts';
import { openSse } from '../support/sse.ts';
import { startRos2Armgate, type Ros2Armgate } from './support/armgate.ts';
import { requireRos2, type StackEvent, TestStack, useDomain } from './support/stack.ts';

requireRos2();
useDomain(0);

const on = (suffix: string) => (e: StackEvent) => typeof e.iface === 'string' && e.iface.endsWith(suffix);

interface TrajectoryAnswer {
  status: string;
  points: number;
  outcome?: string;
  message?: string;
}

describe('armgate on ros2 over real DDS: every route and tool against the test stack', () => {
  const stack = new TestStack(['--shuffle']);
  let armgate: Ros2Armgate;
  let url: string;
  before(async () => {
    await stack.start();
    armgate = await startRos2Armgate();
    url = armgate.url;
    const moved = await call<MotionBody>(url, '/robot/move/named', { name: 'work', speed: 0.5 });
    assert.equal(moved.status, 200, detailOf(moved));
    assert.equal(moved.body.success, true, moved.body.message);
  });
  after(async () => {
    const code = await armgate?.close();
    await stack.stop();
    assert.equal(code, 0, `armgate exit code; stderr: ${armgate?.run.err().slice(-2000)}`);
  });

  it("serves joint states in J1..J7 order from the stack's shuffled /joint_states", async () => {
    const state = await checkJointStates(url);
    assertNear(state.position, (await stack.state()).positions, 0.02, 'the stack and armgate agree');
  });

  it('computes the TCP pose through /compute_fk', async () => {
    const from = stack.events.length;
    await checkPose(url);
    await stack.waitFor(on('compute_fk'), 2000, from);
  });

  it("lists the named positions from move_group's robot_description_semantic", () => checkPositions(url));

  it("moves through the stack's actions and named-pose service; the goals carry the targets", async () => {
    const from = stack.events.length;
    await checkMoves(url);
    const goals = stack.since(from, 'goal');
    const joints = goals.find(on('move_to_joints'));
    assert.ok(joints, `a move_to_joints goal among ${JSON.stringify(goals.map((g) => g.iface))}`);
    assert.ok(stack.since(from, 'service').some(on('move_to_named')), 'the named-pose service was called');
    const pose = await call<MotionBody>(url, '/robot/pose');
    assert.equal(pose.status, 200);
  });

  it('teaches a position and moves to it as a MoveToJoints goal (the named-pose service knows SRDF names only); SRDF names are read-only', async () => {
    const put = async (name: string, body: unknown) => {
      const res = await fetch(`${url}/robot/positions/${name}`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: res.status, text: await res.text() };
    };
    assert.equal((await put('home', {})).status, 409, "move_group's SRDF owns home");
    const joints = Object.fromEntries(OTHER.map((q, i) => [`joint${i + 1}`, q]));
    const saved = await put('ros2_taught', { joints });
    assert.equal(saved.status, 200, saved.text);
    const listed = await call<{ name: string; source: string }[]>(url, '/robot/positions');
    assert.ok(
      listed.body.some((p) => p.name === 'ros2_taught' && p.source === 'taught'),
      JSON.stringify(listed.body),
    );
    const from = stack.events.length;
    const moved = await call<MotionBody>(url, '/robot/move/named', { name: 'ros2_taught', speed: 0.5 });
    assert.equal(moved.status, 200, detailOf(moved));
    assert.equal(moved.body.success, true, moved.body.message);
    assert.ok(stack.since(from, 'goal').some(on('move_to_joints')), 'a MoveToJoints goal carried the taught angles');
    assert.ok(!stack.since(from, 'service').some(on('move_to_named')), 'the named-pose service was not called');
    assertNear((await jointState(url)).position, OTHER, 5e-3, 'at the taught position');
    const deleted = await fetch(`${url}/robot/positions/ros2_taught`, { method: 'DELETE' });
    assert.equal(deleted.status, 200, await deleted.text());
    await call(url, '/robot/move/named', { name: 'work', speed: 0.5 });
  });

  it('moves to a Cartesian pose through cobot/move_to_pose', async () => {
    const current = await checkPose(url);
    const from = stack.events.length;
    const moved = await call<MotionBody>(url, '/robot/move/pose', {
      x: current.x,
      y: current.y + 0.05,
      z: current.z - 0.05,
      speed: 0.5,
    });
    assert.equal(moved.status, 200, detailOf(moved));
    assert.equal(moved.body.success, true, moved.body.message);
    await stack.waitFor(on('move_to_pose'), 2000, from);
    const after = await checkPose(url);
    assert.ok(Math.abs(after.y - (current.y + 0.05)) < 0.005, `y ${after.y}`);
    assert.ok(Math.abs(after.z - (current.z - 0.05)) < 0.005, `z ${after.z}`);
    await call(url, '/robot/move/named', { name: 'work', speed: 0.5 });
  });

  it('solves IK through /compute_ik: the current pose gives back joints whose FK is that pose; nothing moves', async () => {
    const before = (await jointState(url)).position;
    const pose = await call<{
      position: { x: number; y: number; z: number };
      orientation: { euler_rad: Record<string, number> };
    }>(url, '/robot/pose');
    const { x, y, z } = pose.body.position;
    const { a, b, c } = pose.body.orientation.euler_rad;
    const from = stack.events.length;
    const ik = await call<{ success: boolean; joints: number[]; message: string }>(url, '/robot/ik', {
      x,
      y,
      z,
      a,
      b,
      c,
    });
    assert.equal(ik.status, 200, detailOf(ik));
    assert.equal(ik.body.success, true, ik.body.message);
    assert.equal(ik.body.joints.length, 7);
    await stack.waitFor(on('compute_ik'), 2000, from);
    assertNear((await jointState(url)).position, before, 1e-3, 'the arm did not move');
  });

  it('cancels the goal in flight on POST /stop, then calls cobot/stop, and the arm holds', async () => {
    const from = stack.events.length;
    await checkStopCancels(url, () =>
      stack.waitFor((e) => e.event === 'goal' && e.iface === 'move_to_joints', 10_000, from),
    );
    await stack.waitFor((e) => e.event === 'cancel', 2000, from);
    await stack.waitFor((e) => e.event === 'stop', 2000, from);
    assert.equal((await stack.state()).moving, false, 'the stack says the arm is at rest');
    await call(url, '/robot/move/named', { name: 'work', speed: 0.5 });
  });

  it("publishes trajectories on the controller's topic, with the 409 rule around them", async () => {
    const from = stack.events.length;
    await checkTrajectoryAndBusyRule(url, 2);
    const received = stack.since(from, 'trajectory');
    assert.ok(received.length >= 1, 'the controller received the trajectory');
    assert.deepEqual([...((received[0]?.joint_names ?? []) as string[])].sort(), [
      'joint1',
      'joint2',
      'joint3',
      'joint4',
      'joint5',
      'joint6',
      'joint7',
    ]);
    await call(url, '/robot/move/named', { name: 'work', speed: 0.5 });
  });

  it('sends a CSV trajectory to the controller', async () => {
    const start = (await jointState(url)).position;
    const end = start.map((q, i) => (i === 5 ? q - 0.1 : q));
    const csv = `time_from_start,${start.map((_, i) => `joint${i + 1}`).join(',')}\n1.5,${end.join(',')}\n`;
    const form = new FormData();
    form.append('file', new Blob([csv], { type: 'text/csv' }), 'points.csv');
    const res = await fetch(`${url}/trajectory/send_csv?wait=true`, { method: 'POST', body: form });
    const body = (await res.json()) as TrajectoryAnswer;
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.equal(body.outcome, 'finished', body.message);
    assertNear((await jointState(url)).position, end, 2e-3, 'at the CSV end');
  });

  it('waits for the controller through FollowJointTrajectory: finished, stopped by /stop, preempted by a newer goal', async () => {
    const start = (await jointState(url)).position;
    const end = start.map((q, i) => (i === 6 ? q + 0.15 : q));
    const from = stack.events.length;
    const finished = await call<TrajectoryAnswer>(url, '/trajectory/send', {
      points: [{ positions: end, time_from_start: 1 }],
      wait: true,
    });
    assert.equal(finished.status, 200, detailOf(finished));
    assert.equal(finished.body.outcome, 'finished', finished.body.message);
    await stack.waitFor(on('follow_joint_trajectory'), 2000, from);
    assertNear((await jointState(url)).position, end, 2e-3, 'at the end');

    const slow = call<TrajectoryAnswer>(url, '/trajectory/send', {
      points: [{ positions: start, time_from_start: 4 }],
      wait: true,
    });
    await sleep(800);
    const stopped = await call(url, '/stop', {});
    assert.equal(stopped.status, 200);
    const answer = await slow;
    assert.equal(answer.body.outcome, 'stopped', answer.body.message);
    await sleep(300); // the hold point brakes the arm within its acceleration limits first
    const held = (await jointState(url)).position;
    await sleep(300);
    assertNear((await jointState(url)).position, held, 1e-3, 'holding after stop');

    const first = call<TrajectoryAnswer>(url, '/trajectory/send', {
      points: [{ positions: end, time_from_start: 4 }],
      wait: true,
    });
    await sleep(600);
    const newer = await call<TrajectoryAnswer>(url, '/trajectory/send', {
      points: [{ positions: start, time_from_start: 1.5 }],
      wait: true,
    });
    assert.equal(newer.status, 200, detailOf(newer));
    assert.equal((await first).body.outcome, 'preempted', (await first).body.message);
    assert.equal(newer.body.outcome, 'finished', newer.body.message);
    assertNear((await jointState(url)).position, start, 2e-3, 'at the newer end');
  });

  it('dry-runs a move through /plan_kinematic_path (nothing moves), then executes the plan on the controller', async () => {
    const before = (await jointState(url)).position;
    const from = stack.events.length;
    const planned = await call<MotionBody & { plan?: { id: string; duration_s: number } }>(url, '/robot/move/joints', {
      joints: OTHER,
      speed: 0.5,
      dry_run: true,
    });
    assert.equal(planned.status, 200, detailOf(planned));
    assert.equal(planned.body.success, true, planned.body.message);
    assert.ok(planned.body.plan?.id, 'a plan id');
    await stack.waitFor(on('plan_kinematic_path'), 2000, from);
    assertNear((await jointState(url)).position, before, 1e-3, 'a dry run moves nothing');
    assert.equal(stack.since(from, 'goal').length, 0, 'no goal was sent');
    const executed = await call<MotionBody>(url, `/robot/plans/${planned.body.plan?.id}/execute`, {});
    assert.equal(executed.status, 200, detailOf(executed));
    assert.equal(executed.body.success, true, executed.body.message);
    assert.ok(stack.since(from, 'goal').some(on('follow_joint_trajectory')), 'the plan went to the controller');
    assertNear((await jointState(url)).position, OTHER, 5e-3, 'at the plan end');
    await call(url, '/robot/move/named', { name: 'work', speed: 0.5 });
  });

  it('keeps the trajectory log of what went to the controller', async () => {
    const logs = await call<{ lines: string[] }>(url, '/trajectory/logs?n=50');
    assert.equal(logs.status, 200);
    assert.ok(
      logs.body.lines.some((l) => /follow_joint_trajectory|joint_trajectory/.test(l)),
      logs.body.lines.join('\n'),
    );
  });

  it("streams the stack's joint states on /events and serves its robot_description to the live page", async () => {
    const events = await openSse(url, '/events');
    try {
      assert.equal(events.status, 200);
      await events.next((e) => e.type === 'joint_state', 5000);
    } finally {
      events.close();
    }
    const urdf = await fetch(`${url}/ui/robot.urdf`);
    assert.equal(urdf.status, 200);
    const text = await urdf.text();
    assert.match(text, /<robot/);
    assert.match(text, /link name="tcp"/, "the stack's own model, with its tcp link");
  });

  it('answers every MCP tool over real DDS', async () => {
    const client = new Client({ name: 'armgate-ros2-test', version: '1' });
    await client.connect(mcpTransport(url));
    try {
      const tool = async (name: string, args: Record<string, unknown> = {}) => {
        const r = (await client.callTool({ name, arguments: args })) as {
          isError?: boolean;
          structuredContent?: Record<string, unknown>;
          content: { text?: string }[];
        };
        assert.notEqual(r.isError, true, `${name}: ${r.content.map((c) => c.text).join(' ')}`);
        return r.structuredContent ?? {};
      };
      const { tools } = await client.listTools();
      const names = tools.map((t) => t.name);
      const js = await tool('get_joint_states');
      assert.deepEqual(js.name, ['joint1', 'joint2', 'joint3', 'joint4', 'joint5', 'joint6', 'joint7']);
      assert.equal((await tool('get_tcp_pose')).frame_id, 'base_link');
      assert.ok(Array.isArray((await tool('list_named_positions')).positions));
      assert.equal((await tool('move_to_joints', { joints: OTHER, speed: 0.5 })).success, true);
      assert.equal((await tool('move_to_named_position', { name: 'work', speed: 0.5 })).success, true);
      const pose = await tool('get_tcp_pose');
      const position = pose.position as { x: number; y: number; z: number };
      assert.equal((await tool('solve_ik', { ...position, a: 0, b: 0, c: Math.PI })).success !== undefined, true);
      assert.equal((await tool('move_to_pose', { ...position, z: position.z - 0.03, speed: 0.5 })).success, true);
      const sent = await tool('send_trajectory', {
        points: [{ positions: WORK, time_from_start: 1.5 }],
        wait: true,
      });
      assert.equal(sent.outcome, 'finished', String(sent.message));
      assert.ok('lines' in (await tool('get_trajectory_logs')));
      assert.ok('status' in (await tool('get_sequence_status')));
      assert.ok('lines' in (await tool('get_sequence_logs')));
      if (names.includes('get_safety_envelope')) await tool('get_safety_envelope');
      const planned = await tool('move_to_joints', { joints: OTHER, speed: 0.5, dry_run: true });
      const plan = planned.plan as { id: string } | undefined;
      assert.ok(plan?.id, JSON.stringify(planned));
      assert.equal((await tool('execute_plan', { id: plan.id })).success, true);
      assert.ok('message' in (await tool('stop')));
      // The plan's execution may still settle when the stop comes: its hold point then brakes for its floor (0.1 s).
      await sleep(200);
      assert.equal((await tool('move_to_named_position', { name: 'work', speed: 0.5 })).success, true);
    } finally {
      await client.close();
    }
  });

  it('stops in every state: at rest, during a move, during a trajectory; and the next move after a stop at rest goes', async () => {
    // At rest for the stack first (a stop while the arm still settles is a stop during braking: 409 then).
    for (let i = 0; i < 100 && (await stack.state()).moving; i++) await sleep(50);
    const atRest = await call<{ message: string }>(url, '/stop', {});
    assert.equal(atRest.status, 200, detailOf(atRest));
    const move = call<MotionBody>(url, '/robot/move/joints', { joints: OTHER, speed: 0.05 });
    await sleep(400);
    assert.equal((await call(url, '/stop', {})).status, 200);
    const stopped = await move;
    assert.equal(
      stopped.body.success,
      false,
      `the move was stopped: ${stopped.status} ${JSON.stringify(stopped.body)}`,
    );
    await sleep(300); // the arm brakes on the stop's hold point (a motion meanwhile is a 409 with Retry-After)
    const start = (await jointState(url)).position;
    const sent = await call(url, '/trajectory/send', {
      points: [{ positions: start.map((q, i) => (i === 0 ? q + 0.3 : q)), time_from_start: 4 }],
    });
    assert.equal(sent.status, 200, detailOf(sent));
    await sleep(500);
    assert.equal((await call(url, '/stop', {})).status, 200);
    await sleep(300); // the hold point decelerates within the limits (at most 0.1 s at this speed)
    const held = (await jointState(url)).position;
    await sleep(1500);
    assertNear((await jointState(url)).position, held, 2e-3, 'the trajectory was stopped, not finished');
    assert.equal((await stack.state()).moving, false, 'the stack says the arm is at rest');
  });

  it('pause cancels the move on the stack and holds; resume sends the same goal again to its goal; the override scales later goals; a published trajectory and a trajectory goal pause on their path and resume; a stop under the override holds', async () => {
    await sleep(300);
    assert.equal((await call<MotionBody>(url, '/robot/move/named', { name: 'work', speed: 1 })).body.success, true);
    const from = stack.events.length;
    const move = call<MotionBody>(url, '/robot/move/joints', { joints: OTHER, speed: 0.2 });
    await stack.waitFor((e) => e.event === 'goal' && on('move_to_joints')(e), 5000, from);
    await sleep(400);
    const paused = await call<{ paused: boolean; message: string; what: string | null }>(url, '/robot/pause', {});
    assert.equal(paused.status, 200, detailOf(paused));
    assert.equal(paused.body.paused, true, paused.body.message);
    await stack.waitFor((e) => e.event === 'cancel', 2000, from);
    assert.equal((await stack.state()).moving, false, 'the stack says the arm is at rest when the pause answers');
    // Where armgate says the arm rests when the pause answers: a joint crossing zero speed while it settles is not rest
    // (lib/ros/at-rest.ts; a CI run read 1.1 mrad short of where it held when one still message was taken for rest).
    const held = (await jointState(url)).position;
    assert.ok(Math.abs((held[0] ?? 0) - (OTHER[0] ?? 0)) > 0.05, 'paused short of the goal');
    const busy = await call(url, '/robot/move/named', { name: 'work', speed: 1 });
    assert.equal(busy.status, 409, 'while paused another motion is refused');
    await sleep(600);
    assertNear((await jointState(url)).position, held, 1e-4, 'it rests where the pause answered, and holds');
    const resumed = await call<{ message: string }>(url, '/robot/resume', {});
    assert.equal(resumed.status, 200, detailOf(resumed));
    const ended = await move;
    assert.equal(ended.body.success, true, ended.body.message);
    assertNear((await jointState(url)).position, OTHER, 2e-3, 'the resumed move ends at its goal');
    const goals = stack.events.slice(from).filter((e) => e.event === 'goal' && on('move_to_joints')(e));
    assert.equal(goals.length, 2, 'the same goal sent twice: before the pause and on resume');
    assert.deepEqual(goals[1]?.goal, goals[0]?.goal);
    // The override: 40 % scales the speed of the next goal.
    await setOverride(url, 40);
    const next = stack.events.length;
    const slower = await call<MotionBody>(url, '/robot/move/joints', { joints: WORK, speed: 0.5 });
    assert.equal(slower.body.success, true, slower.body.message);
    const goal = await stack.waitFor((e) => e.event === 'goal' && on('move_to_joints')(e), 2000, next);
    const speed = Number((goal.goal as { speed?: number } | null)?.speed);
    assert.ok(Math.abs(speed - 0.2) < 1e-6, `40 % of speed 0.5 went to the stack: ${JSON.stringify(goal)}`);
    await setOverride(url, 100);
    // A trajectory published on the topic: armgate re-times its rest itself (Jazzy's controller has no speed scaling).
    const start = (await jointState(url)).position;
    const delta = [0.4, 0, 0, 0.25, 0, -0.2, 0];
    const target = start.map((q, i) => q + (delta[i] ?? 0));
    const sent = await call(url, '/trajectory/send', { points: [{ positions: target, time_from_start: 2 }] });
    assert.equal(sent.status, 200, detailOf(sent));
    await sleep(600);
    const pausedTrajectory = await call<{ paused: boolean; message: string }>(url, '/robot/pause', {});
    assert.equal(pausedTrajectory.status, 200, detailOf(pausedTrajectory));
    assert.equal(pausedTrajectory.body.paused, true, pausedTrajectory.body.message);
    const rest = (await jointState(url)).position;
    assert.ok(
      (rest[0] ?? 0) > (start[0] ?? 0) + 0.02 && (rest[0] ?? 0) < (target[0] ?? 0) - 0.02,
      `rests between start and goal: ${rest[0]}`,
    );
    // On its path: a straight line in joint space (one point, positions only: the controller interpolates linearly).
    const u = ((rest[0] ?? 0) - (start[0] ?? 0)) / 0.4;
    assertNear(
      rest,
      start.map((q, i) => q + u * (delta[i] ?? 0)),
      2e-3,
      'at rest on the line from start to goal',
    );
    await sleep(800);
    assertNear((await jointState(url)).position, rest, 1e-3, 'it holds while paused');
    assert.equal((await call(url, '/robot/resume', {})).status, 200);
    for (let i = 0; i < 100 && Math.abs(((await jointState(url)).position[0] ?? 0) - (target[0] ?? 0)) > 2e-3; i++)
      await sleep(50);
    assertNear((await jointState(url)).position, target, 2e-3, 'the resumed trajectory ends at its goal');
    // The override mid-trajectory: 50 % at 0.5 s of a 2 s trajectory; at 2.3 s it is still on its way, then it arrives.
    for (let i = 0; i < 100 && (await stack.state()).moving; i++) await sleep(50);
    const sentAt = performance.now();
    assert.equal(
      (await call(url, '/trajectory/send', { points: [{ positions: start, time_from_start: 2 }] })).status,
      200,
    );
    await sleep(500);
    await setOverride(url, 50);
    await sleep(Math.max(0, 2300 - (performance.now() - sentAt)));
    const midway = (await jointState(url)).position;
    assert.ok((midway[0] ?? 0) - (start[0] ?? 0) > 0.03, `still on its way at 2.3 s under 50 %: ${midway[0]}`);
    for (let i = 0; i < 200 && Math.abs(((await jointState(url)).position[0] ?? 0) - (start[0] ?? 0)) > 2e-3; i++)
      await sleep(50);
    assertNear((await jointState(url)).position, start, 2e-3, 'the slowed trajectory ends at its goal');
    // Under the override a stop's hold point still goes out at once (it is never re-timed nor refused).
    for (let i = 0; i < 100 && (await stack.state()).moving; i++) await sleep(50);
    assert.equal(
      (await call(url, '/trajectory/send', { points: [{ positions: target, time_from_start: 2 }] })).status,
      200,
    );
    await sleep(500);
    const stopped = await call<{ hold_published: boolean }>(url, '/stop', {});
    assert.equal(stopped.status, 200, detailOf(stopped));
    assert.equal(stopped.body.hold_published, true);
    await sleep(300);
    const stoppedAt = (await jointState(url)).position;
    await sleep(1500);
    assertNear((await jointState(url)).position, stoppedAt, 2e-3, 'stopped under the override: it holds');
    assert.ok(Math.abs((stoppedAt[0] ?? 0) - (target[0] ?? 0)) > 0.05, 'short of the goal');
    for (let i = 0; i < 100 && (await stack.state()).moving; i++) await sleep(50);
    assert.equal((await call<MotionBody>(url, '/robot/move/joints', { joints: start, speed: 1 })).body.success, true);
    await setOverride(url, 100);
    // A trajectory goal (sent with wait): the re-timed rest goes as a new goal, and the request waits on it.
    for (let i = 0; i < 100 && (await stack.state()).moving; i++) await sleep(50);
    const from2 = stack.events.length;
    const waited = call<TrajectoryAnswer>(url, '/trajectory/send', {
      points: [{ positions: target, time_from_start: 2 }],
      wait: true,
    });
    await sleep(700);
    const pausedGoal = await call<{ paused: boolean; message: string }>(url, '/robot/pause', {});
    assert.equal(pausedGoal.status, 200, detailOf(pausedGoal));
    assert.equal(pausedGoal.body.paused, true, pausedGoal.body.message);
    const restGoal = (await jointState(url)).position;
    const v = ((restGoal[0] ?? 0) - (start[0] ?? 0)) / 0.4;
    assert.ok(v > 0.05 && v < 0.95, `rests between start and goal: ${v}`);
    assertNear(
      restGoal,
      start.map((q, i) => q + v * (delta[i] ?? 0)),
      2e-3,
      'the trajectory goal rests on its line',
    );
    await sleep(800);
    assertNear((await jointState(url)).position, restGoal, 1e-3, 'it holds while paused');
    assert.equal((await call(url, '/robot/resume', {})).status, 200);
    const done = await waited;
    assert.equal(done.status, 200, detailOf(done));
    assert.equal(done.body.outcome, 'finished', done.body.message);
    assertNear((await jointState(url)).position, target, 2e-3, 'the resumed goal ends at its goal');
    const fjtGoals = stack.events.slice(from2).filter((e) => e.event === 'goal' && on('follow_joint_trajectory')(e));
    assert.equal(fjtGoals.length, 3, 'the goal, its pause, its resume');
    assert.equal((await call(url, '/robot/resume', {})).status, 409, 'nothing is paused');
  });
});
