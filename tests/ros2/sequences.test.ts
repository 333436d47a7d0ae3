/**
 * The sequence runner on ros2 over real DDS: its own process with its own node and action clients,
 * bags recorded from the real topics and readable as rosbag2 MCAP, /stop and armgate's death ending
 * it with nothing left behind. Run by `npm run test:ros2`.
 */
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { readBag } from '../support/bag.ts';
import { assertProcessGone } from '../support/live.ts';
import { sequenceForm } from '../support/multipart.ts';
import {
  assertNear,
  call,
  detailOf,
  type JointStateBody,
  OTHER,
  setOverride,
  sleep,
  WORK,
} from '../support/rcl-checks.ts';
import { startRos2Armgate, type Ros2Armgate } from './support/armgate.ts';
import { requireRos2, TestStack, useDomain } from './support/stack.ts';

requireRos2();
useDomain(2);

/**
 * How long a sequence's first goal may take to reach the stack: the runner is a new process and a new DDS participant,
 * which must start, discover the stack and its topics and open the bag first (at load average 25, beside two busy
 * processes, 10 s was not enough: 30 s from the runner's start to its recording was seen). A bound, not a pace.
 */
const FIRST_GOAL_MS = 60_000;

interface Status {
  status: string;
  returncode?: number;
  pid?: number;
}

async function startSequence(
  url: string,
  bag: string,
  iterations = 1,
  speed = 0.5,
  topics = '/joint_states,/iiwa_arm_controller/joint_trajectory',
): Promise<Response> {
  const pose = { x: 0.45, y: 0.1, z: 0.6, a: 0, b: Math.PI, c: 0, speed };
  const form = sequenceForm(
    { home: { joints: WORK, speed }, waypoints: [{ joints: OTHER, speed }, pose] },
    {
      n_iterations: String(iterations),
      delay_between_iterations: '0',
      bag_path: bag,
      topics,
    },
  );
  return fetch(`${url}/sequences/start`, { method: 'POST', body: form });
}

async function status(url: string): Promise<Status> {
  return (await call<Status>(url, '/sequences/status')).body;
}

async function finished(url: string, limitMs = 90_000): Promise<Status> {
  let s = await status(url);
  for (const end = Date.now() + limitMs; s.status === 'running' && Date.now() < end; await sleep(200))
    s = await status(url);
  return s;
}

/**
 * The node names on this suite's graph, seen by a probe node of the test's own: after a second of discovery, sampled
 * every 200 ms while `running` says so (until a sequence runner's node is among them); `sampled` counts the samples.
 */
async function graphNodesWhile(running: () => Promise<boolean>): Promise<{ seen: Set<string>; sampled: number }> {
  const module = (await import('rclnodejs' as string)) as { default?: unknown };
  // rclnodejs is CommonJS: import() gives its API as the default export.
  const rcl = (module.default ?? module) as {
    init(): Promise<void>;
    Node: new (name: string) => { getNodeNames(): string[]; destroy(): void };
    shutdown(): void;
    isShutdown?(): boolean;
  };
  await rcl.init();
  const node = new rcl.Node('armgate_test_probe');
  const seen = new Set<string>();
  let sampled = 0;
  try {
    await sleep(1000); // discovery
    while (await running()) {
      for (const name of node.getNodeNames()) seen.add(name);
      sampled++;
      if ([...seen].some((n) => n.startsWith('armgate_sequence_runner'))) break;
      await sleep(200);
    }
    return { seen, sampled };
  } finally {
    node.destroy();
    rcl.shutdown();
  }
}

describe('sequence runner on ros2 over real DDS', () => {
  const stack = new TestStack();
  let armgate: Ros2Armgate;
  let url: string;
  before(async () => {
    await stack.start();
    armgate = await startRos2Armgate();
    url = armgate.url;
  });
  after(async () => {
    await armgate?.close();
    await stack.stop();
  });

  it("runs on its own node through the stack's actions and records a rosbag2 MCAP bag from the real topics", async () => {
    const from = stack.events.length;
    const started = await startSequence(url, 'real-topics');
    assert.equal(started.status, 200, await started.text());
    // The graph sampled while the run lasts (against the real controller a run is short: one snapshot missed it).
    const probe = graphNodesWhile(async () => (await status(url)).status === 'running');
    const end = await finished(url);
    const { seen, sampled } = await probe;
    const logs = (await call<{ lines: string[] }>(url, '/sequences/logs?n=200')).body.lines.join('\n');
    assert.equal(end.returncode, 0, logs);
    if (sampled > 0)
      assert.ok(
        [...seen].some((n) => n.startsWith('armgate_sequence_runner')),
        `the runner made its own node: ${[...seen].join(', ')} (${sampled} samples while it ran)`,
      );
    const goals = stack.since(from, 'goal').map((g) => String(g.iface));
    assert.deepEqual(
      goals,
      ['move_to_joints', 'move_to_joints', 'move_to_pose', 'move_to_joints'],
      'home, waypoint 1, waypoint 2 (pose), home',
    );
    const folder = path.join(armgate.bagRoot, 'real-topics');
    assert.ok((await readdir(folder)).includes('metadata.yaml'));
    const bag = await readBag(folder);
    const topics = bag.channels.map((c) => [c.topic, c.schemaName, c.messageEncoding]);
    assert.ok(
      topics.some(([t, s, e]) => t === '/joint_states' && s === 'sensor_msgs/msg/JointState' && e === 'cdr'),
      JSON.stringify(topics),
    );
    const states = bag.messages.filter((m) => m.topic === '/joint_states');
    assert.ok(states.length > 50, `joint states all along the run: ${states.length}`);
    const positions = states.map((m) => {
      const decoded = m.decoded as { name: string[]; position: ArrayLike<number> };
      const names = decoded.name;
      const pos = Array.from(decoded.position);
      return ['joint1', 'joint2', 'joint3', 'joint4', 'joint5', 'joint6', 'joint7'].map(
        (n) => pos[names.indexOf(n)] ?? NaN,
      );
    });
    assert.ok(
      positions.some((p) => Math.abs((p[0] ?? 0) - (OTHER[0] ?? 0)) < 2e-3),
      'the recorded states pass through waypoint 1',
    );
    assertNear(positions.at(-1) ?? [], WORK, 2e-3, 'the last recorded state is home');
    assert.equal(bag.metadata.message_count, bag.messages.length);
  });

  it("records robot_state_publisher's /tf, /tf_static (latched) and /robot_description (latched) from the graph in a bag of every topic", async () => {
    const started = await startSequence(url, 'robot-state', 1, 0.5, '');
    assert.equal(started.status, 200, await started.text());
    const end = await finished(url);
    const logs = (await call<{ lines: string[] }>(url, '/sequences/logs?n=200')).body.lines.join('\n');
    assert.equal(end.returncode, 0, logs);
    assert.doesNotMatch(logs, /computed by armgate/, 'the stack publishes them: nothing is computed');
    const bag = await readBag(path.join(armgate.bagRoot, 'robot-state'));
    const channel = (topic: string) => bag.channels.find((c) => c.topic === topic);
    const decoded = (topic: string) => bag.messages.filter((m) => m.topic === topic).map((m) => m.decoded);
    for (const [topic, type, durability] of [
      ['/robot_description', 'std_msgs/msg/String', 1],
      ['/tf_static', 'tf2_msgs/msg/TFMessage', 1],
      ['/tf', 'tf2_msgs/msg/TFMessage', 2],
    ] as const) {
      const c = channel(topic);
      assert.ok(c, `${topic} is in the bag: ${bag.channels.map((x) => x.topic).join(', ')}`);
      assert.equal(c.schemaName, type);
      assert.equal(c.metadata.get('armgate_source'), undefined, `${topic} was recorded from the graph`);
      assert.match(c.metadata.get('offered_qos_profiles') ?? '', new RegExp(`durability: ${durability}\n`));
      assert.ok(decoded(topic).length > 0, `${topic} holds messages (${logs})`);
    }
    const description = decoded('/robot_description')[0] as { data: string };
    assert.match(description.data, /<robot[\s\S]*joint7/, 'the latched URDF arrived whole');
    const staticFrames = (decoded('/tf_static') as { transforms: { child_frame_id: string }[] }[]).flatMap((m) =>
      m.transforms.map((t) => t.child_frame_id),
    );
    assert.ok(staticFrames.length > 0, 'the latched fixed transforms arrived');
    const moving = decoded('/tf') as {
      transforms: { header: { frame_id: string }; child_frame_id: string; transform: { rotation: { w: number } } }[];
    }[];
    assert.ok(moving.length > 10, `transforms all along the run: ${moving.length}`);
    const children = new Set(moving.flatMap((m) => m.transforms.map((t) => t.child_frame_id)));
    assert.ok(children.size >= 7, `one transform per movable joint: ${[...children].join(', ')}`);
    const rotations = new Set(moving.map((m) => JSON.stringify(m.transforms.map((t) => t.transform.rotation))));
    assert.ok(rotations.size > 1, 'the transforms follow the arm as it moves');
  });

  it('on POST /stop cancels its goal on the stack, closes the bag and leaves no process', async () => {
    const from = stack.events.length;
    const started = await startSequence(url, 'stopped', 3, 0.1);
    assert.equal(started.status, 200, await started.text());
    await stack.waitFor((e) => e.event === 'goal', FIRST_GOAL_MS, from);
    await sleep(500);
    const pid = (await status(url)).pid;
    const stopped = await call(url, '/stop', {});
    assert.equal(stopped.status, 200, detailOf(stopped));
    const end = await finished(url, 10_000);
    assert.notEqual(end.status, 'running', 'the run ended');
    assert.notEqual(end.returncode, 0, 'a stopped run does not report success');
    // The runner's cancel request reaches the stack's action server. Whether the stack still had the goal
    // to cancel (a `cancel` event) is a race with armgate's own hold point and stop service, which may end
    // it first under load (then the server answers the request with nothing to cancel).
    await stack
      .waitFor((e) => e.event === 'cancel_request', 3000, from)
      .catch(async (e: Error) => {
        // What happened, for a failure under load: the run's end, its log, and what the stack saw.
        const logs = (await call<{ lines: string[] }>(url, '/sequences/logs?n=30')).body.lines.join('\n');
        const seen = stack.events
          .slice(from)
          .map((x) => `${x.event}${x.iface ? ` ${String(x.iface)}` : ''}${x.status ? ` ${String(x.status)}` : ''}`);
        throw new Error(
          `${e.message}; the run ended ${JSON.stringify(end)}; the stack saw: ${seen.filter((x) => x !== 'state' && x !== 'ack').join(', ')}; runner log:\n${logs}`,
        );
      });
    if (pid) assertProcessGone(pid);
    const bag = await readBag(path.join(armgate.bagRoot, 'stopped'));
    assert.ok(bag.messages.length > 0, 'the bag was closed with what it had');
    await sleep(300);
    assert.equal((await stack.state()).moving, false, 'the arm is at rest');
  });

  it("pause during a sequence: its runner's goal is cancelled on the stack and held; resume sends it again and the run ends 0; the override scales its goals", async () => {
    const from = stack.events.length;
    const started = await startSequence(url, 'paused', 1, 0.05);
    assert.equal(started.status, 200, await started.text());
    // Paused while a goal moves the arm (between two goals the runner may send the next before it hears of the pause):
    // the goal to waypoint 1, at 5 % of full speed a motion of seconds (the home goal may last a few ms, the arm
    // being there already: a pause after it found no goal in flight, and nothing to cancel).
    await stack.waitFor(
      (e) =>
        e.event === 'goal' &&
        Math.abs(((e.goal as { joints?: number[] } | null)?.joints?.[0] ?? NaN) - (OTHER[0] ?? 0)) < 1e-6,
      FIRST_GOAL_MS,
      from,
    );
    for (let i = 0; i < 200 && !(await stack.state()).moving; i++) await sleep(20);
    await sleep(200);
    const paused = await call<{ paused: boolean; message: string }>(url, '/robot/pause', {});
    assert.equal(paused.status, 200, detailOf(paused));
    assert.equal(paused.body.paused, true, paused.body.message);
    await stack.waitFor((e) => e.event === 'cancel', 3000, from);
    assert.equal((await stack.state()).moving, false, 'at rest when the pause answers');
    const seq = (await call<Status & { paused_since?: string }>(url, '/sequences/status')).body;
    assert.equal(seq.status, 'paused');
    const held = (await call<{ position: number[] }>(url, '/robot/joint_states')).body.position;
    await sleep(800);
    const still = (await call<{ position: number[] }>(url, '/robot/joint_states')).body.position;
    assert.ok(Math.max(...held.map((q, i) => Math.abs(q - (still[i] ?? 0)))) < 1e-3, 'it holds while paused');
    const goalsBefore = stack.events.slice(from).filter((e) => e.event === 'goal').length;
    // The override while paused: the resumed goal goes at 50 % of its speed.
    await setOverride(url, 50);
    const next = stack.events.length;
    assert.equal((await call(url, '/robot/resume', {})).status, 200);
    const again = await stack.waitFor((e) => e.event === 'goal', 5000, next);
    const speed = Number((again.goal as { speed?: number } | null)?.speed);
    assert.ok(Math.abs(speed - 0.025) < 1e-6, `the resumed goal at 50 % of 0.05: ${JSON.stringify(again.goal)}`);
    const end = await finished(url, 90_000);
    assert.equal(end.status, 'finished', JSON.stringify(end));
    assert.equal(end.returncode, 0, 'the paused run ends as it would have');
    assert.ok(
      stack.events.slice(from).filter((e) => e.event === 'goal').length > goalsBefore,
      'the goal was sent again',
    );
    await setOverride(url, 100);
  });

  /**
   * What reaches the stack from `from` on of the runner's goals (a goal, a cancel), and whether the
   * arm moved: joint states over `ms` (every |v| < 1e-3 rad/s, positions within 1e-4 rad) and the stack's own view.
   */
  async function heldFor(ms: number, from: number, what: string): Promise<void> {
    const first = (await call<JointStateBody>(url, '/robot/joint_states')).body;
    for (const end = Date.now() + ms; Date.now() < end; await sleep(50)) {
      const now = (await call<JointStateBody>(url, '/robot/joint_states')).body;
      const fastest = Math.max(...now.velocity.map(Math.abs));
      assert.ok(fastest < 1e-3, `${what}: a joint moves at ${fastest} rad/s while paused`);
      assertNear(now.position, first.position, 1e-4, `${what}: it holds while paused`);
    }
    assert.equal((await stack.state()).moving, false, `${what}: the stack's arm rests`);
    const reached = stack.events
      .slice(from)
      .filter((e) => e.event === 'goal' || e.event === 'cancel' || e.event === 'cancel_request');
    assert.deepEqual(reached, [], `${what}: nothing of the runner reached the stack after the pause answered`);
  }

  /** Runs `check`; when it fails, POST /stop first, so that nothing it left paused or running holds the next test. */
  async function orStop(check: () => Promise<void>): Promise<void> {
    try {
      await check();
    } catch (e) {
      await call(url, '/stop', {});
      await finished(url, 10_000);
      throw e;
    }
  }

  it('pause between two goals, the next on its way (its server answers goal requests late): answers after the cancel; nothing reaches the stack after the answer and the arm rests until resume; the run ends 0', async () => {
    await orStop(async () => {
      const moved = await call(url, '/robot/move/joints', { joints: WORK, speed: 0.5 });
      assert.equal(moved.status, 200, detailOf(moved));
      await stack.command({ cmd: 'fault', iface: 'move_to_joints', mode: 'late', delay_s: 0.6 });
      const from = stack.events.length;
      try {
        const form = sequenceForm(
          { home: { joints: WORK, speed: 0.5 }, waypoints: [{ joints: OTHER, speed: 0.5 }] },
          { n_iterations: '1', delay_between_iterations: '0' },
        );
        const started = await fetch(`${url}/sequences/start`, { method: 'POST', body: form });
        assert.equal(started.status, 200, await started.text());
        // Home reached, the goal of waypoint 1 received by the stack and not yet answered: between two goals.
        await stack.waitFor((e) => e.event === 'result' && e.iface === 'move_to_joints', 20_000, from);
        const second = stack.events.length;
        await stack.waitFor((e) => e.event === 'goal', 10_000, second);
        const paused = await call<{ paused: boolean; message: string }>(url, '/robot/pause', {});
        const answered = stack.events.length;
        assert.equal(paused.status, 200, detailOf(paused));
        assert.equal(paused.body.paused, true, paused.body.message);
        await heldFor(1200, answered, 'paused with the goal of waypoint 1 on its way');
        assert.equal(
          stack.since(second, 'cancel').length,
          1,
          "the runner cancelled waypoint 1's goal before the answer",
        );
      } finally {
        await stack.command({ cmd: 'clear' });
      }
      assert.equal((await call(url, '/robot/resume', {})).status, 200);
      const end = await finished(url, 60_000);
      assert.equal(end.returncode, 0, JSON.stringify(end));
      assert.deepEqual(
        stack.since(from, 'goal').map((g) => String(g.iface)),
        ['move_to_joints', 'move_to_joints', 'move_to_joints', 'move_to_joints'],
        'home, waypoint 1 (paused), waypoint 1 again, home',
      );
    });
  });

  it("pause right after each goal's result (the runner between two goals): nothing reaches the stack after the answer, the arm rests until resume; the run ends 0", async () => {
    await orStop(async () => {
      const moved = await call(url, '/robot/move/joints', { joints: WORK, speed: 0.5 });
      assert.equal(moved.status, 200, detailOf(moved));
      const form = sequenceForm(
        {
          home: { joints: WORK, speed: 0.5 },
          waypoints: [
            { joints: OTHER, speed: 0.5 },
            { joints: WORK, speed: 0.5 },
            { joints: OTHER, speed: 0.5 },
          ],
        },
        { n_iterations: '1', delay_between_iterations: '0' },
      );
      const started = await fetch(`${url}/sequences/start`, { method: 'POST', body: form });
      assert.equal(started.status, 200, await started.text());
      for (let k = 1; k <= 3; k++) {
        const before = stack.events.length;
        await stack.waitFor((e) => e.event === 'result' && e.iface === 'move_to_joints', 20_000, before);
        const paused = await call<{ paused: boolean; message: string }>(url, '/robot/pause', {});
        const answered = stack.events.length;
        assert.equal(paused.status, 200, detailOf(paused));
        assert.equal(paused.body.paused, true, paused.body.message);
        await heldFor(600, answered, `paused after result ${k}`);
        assert.equal((await call(url, '/robot/resume', {})).status, 200);
      }
      const end = await finished(url, 60_000);
      assert.equal(end.returncode, 0, JSON.stringify(end));
    });
  });

  it('dies with armgate (SIGKILL mid-sequence): no runner left, the bag readable', async () => {
    const moved = await call(url, '/robot/move/named', { name: 'work', speed: 0.5 });
    assert.equal(moved.status, 200, detailOf(moved));
    const from = stack.events.length;
    const started = await startSequence(url, 'killed', 3, 0.1);
    assert.equal(started.status, 200, await started.text());
    // Mid-sequence: its first goal has reached the stack (the runner opened the bag before it), and it moves.
    await stack.waitFor((e) => e.event === 'goal', FIRST_GOAL_MS, from);
    await sleep(500);
    const pid = (await status(url)).pid;
    assert.ok(pid, 'the runner pid');
    // Its bags kept: the runner's is read after the kill.
    await armgate.close('SIGKILL', { keepBags: true });
    // The runner sees its parent gone, cancels its goal (1.5 s at most), closes its bag and exits: within 20 s (at load
    // average 30 beside two busy processes 5 s was not always enough).
    for (let i = 0; i < 200; i++) {
      try {
        process.kill(pid, 0);
        await sleep(100);
      } catch {
        break;
      }
    }
    assertProcessGone(pid);
    const bag = await readBag(path.join(armgate.bagRoot, 'killed')).catch((e: Error) => e);
    assert.ok(!(bag instanceof Error), `the bag reads after the kill: ${bag instanceof Error ? bag.message : ''}`);
    await armgate.removeBags();
    armgate = await startRos2Armgate();
    url = armgate.url;
  });
});
