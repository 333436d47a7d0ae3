/**
 * The test robot stack (tests/ros/stack) on a real ROS 2 graph, checked with a plain rclnodejs
 * client (no armgate code): every interface, the hooks (events, faults, commands) and the shutdown.
 * Needs the ROS 2 environment (. scripts/ros2/env.sh) and rclnodejs built against it
 * (scripts/ros2/rclnodejs.sh); without them it registers no tests and says why in one line.
 */
import assert from 'node:assert/strict';
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const MAIN = path.join(root, 'tests/ros/stack/main.ts');
const JOINTS = ['joint1', 'joint2', 'joint3', 'joint4', 'joint5', 'joint6', 'joint7'];
/** Joint velocity limits of the joint limits file (rad/s). */
const VMAX = [1.71, 1.71, 1.75, 2.27, 2.44, 3.14, 3.14];

// biome-ignore lint/suspicious/noExplicitAny: rclnodejs is loaded at run time; its types are not a dependency of the project.
type Any = any;
type Event = Record<string, Any>;

async function loadRclnodejs(): Promise<{ rcl?: Any; why?: string }> {
  if (!process.env.AMENT_PREFIX_PATH || !process.env.ROS_DISTRO)
    return { why: 'no ROS 2 environment (source scripts/ros2/env.sh to run them)' };
  try {
    const specifier = 'rclnodejs';
    const module = (await import(specifier)) as Any;
    return { rcl: module.default ?? module };
  } catch (e) {
    return { why: `rclnodejs does not load (${(e as Error).message.split('\n')[0]}; run scripts/ros2/rclnodejs.sh)` };
  }
}

const loaded = await loadRclnodejs();
/** An element that must exist. */
function at<T>(list: ArrayLike<T>, index: number): T {
  const value = list[index];
  if (value === undefined) throw new RangeError(`index ${index} out of range`);
  return value;
}
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The stack as a child process: its events, and commands to it. */
class StackProcess {
  readonly child: ChildProcessWithoutNullStreams;
  readonly events: Event[] = [];
  readonly exited: Promise<number | null>;
  private waiters: { match: (e: Event) => boolean; resolve: (e: Event) => void }[] = [];
  stderr = '';

  constructor(args: string[], env: NodeJS.ProcessEnv) {
    this.child = spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], { cwd: root, env, stdio: 'pipe' });
    this.exited = new Promise((resolve) => this.child.on('exit', (code) => resolve(code)));
    this.child.stderr.on('data', (d: Buffer) => {
      this.stderr += d.toString();
    });
    createInterface({ input: this.child.stdout }).on('line', (line) => {
      const event = JSON.parse(line) as Event;
      this.events.push(event);
      this.waiters = this.waiters.filter((w) => {
        if (!w.match(event)) return true;
        w.resolve(event);
        return false;
      });
    });
  }

  /** The first event from `since` (an index into events) that matches. */
  next(match: (e: Event) => boolean, since = 0, timeoutMs = 20_000): Promise<Event> {
    const found = this.events.slice(since).find(match);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no matching event in ${timeoutMs} ms; stderr: ${this.stderr}`)),
        timeoutMs,
      );
      this.waiters.push({
        match,
        resolve: (e) => {
          clearTimeout(timer);
          resolve(e);
        },
      });
    });
  }

  async command(cmd: Event): Promise<Event> {
    const since = this.events.length;
    this.child.stdin.write(`${JSON.stringify(cmd)}\n`);
    return this.next((e) => e.event === 'ack' && e.cmd === cmd.cmd, since, 5000);
  }

  async state(): Promise<{ positions: number[]; moving: boolean }> {
    const since = this.events.length;
    await this.command({ cmd: 'state' });
    return (await this.next((e) => e.event === 'state', since, 5000)) as Any;
  }
}

const duration = (s: number) => ({ sec: Math.floor(s), nanosec: Math.round((s - Math.floor(s)) * 1e9) });
const point = (positions: number[], t: number) => ({
  positions,
  velocities: [],
  accelerations: [],
  effort: [],
  time_from_start: duration(t),
});
const trajectory = (names: string[], points: ReturnType<typeof point>[]) => ({
  header: { stamp: { sec: 0, nanosec: 0 }, frame_id: '' },
  joint_names: names,
  points,
});
const near = (a: readonly number[], b: readonly number[], tol: number) =>
  a.every((v, i) => Math.abs(v - at(b, i)) <= tol);
const STATUS = { SUCCEEDED: 4, CANCELED: 5, ABORTED: 6 };

if (!loaded.rcl) {
  process.stdout.write(`tests/ros/stack.test.ts: no tests registered: ${loaded.why}\n`);
} else {
  const rcl = loaded.rcl;
  // A ROS domain of its own (not the lead's suites' 140+), unless one is given.
  const domain = process.env.ARMGATE_STACK_TEST_DOMAIN ?? String(100 + (process.pid % 30));
  process.env.ROS_DOMAIN_ID = domain;
  const env = { ...process.env, ROS_DOMAIN_ID: domain };

  describe('the test robot stack on a real ROS 2 graph', { concurrency: false }, () => {
    let stack: StackProcess;
    let node: Any;
    const clients = new Map<string, Any>();
    const actions = new Map<string, Any>();
    let latestJointState: Any;
    let jointStateCount = 0;

    const service = async (type: string, name: string, request: object, timeout = 10_000): Promise<Any> => {
      let client = clients.get(name);
      if (!client) {
        client = node.createClient(type, name);
        clients.set(name, client);
        assert.ok(await client.waitForService(15_000), `${name} is served`);
      }
      return client.sendRequestAsync(request, { timeout });
    };
    const actionClient = async (type: string, name: string): Promise<Any> => {
      let client = actions.get(name);
      if (!client) {
        client = new rcl.ActionClient(node, type, name);
        actions.set(name, client);
        assert.ok(await client.waitForServer(15_000), `${name} is served`);
      }
      return client;
    };
    const fjt = () =>
      actionClient('control_msgs/action/FollowJointTrajectory', '/iiwa_arm_controller/follow_joint_trajectory');
    const fjtGoal = (traj: object, extra: object = {}) => ({
      trajectory: traj,
      multi_dof_trajectory: { header: { stamp: { sec: 0, nanosec: 0 }, frame_id: '' }, joint_names: [], points: [] },
      path_tolerance: [],
      component_path_tolerance: [],
      goal_tolerance: [],
      component_goal_tolerance: [],
      goal_time_tolerance: { sec: 0, nanosec: 0 },
      ...extra,
    });
    const settle = async () => {
      for (let i = 0; i < 200; i++) {
        const s = await stack.state();
        if (!s.moving) return s;
        await sleep(50);
      }
      throw new Error('the arm did not come to rest');
    };
    const setAt = async (positions: number[]) => {
      await settle();
      const ack = await stack.command({ cmd: 'set', positions });
      assert.equal(ack.ok, true, JSON.stringify(ack));
    };
    const fk = async (positions: number[], link = 'tcp') => {
      const r = await service('moveit_msgs/srv/GetPositionFK', '/compute_fk', {
        header: { frame_id: '' },
        fk_link_names: [link],
        robot_state: { joint_state: { name: JOINTS, position: positions } },
      });
      assert.equal(r.error_code.val, 1);
      return r.pose_stamped[0];
    };

    before(async () => {
      stack = new StackProcess([], env);
      await stack.next((e) => e.event === 'ready', 0, 60_000);
      await rcl.init();
      node = new rcl.Node('stack_test_client');
      node.createSubscription('sensor_msgs/msg/JointState', '/joint_states', (msg: Any) => {
        latestJointState = msg;
        jointStateCount++;
      });
      node.spin();
    });

    after(async () => {
      if (stack.child.exitCode === null) {
        stack.child.kill('SIGTERM');
        await stack.exited;
      }
      node?.destroy();
      rcl.shutdown();
    });

    test('publishes /joint_states at 100 Hz, joint1..joint7', async () => {
      for (let i = 0; i < 200 && jointStateCount === 0; i++) await sleep(50);
      const from = jointStateCount;
      await sleep(1000);
      const rate = jointStateCount - from;
      assert.ok(rate >= 60 && rate <= 130, `${rate} messages in 1 s`);
      assert.deepEqual(Array.from(latestJointState.name), JOINTS);
      assert.equal(latestJointState.position.length, 7);
      assert.equal(latestJointState.velocity.length, 7);
    });

    test("move_group's parameters: robot_description (with the link tcp) and robot_description_semantic", async () => {
      const r = await service('rcl_interfaces/srv/GetParameters', '/move_group/get_parameters', {
        names: ['robot_description', 'robot_description_semantic'],
      });
      assert.equal(r.values.length, 2);
      assert.equal(r.values[0].type, 4);
      assert.match(r.values[0].string_value, /<link name="tcp"\/>/);
      assert.match(r.values[1].string_value, /<group_state name="work" group="iiwa_arm">/);
      assert.ok(stack.events.some((e) => e.event === 'ready'));
    });

    test('/compute_fk: the TCP in the model frame `world`; an unknown link is INVALID_LINK_NAME; no link either', async () => {
      const pose = await fk([0, 0, 0, 0, 0, 0, 0]);
      assert.equal(pose.header.frame_id, 'world');
      assert.ok(Math.abs(pose.pose.position.z - 1.298) < 1e-6, `z ${pose.pose.position.z}`);
      const bad = await service('moveit_msgs/srv/GetPositionFK', '/compute_fk', { fk_link_names: ['tcp', 'nope'] });
      assert.equal(bad.error_code.val, -18);
      assert.deepEqual(Array.from(bad.fk_link_names), ['tcp']);
      const none = await service('moveit_msgs/srv/GetPositionFK', '/compute_fk', { fk_link_names: [] });
      assert.equal(none.error_code.val, -18);
      assert.ok(stack.events.some((e) => e.event === 'service' && e.iface === 'compute_fk'));
    });

    test('/compute_ik: a reachable pose round-trips through FK; unreachable is NO_IK_SOLUTION; a wrong group INVALID_GROUP_NAME', async () => {
      const q = [0.4, 0.5, -0.3, -1.1, 0.2, 0.8, 0.3];
      const target = await fk(q);
      const ik = (pose: object, group = 'iiwa_arm', timeout = { sec: 1, nanosec: 0 }) =>
        service('moveit_msgs/srv/GetPositionIK', '/compute_ik', {
          ik_request: {
            group_name: group,
            pose_stamped: { header: { frame_id: 'base_link' }, pose },
            timeout,
            avoid_collisions: true,
          },
        });
      const r = await ik(target.pose);
      assert.equal(r.error_code.val, 1);
      assert.deepEqual(Array.from(r.solution.joint_state.name), JOINTS);
      const back = await fk(Array.from(r.solution.joint_state.position));
      const p = back.pose.position;
      const t = target.pose.position;
      assert.ok(Math.hypot(p.x - t.x, p.y - t.y, p.z - t.z) < 1e-4);
      const started = Date.now();
      const far = await ik({ position: { x: 3, y: 0, z: 0.5 }, orientation: { x: 0, y: 0, z: 0, w: 1 } });
      assert.equal(far.error_code.val, -31);
      assert.ok(Date.now() - started >= 900, 'the IK searched for its whole timeout (1 s)');
      assert.equal((await ik(target.pose, 'no_group')).error_code.val, -15);
    });

    test('the trajectory topic: joint names in any order, interpolated in time; an unknown joint is ignored', async () => {
      await setAt([0, 0.3, 0, -1.2, 0, 0.9, 0]);
      const pub = node.createPublisher('trajectory_msgs/msg/JointTrajectory', '/iiwa_arm_controller/joint_trajectory');
      const names = ['joint7', 'joint1', 'joint2', 'joint3', 'joint4', 'joint5', 'joint6'];
      // Two subscribers: the controller and the stack's observer of its topic (matched first, it alone is not enough).
      for (let i = 0; i < 100 && node.countSubscribers('/iiwa_arm_controller/joint_trajectory') < 2; i++)
        await sleep(50);
      const since = stack.events.length;
      pub.publish(trajectory(['bogus', ...names.slice(1)], [point([0.5, 0.5, 0.3, 0, -1.2, 0, 0.9], 1)]));
      const received = await stack.next((e) => e.event === 'trajectory', since);
      assert.deepEqual(received.joint_names, ['bogus', ...names.slice(1)]);
      const refused = await stack.next((e) => e.event === 'controller_error', since);
      assert.match(refused.text, /Incoming joint bogus/);
      await sleep(300);
      assert.equal((await stack.state()).moving, false, 'a refused trajectory does not move the arm');
      const start = Date.now();
      pub.publish(trajectory(names, [point([0.3, 0.4, 0.3, 0.1, -1.0, 0.1, 0.7], 1.5)]));
      const accepted = await stack.next((e) => e.event === 'trajectory' && e.joint_names[0] === 'joint7', since);
      assert.deepEqual(accepted.joint_names, names);
      assert.equal(accepted.points, 1);
      assert.equal(accepted.duration_s, 1.5);
      // Interpolated in time: some state on the way shows joint1 moving between its start and its goal.
      const seen: number[] = [];
      for (let i = 0; i < 200; i++) {
        const s = await stack.state();
        if (s.moving) seen.push(at(s.positions, 0));
        if (seen.length > 0 && !s.moving) break;
        await sleep(20);
      }
      assert.ok(
        seen.some((j1) => j1 > 0.05 && j1 < 0.38),
        `joint1 seen half way: ${seen.map((v) => v.toFixed(3))}`,
      );
      const end = await settle();
      assert.ok(Date.now() - start >= 1400);
      assert.ok(near(end.positions, [0.4, 0.3, 0.1, -1.0, 0.1, 0.7, 0.3], 2e-3), JSON.stringify(end.positions));
    });

    test('FollowJointTrajectory: accepted, feedback, SUCCEEDED with error_code 0 at the goal', async () => {
      await setAt([0, 0.3, 0, -1.2, 0, 0.9, 0]);
      const client = await fjt();
      const feedback: Any[] = [];
      const goal = await client.sendGoal(
        fjtGoal(
          trajectory(JOINTS, [
            point([0.2, 0.4, 0, -1.0, 0, 0.8, 0.2], 0.5),
            point([0.4, 0.5, 0.1, -0.9, 0.1, 0.7, 0.4], 1.2),
          ]),
        ),
        (f: Any) => feedback.push(f),
      );
      assert.ok(goal.accepted);
      const result = await goal.getResult();
      assert.equal(goal.status, STATUS.SUCCEEDED);
      assert.equal(result.error_code, 0);
      assert.equal(result.error_string, 'Goal successfully reached!');
      assert.ok(feedback.length >= 5, `${feedback.length} feedback messages`);
      assert.deepEqual(Array.from(feedback[0].joint_names), JOINTS);
      const s = await settle();
      assert.ok(near(s.positions, [0.4, 0.5, 0.1, -0.9, 0.1, 0.7, 0.4], 2e-3));
      assert.ok(stack.events.some((e) => e.event === 'goal' && e.iface === 'follow_joint_trajectory'));
      assert.ok(
        stack.events.some(
          (e) =>
            e.event === 'result' && e.iface === 'follow_joint_trajectory' && e.status === 'succeeded' && e.code === 0,
        ),
      );
    });

    test('FollowJointTrajectory rejects as the controller does: unknown joints, missing joints, non-increasing times, an empty trajectory', async () => {
      const client = await fjt();
      const q = [0, 0.3, 0, -1.2, 0, 0.9, 0];
      for (const traj of [
        trajectory(['x', ...JOINTS.slice(1)], [point(q, 1)]),
        trajectory(JOINTS.slice(0, 6), [point(q.slice(0, 6), 1)]),
        trajectory(JOINTS, [point(q, 1), point(q, 1)]),
        trajectory(JOINTS, []),
      ]) {
        const goal = await client.sendGoal(fjtGoal(traj));
        assert.equal(goal.accepted, false, JSON.stringify(traj.joint_names));
      }
    });

    test('FollowJointTrajectory: a new goal aborts the active one (INVALID_GOAL); cancel stops the arm where it is (CANCELED)', async () => {
      await setAt([0, 0.3, 0, -1.2, 0, 0.9, 0]);
      const client = await fjt();
      const first = await client.sendGoal(fjtGoal(trajectory(JOINTS, [point([1.2, 0.3, 0, -1.2, 0, 0.9, 0], 3)])));
      await sleep(400);
      const second = await client.sendGoal(fjtGoal(trajectory(JOINTS, [point([-1.2, 0.3, 0, -1.2, 0, 0.9, 0], 4)])));
      const r1 = await first.getResult();
      assert.equal(first.status, STATUS.ABORTED);
      assert.equal(r1.error_code, -1);
      assert.equal(r1.error_string, 'Current goal preempted by new incoming action.');
      await sleep(800);
      const since = stack.events.length;
      await second.cancelGoal();
      const r2 = await second.getResult();
      assert.equal(second.status, STATUS.CANCELED);
      assert.equal(r2.error_code, 0);
      await stack.next((e) => e.event === 'cancel' && e.iface === 'follow_joint_trajectory', since);
      const s = await settle();
      assert.ok(at(s.positions, 0) > -1.1 && at(s.positions, 0) < 1.2, `stopped part way: ${s.positions[0]}`);
    });

    test('FollowJointTrajectory: a path tolerance the arm cannot keep aborts with PATH_TOLERANCE_VIOLATED', async () => {
      await setAt([0, 0.3, 0, -1.2, 0, 0.9, 0]);
      const client = await fjt();
      // joint1 asked for 2.4 rad/s (its limit is 1.71): the arm lags behind the desired state.
      const goal = await client.sendGoal(
        fjtGoal(trajectory(JOINTS, [point([1.2, 0.3, 0, -1.2, 0, 0.9, 0], 0.5)]), {
          path_tolerance: [{ name: 'joint1', position: 0.05, velocity: 0, acceleration: 0 }],
        }),
      );
      assert.ok(goal.accepted);
      const r = await goal.getResult();
      assert.equal(goal.status, STATUS.ABORTED);
      assert.equal(r.error_code, -4);
      const s = await settle();
      assert.ok(at(s.positions, 0) < 1.1, 'stopped before the goal');
    });

    test('cobot/move_to_joints: feedback planning then executing, success; cancel; a goal outside the limits aborts', async () => {
      await setAt([0, 0.3, 0, -1.2, 0, 0.9, 0]);
      const client = await actionClient('iiwa_msgs/action/MoveToJoints', 'cobot/move_to_joints');
      const states: string[] = [];
      const goal = await client.sendGoal({ joints: [0.3, 0.4, 0, -1.1, 0, 0.8, 0.1], speed: 0.5 }, (f: Any) =>
        states.push(f.state),
      );
      assert.ok(goal.accepted);
      const r = await goal.getResult();
      assert.equal(goal.status, STATUS.SUCCEEDED);
      assert.equal(r.success, true);
      assert.deepEqual(states, ['planning', 'executing']);
      assert.ok(near((await settle()).positions, [0.3, 0.4, 0, -1.1, 0, 0.8, 0.1], 2e-3));
      const far = await client.sendGoal({ joints: [-2.5, -1, 0, -1.5, 0, 1, 0], speed: 0.2 });
      await sleep(600);
      await far.cancelGoal();
      const rc = await far.getResult();
      assert.equal(far.status, STATUS.CANCELED);
      assert.equal(rc.success, false);
      assert.equal(rc.message, 'canceled');
      const stopped = await settle();
      assert.ok(at(stopped.positions, 0) > -2.4, 'stopped part way');
      const out = await client.sendGoal({ joints: [0, 0, 0, 2.5, 0, 0, 0], speed: 1 });
      assert.ok(out.accepted, 'the cobot server accepts every goal');
      const ro = await out.getResult();
      assert.equal(out.status, STATUS.ABORTED);
      assert.equal(ro.success, false);
    });

    test('cobot/stop stops what the cobot server executes; the cobot goal then SUCCEEDS (the original checks no status)', async () => {
      await setAt([0, 0.3, 0, -1.2, 0, 0.9, 0]);
      const client = await actionClient('iiwa_msgs/action/MoveToJoints', 'cobot/move_to_joints');
      const goal = await client.sendGoal({ joints: [2, 0.3, 0, -1.2, 0, 0.9, 0], speed: 0.3 });
      await sleep(700);
      const since = stack.events.length;
      const r = await service('std_srvs/srv/Trigger', 'cobot/stop', {});
      assert.equal(r.success, true);
      await stack.next((e) => e.event === 'stop', since);
      const result = await goal.getResult();
      assert.equal(goal.status, STATUS.SUCCEEDED);
      assert.equal(result.success, true);
      const s = await settle();
      assert.ok(at(s.positions, 0) < 1.5, `stopped part way: ${s.positions[0]}`);
    });

    test('cobot/stop leaves a FollowJointTrajectory goal of another client running (MoveIt stops only its own executions)', async () => {
      await setAt([0, 0.3, 0, -1.2, 0, 0.9, 0]);
      const client = await fjt();
      const goal = await client.sendGoal(fjtGoal(trajectory(JOINTS, [point([0.6, 0.3, 0, -1.2, 0, 0.9, 0], 1)])));
      await sleep(300);
      assert.equal((await service('std_srvs/srv/Trigger', 'cobot/stop', {})).success, true);
      await goal.getResult();
      assert.equal(goal.status, STATUS.SUCCEEDED);
    });

    test('cobot/move_to_pose: a reachable pose succeeds; an unreachable one and an unknown planner abort', async () => {
      await setAt([0, 0.3, 0, -1.2, 0, 0.9, 0]);
      const client = await actionClient('iiwa_msgs/action/MoveToPose', 'cobot/move_to_pose');
      const target = await fk([0.3, 0.5, 0, -1.0, 0, 0.9, 0]);
      const { x, y, z } = target.pose.position;
      const { x: qx, y: qy, z: qz, w: qw } = target.pose.orientation;
      // KUKA ABC (ZYX Euler) of the quaternion.
      const a = Math.atan2(2 * (qw * qz + qx * qy), 1 - 2 * (qy * qy + qz * qz));
      const b = Math.asin(Math.max(-1, Math.min(1, 2 * (qw * qy - qz * qx))));
      const c = Math.atan2(2 * (qw * qx + qy * qz), 1 - 2 * (qx * qx + qy * qy));
      const goal = await client.sendGoal({ x, y, z, a, b, c, speed: 0.5, planner: 'ptp', frame_id: '' });
      const r = await goal.getResult();
      assert.equal(r.success, true, r.message);
      const reached = await fk((await settle()).positions);
      assert.ok(
        Math.hypot(reached.pose.position.x - x, reached.pose.position.y - y, reached.pose.position.z - z) < 1e-3,
      );
      const far = await client.sendGoal({
        x: 3,
        y: 0,
        z: 0.5,
        a: 0,
        b: 0,
        c: 0,
        speed: 0.5,
        planner: 'ompl',
        frame_id: '',
      });
      const rf = await far.getResult();
      assert.equal(far.status, STATUS.ABORTED);
      assert.equal(rf.success, false);
      const unknown = await client.sendGoal({ x, y, z, a, b, c, speed: 0.5, planner: 'rrt', frame_id: '' });
      const ru = await unknown.getResult();
      assert.equal(unknown.status, STATUS.ABORTED);
      assert.match(ru.message, /rrt/);
    });

    test('cobot/move_to_named answers after the motion: work succeeds, an unknown name fails', async () => {
      await setAt([0, 0.3, 0, -1.2, 0, 0.9, 0]);
      const started = Date.now();
      const r = await service(
        'iiwa_msgs/srv/MoveToNamedPose',
        'cobot/move_to_named',
        // At half speed the motion takes about a second (at full speed about 0.5 s: too close to tell).
        { name: 'work', speed: 0.5, accel_scale: 0 },
        30_000,
      );
      assert.equal(r.success, true, r.message);
      assert.ok(Date.now() - started > 500, `answered after the motion (${Date.now() - started} ms)`);
      // The goal succeeds once its time is up and the velocity error is within tolerance (position
      // unchecked, as MoveIt's default goal tolerances): the arm then settles on the held last point.
      const end = await settle();
      assert.ok(near(end.positions, [0, 0, 0, -1.57, 0, 1.57, 0], 2e-3), JSON.stringify(end.positions));
      const bad = await service('iiwa_msgs/srv/MoveToNamedPose', 'cobot/move_to_named', {
        name: 'nowhere',
        speed: 1,
        accel_scale: 0,
      });
      assert.equal(bad.success, false);
    });

    test('/plan_kinematic_path and /apply_planning_scene: a plan within the limits; a goal inside a box fails (FAILURE)', async () => {
      await setAt([0, 0.3, 0, -1.2, 0, 0.9, 0]);
      const goalQ = [0.5, 0.6, 0, -0.9, 0, 0.9, 0];
      const plan = () =>
        service('moveit_msgs/srv/GetMotionPlan', '/plan_kinematic_path', {
          motion_plan_request: {
            group_name: 'iiwa_arm',
            start_state: { is_diff: true },
            goal_constraints: [
              {
                joint_constraints: JOINTS.map((j, i) => ({
                  joint_name: j,
                  position: goalQ[i],
                  tolerance_above: 1e-3,
                  tolerance_below: 1e-3,
                  weight: 1,
                })),
              },
            ],
            max_velocity_scaling_factor: 0.5,
            max_acceleration_scaling_factor: 0.5,
          },
        });
      const ok = (await plan()).motion_plan_response;
      assert.equal(ok.error_code.val, 1);
      const points = ok.trajectory.joint_trajectory.points;
      assert.deepEqual(Array.from(ok.trajectory.joint_trajectory.joint_names), JOINTS);
      assert.ok(near(Array.from(points.at(-1).positions), goalQ, 1e-9));
      for (const p of points)
        Array.from(p.velocities as ArrayLike<number>).forEach((v, i) => {
          assert.ok(Math.abs(v) <= at(VMAX, i) * 0.5 + 1e-9);
        });
      const tcp = (await fk(goalQ)).pose.position;
      const since = stack.events.length;
      const box = (operation: number) => ({
        scene: {
          is_diff: true,
          world: {
            collision_objects: [
              {
                header: { frame_id: 'base_link' },
                id: 'keepout',
                pose: { position: tcp, orientation: { x: 0, y: 0, z: 0, w: 1 } },
                primitives: operation === 0 ? [{ type: 1, dimensions: [0.1, 0.1, 0.1] }] : [],
                primitive_poses: operation === 0 ? [{ orientation: { w: 1 } }] : [],
                operation,
              },
            ],
          },
        },
      });
      assert.equal(
        (await service('moveit_msgs/srv/ApplyPlanningScene', '/apply_planning_scene', box(0))).success,
        true,
      );
      const event = await stack.next((e) => e.event === 'planning_scene', since);
      assert.deepEqual(event.objects, [{ id: 'keepout', operation: 'add' }]);
      const refused = (await plan()).motion_plan_response;
      assert.equal(refused.error_code.val, 99999);
      assert.match(refused.error_code.message, /keepout/);
      assert.equal(
        (await service('moveit_msgs/srv/ApplyPlanningScene', '/apply_planning_scene', box(1))).success,
        true,
      );
      assert.equal((await plan()).motion_plan_response.error_code.val, 1);
    });

    test('faults: silent (no answer), late (answered after the delay), reject and abort; clear', async () => {
      assert.equal((await stack.command({ cmd: 'fault', iface: 'compute_fk', mode: 'silent' })).ok, true);
      await assert.rejects(service('moveit_msgs/srv/GetPositionFK', '/compute_fk', { fk_link_names: ['tcp'] }, 1500));
      assert.equal((await stack.command({ cmd: 'fault', iface: 'compute_fk', mode: 'late', delay_s: 1.2 })).ok, true);
      const started = Date.now();
      const late = await service('moveit_msgs/srv/GetPositionFK', '/compute_fk', { fk_link_names: ['tcp'] }, 5000);
      assert.equal(late.error_code.val, 1);
      assert.ok(Date.now() - started >= 1100);
      // The controller is the real one: nothing can be injected into its action or its topic.
      for (const iface of ['follow_joint_trajectory', 'trajectory']) {
        const refused = await stack.command({ cmd: 'fault', iface, mode: 'silent' });
        assert.equal(refused.ok, false, `${iface}: ${JSON.stringify(refused)}`);
        assert.match(String(refused.error), /real controller/);
      }
      await stack.command({ cmd: 'fault', iface: 'move_to_joints', mode: 'abort' });
      const cobot = await actionClient('iiwa_msgs/action/MoveToJoints', 'cobot/move_to_joints');
      const aborted = await cobot.sendGoal({ joints: [0, 0, 0, -1, 0, 1, 0], speed: 1 });
      assert.ok(aborted.accepted);
      await aborted.getResult();
      assert.equal(aborted.status, STATUS.ABORTED);
      await stack.command({ cmd: 'clear' });
      // An action whose goal requests are never answered, then answered late (the cobot server's).
      await stack.command({ cmd: 'fault', iface: 'move_to_joints', mode: 'silent' });
      const since = stack.events.length;
      const unanswered = cobot.sendGoal({ joints: [0, 0.3, 0, -1.2, 0, 0.9, 0], speed: 1 });
      assert.equal(await Promise.race([unanswered.then(() => 'answered'), sleep(1500).then(() => 'silent')]), 'silent');
      await stack.next((e) => e.event === 'goal' && e.iface === 'move_to_joints', since);
      await stack.command({ cmd: 'fault', iface: 'move_to_joints', mode: 'late', delay_s: 1 });
      const lateStart = Date.now();
      const lateGoal = await cobot.sendGoal({ joints: [0, 0.3, 0, -1.2, 0, 0.9, 0], speed: 1 });
      assert.ok(lateGoal.accepted);
      assert.ok(Date.now() - lateStart >= 900, 'accepted a second late');
      await lateGoal.getResult();
      await stack.command({ cmd: 'clear' });
      // No joint states while joint_states is silent.
      await stack.command({ cmd: 'fault', iface: 'joint_states', mode: 'silent' });
      await sleep(200);
      const count = jointStateCount;
      await sleep(500);
      assert.equal(jointStateCount, count);
      await stack.command({ cmd: 'clear' });
      for (let i = 0; i < 100 && jointStateCount === count; i++) await sleep(50);
      assert.ok(jointStateCount > count, 'the broadcaster publishes again after clear');
      const unknown = await stack.command({ cmd: 'fault', iface: 'nothing', mode: 'silent' });
      assert.equal(unknown.ok, false);
      await stack.command({ cmd: 'clear' });
      assert.equal(
        (await service('moveit_msgs/srv/GetPositionFK', '/compute_fk', { fk_link_names: ['tcp'] })).error_code.val,
        1,
      );
    });

    test('SIGTERM with a goal in flight: the stack exits 0 at once and the real controller goes with it (its goal gets no result; no joint states after)', async () => {
      await setAt([0, 0.3, 0, -1.2, 0, 0.9, 0]);
      const client = await fjt();
      const goal = await client.sendGoal(fjtGoal(trajectory(JOINTS, [point([2, 0.3, 0, -1.2, 0, 0.9, 0], 5)])));
      await sleep(300);
      const started = Date.now();
      stack.child.kill('SIGTERM');
      assert.equal(await stack.exited, 0);
      assert.ok(Date.now() - started < 3000, 'exited at once');
      await sleep(1000);
      const count = jointStateCount;
      await sleep(1000);
      assert.equal(jointStateCount, count, 'no joint states: the broadcaster ended with the stack');
      assert.notEqual(goal.status, STATUS.SUCCEEDED, 'the goal did not run to its end');
    });

    test('--shuffle publishes the joints in a fixed shuffled order; --stop-all: cobot/stop stops a topic trajectory; stdin closed ends the stack', async (t) => {
      const shuffled = new StackProcess(['--shuffle', '--stop-all'], env);
      t.after(() => shuffled.child.kill('SIGKILL')); // a failed check must not leave it running
      await shuffled.next((e) => e.event === 'ready', 0, 60_000);
      const seen: string[][] = [];
      const sub = node.createSubscription('sensor_msgs/msg/JointState', '/joint_states', (msg: Any) =>
        seen.push(Array.from(msg.name)),
      );
      for (let i = 0; i < 200 && seen.length < 5; i++) await sleep(50);
      node.destroySubscription(sub);
      assert.ok(seen.length >= 5);
      assert.notDeepEqual(seen.at(-1), JOINTS);
      assert.deepEqual([...(seen.at(-1) ?? [])].sort(), JOINTS);
      assert.deepEqual(seen.at(-1), seen.at(-2));
      const pub = node.createPublisher('trajectory_msgs/msg/JointTrajectory', '/iiwa_arm_controller/joint_trajectory');
      for (let i = 0; i < 100 && node.countSubscribers('/iiwa_arm_controller/joint_trajectory') < 2; i++)
        await sleep(50);
      pub.publish(trajectory(JOINTS, [point([1.5, 0.3, 0, -1.2, 0, 0.9, 0], 3)]));
      await shuffled.next((e) => e.event === 'trajectory');
      await sleep(800);
      const stopper = node.createClient('std_srvs/srv/Trigger', 'cobot/stop');
      assert.ok(await stopper.waitForService(15_000));
      assert.equal((await stopper.sendRequestAsync({}, { timeout: 5000 })).success, true);
      await sleep(1000);
      const s1 = await shuffled.state();
      await sleep(500);
      const s2 = await shuffled.state();
      assert.equal(s2.moving, false);
      assert.ok(at(s2.positions, 0) < 1.2 && at(s2.positions, 0) === at(s1.positions, 0), 'stopped part way and stays');
      node.destroyClient(stopper);
      shuffled.child.stdin.end();
      assert.equal(await shuffled.exited, 0);
    });
  });
}
