import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse as parseMsg } from '@foxglove/rosmsg';
import { MessageReader } from '@foxglove/rosmsg2-serialization';
import { McapStreamReader } from '@mcap/core';
import { parse as parseYaml } from 'yaml';
import {
  assertNear,
  call,
  checkSequenceWithBag,
  OTHER,
  sleep,
  WORK,
  finished,
  type SequenceStatus,
} from '../support/rcl-checks.ts';
import { processExists } from '../support/live.ts';
import { MotionArbiter } from '../../lib/control/arbiter.ts';
import { SequenceSupervisor } from '../../lib/sequences/supervisor.ts';
import { FIXTURE_AMENT_PREFIX, type RclTestServer, startRclTestServer } from '../support/rcl-server.ts';

// The sequence runner on robot.backend ros2: a process of its own with its own rclnodejs node.
// Here its `rclnodejs` is the remote STAND-IN (tests/support/rclnodejs-standin-remote.ts), which
// forwards to the in-process stand-in of the test server (tests/support/standin-graph.ts), backed
// by the simulator: not ROS 2 (no DDS, QoS or real typesupport; raw CDR comes from
// @foxglove/rosmsg2-serialization). The installed interface packages are the .msg files of
// tests/fixtures/ament (AMENT_PREFIX_PATH of the runner), whose comments differ from armgate's
// built-in definitions, so a schema shows where it came from.

interface Bag {
  readonly schemas: Map<string, string>;
  readonly channels: { topic: string; schema: string; encoding: string; source?: string | undefined }[];
  readonly messages: { topic: string; decoded: Record<string, unknown>; logTime: bigint }[];
  readonly metadata: {
    message_count: number;
    topics_with_message_count: { topic_metadata: { name: string; type: string }; message_count: number }[];
  };
}

/** Reads every record of the bag's MCAP file with @mcap/core's stream reader and decodes the messages with their stored schemas. */
async function readBag(folder: string): Promise<Bag> {
  const files = (await readdir(folder)).sort();
  assert.deepEqual(files, [`${path.basename(folder)}_0.mcap`, 'metadata.yaml'].sort());
  const stream = new McapStreamReader();
  stream.append(await readFile(path.join(folder, `${path.basename(folder)}_0.mcap`)));
  const schemas = new Map<number, { name: string; text: string; reader: MessageReader }>();
  const channelsById = new Map<number, Bag['channels'][number]>();
  const messages: Bag['messages'] = [];
  for (let record = stream.nextRecord(); record; record = stream.nextRecord()) {
    if (record.type === 'Schema') {
      const text = new TextDecoder().decode(record.data);
      schemas.set(record.id, { name: record.name, text, reader: new MessageReader(parseMsg(text, { ros2: true })) });
    } else if (record.type === 'Channel') {
      channelsById.set(record.id, {
        topic: record.topic,
        schema: schemas.get(record.schemaId)?.name ?? '?',
        encoding: record.messageEncoding,
        ...(record.metadata.has('armgate_source') ? { source: record.metadata.get('armgate_source') } : {}),
      });
    } else if (record.type === 'Message') {
      const channel = channelsById.get(record.channelId);
      const schema = [...schemas.values()].find((s) => s.name === channel?.schema);
      assert.ok(channel && schema, `message on unknown channel ${record.channelId}`);
      messages.push({
        topic: channel.topic,
        decoded: schema.reader.readMessage(record.data) as Record<string, unknown>,
        logTime: record.logTime,
      });
    }
  }
  assert.ok(stream.done(), 'the MCAP file ends with its footer and magic');
  const metadata = (
    parseYaml(await readFile(path.join(folder, 'metadata.yaml'), 'utf8')) as {
      rosbag2_bagfile_information: Bag['metadata'];
    }
  ).rosbag2_bagfile_information;
  return {
    schemas: new Map([...schemas.values()].map((s) => [s.name, s.text])),
    channels: [...channelsById.values()],
    messages,
    metadata,
  };
}

/** The complete definition rosbag2 would store for JointState from the fixture files. */
async function fixtureJointStateDefinition(): Promise<string> {
  const msg = (pkg: string, type: string) =>
    readFile(path.join(FIXTURE_AMENT_PREFIX, 'share', pkg, 'msg', `${type}.msg`), 'utf8');
  const rule = `\n${'='.repeat(80)}\n`;
  return `${await msg('sensor_msgs', 'JointState')}${rule}MSG: std_msgs/Header\n${await msg('std_msgs', 'Header')}${rule}MSG: builtin_interfaces/Time\n${await msg('builtin_interfaces', 'Time')}`;
}

async function start(url: string, config: object, fields: Record<string, string>): Promise<Response> {
  const form = new FormData();
  form.set('config', new Blob([JSON.stringify(config)]), 'config.json');
  for (const [k, v] of Object.entries(fields)) form.set(k, v);
  return fetch(`${url}/sequences/start`, { method: 'POST', body: form });
}

describe('sequence runner on robot.backend ros2: its own node, action clients and raw-subscription bags', () => {
  let t: RclTestServer;
  let bagRoot: string;
  before(async () => {
    bagRoot = await mkdtemp(path.join(tmpdir(), 'armgate-rcl-runner-'));
    t = await startRclTestServer({
      sim: { sim: { time_scale: 5 }, sequences: { bag_root: bagRoot } },
      timeouts: { server_wait_s: 1 },
    });
  });
  after(async () => {
    await t.close();
    await rm(bagRoot, { recursive: true, force: true });
  });

  it('moves through joint and pose goals on its own action clients and records the discovered topics with the installed schemas', async () => {
    const pose = { x: 0.45, y: 0.1, z: 0.6, a: 0, b: Math.PI, c: 0, speed: 0.5 };
    const sent = t.standin.requests.length;
    const started = await start(
      t.url,
      { home: { joints: WORK, speed: 0.5 }, waypoints: [{ joints: OTHER, speed: 0.5 }, pose] },
      { n_iterations: '1', delay_between_iterations: '0', bag_path: 'discovered' },
    );
    assert.equal(started.status, 200, await started.text());
    const { status, logs } = await finished(t.url);
    assert.equal(status.returncode, 0, logs);
    assert.ok(
      t.graph.nodes.includes(`armgate_sequence_runner_${status.pid}`),
      `the runner made its own node: ${t.graph.nodes.join(', ')}`,
    );
    const goals = t.standin.requests.slice(sent).map((r) => r.name);
    assert.deepEqual(
      goals,
      ['cobot/move_to_joints', 'cobot/move_to_joints', 'cobot/move_to_pose', 'cobot/move_to_joints'],
      'home, waypoint 1, waypoint 2 (pose), home',
    );
    // Both action clients made before the run's first goal (Cyclone DDS drops the answer to a client the server has
    // not discovered yet: one made at its first goal could lose that goal's answer on a loaded machine).
    const firstGoal = t.standin.requests.findIndex((r, i) => i >= sent && r.name === 'cobot/move_to_joints');
    const runnerClients = t.standin.actionClients.filter((c) => c.node === `armgate_sequence_runner_${status.pid}`);
    assert.deepEqual(
      runnerClients.map((c) => [c.name, c.atRequest <= firstGoal]).sort(),
      [
        ['cobot/move_to_joints', true],
        ['cobot/move_to_pose', true],
      ],
      JSON.stringify(runnerClients),
    );
    assert.match(logs, /not recording \/rosout: no definition of rcl_interfaces\/msg\/Log/);
    assert.match(
      logs,
      /recording \/joint_states \(sensor_msgs\/msg\/JointState\), \/iiwa_arm_controller\/joint_trajectory \(trajectory_msgs\/msg\/JointTrajectory\), \/robot_description \(std_msgs\/msg\/String\), \/tf_static \(tf2_msgs\/msg\/TFMessage\), \/tf \(tf2_msgs\/msg\/TFMessage\) to /,
    );

    const bag = await readBag(path.join(bagRoot, 'discovered'));
    assert.deepEqual(bag.channels.map((c) => [c.topic, c.schema, c.encoding]).sort(), [
      ['/iiwa_arm_controller/joint_trajectory', 'trajectory_msgs/msg/JointTrajectory', 'cdr'],
      ['/joint_states', 'sensor_msgs/msg/JointState', 'cdr'],
      // robot_state_publisher's topics (the stand-in's graph is the simulator's, which offers them).
      ['/robot_description', 'std_msgs/msg/String', 'cdr'],
      ['/tf', 'tf2_msgs/msg/TFMessage', 'cdr'],
      ['/tf_static', 'tf2_msgs/msg/TFMessage', 'cdr'],
    ]);
    assert.equal(
      bag.schemas.get('sensor_msgs/msg/JointState'),
      await fixtureJointStateDefinition(),
      'the schema is the installed .msg text, comments and all',
    );
    const states = bag.messages.filter((m) => m.topic === '/joint_states');
    assert.ok(states.length > 20, `joint states recorded all along the run: ${states.length}`);
    for (const m of states) assert.deepEqual(m.decoded.name, t.config.endpoints.joint_names);
    const times = states.map((m) => m.logTime);
    assert.ok(
      times.every((time, k) => k === 0 || time >= (times[k - 1] ?? 0n)),
      'receive times never go back',
    );
    const positions = states.map((m) => Array.from(m.decoded.position as Float64Array));
    assert.ok(
      positions.some((p) => Math.abs((p[0] ?? 0) - (OTHER[0] ?? 0)) < 1e-3),
      'the recorded states pass through waypoint 1',
    );
    assertNear(positions.at(-1) ?? [], WORK, 1e-3, 'the last recorded state is home');
    assert.equal(bag.metadata.message_count, bag.messages.length);
    const counted = Object.fromEntries(
      bag.metadata.topics_with_message_count.map((e) => [e.topic_metadata.name, e.message_count]),
    );
    assert.equal(counted['/joint_states'], states.length);
  });

  it("computes /tf, /tf_static and /robot_description from armgate's forward kinematics when the graph has no publisher of them, and says so in each channel's metadata", async () => {
    const hidden = ['/tf', '/tf_static', '/robot_description'];
    for (const name of hidden) t.standin.knobs.hiddenTopics.add(name);
    try {
      const started = await start(
        t.url,
        { home: { joints: WORK, speed: 0.5 }, waypoints: [{ joints: OTHER, speed: 0.5 }] },
        { n_iterations: '1', delay_between_iterations: '0', bag_path: 'computed' },
      );
      assert.equal(started.status, 200, await started.text());
      const { status, logs } = await finished(t.url);
      assert.equal(status.returncode, 0, logs);
      assert.match(
        logs,
        /\/robot_description, \/tf_static, \/tf: not on the graph; computed by armgate's forward kinematics/,
      );
      const bag = await readBag(path.join(bagRoot, 'computed'));
      for (const topic of hidden) {
        const channel = bag.channels.find((c) => c.topic === topic);
        assert.match(channel?.source ?? '', /computed by armgate/, `${topic}: ${JSON.stringify(bag.channels)}`);
      }
      assert.equal(bag.channels.find((c) => c.topic === '/joint_states')?.source, undefined, 'recorded from the graph');
      const of = (topic: string) => bag.messages.filter((m) => m.topic === topic).map((m) => m.decoded);
      assert.equal(of('/robot_description').length, 1);
      assert.equal(of('/robot_description')[0]?.data, t.config.robotDescriptionXml);
      const fixed = of('/tf_static')[0]?.transforms as { child_frame_id: string }[];
      assert.ok(fixed.length > 0, 'the fixed joints');
      const states = of('/joint_states');
      const moving = of('/tf') as { transforms: { header: { stamp: object }; child_frame_id: string }[] }[];
      // One per joint state the runner received (its own subscription beside the recorder's: they may differ at the
      // ends); how many joint states a motion spans depends on the machine's load (the simulator's rate is wall time).
      assert.ok(states.length >= 5, `joint states over the motion: ${states.length}`);
      assert.ok(
        moving.length >= states.length / 2 && moving.length <= states.length + 1,
        `one per joint state: ${moving.length} for ${states.length}`,
      );
      assert.equal(moving[0]?.transforms.length, 7, 'a transform per movable joint');
      // Stamped as the joint state it was computed from.
      const stamps = new Set(states.map((m) => JSON.stringify((m.header as { stamp: object }).stamp)));
      assert.ok(moving.every((m) => stamps.has(JSON.stringify(m.transforms[0]?.header.stamp))));
    } finally {
      for (const name of hidden) t.standin.knobs.hiddenTopics.delete(name);
    }
  });

  it('passes the sequence check the live ROS 2 suite runs', async () => {
    const logs = await checkSequenceWithBag(t.url, path.join(bagRoot, 'shared-check'));
    assert.match(logs, /recording \/joint_states \(sensor_msgs\/msg\/JointState\)/);
  });

  it('ends with returncode 3 naming the action when the stack does not serve the one asked for', async () => {
    const started = await start(
      t.url,
      { home: { joints: WORK, speed: 0.5 }, waypoints: [] },
      { n_iterations: '1', delay_between_iterations: '0', joints_action: 'cell/move_joints' },
    );
    assert.equal(started.status, 200, await started.text());
    const { status, logs } = await finished(t.url);
    assert.equal(status.returncode, 3, logs);
    assert.match(
      logs,
      /iteration 1: home: action server cell\/move_joints \(iiwa_msgs\/action\/MoveToJoints\) is not available: no server within 1 s/,
    );
  });

  it("ends with returncode 1 and the server's message when a goal fails", async () => {
    t.standin.knobs.failGoals = 'planning failed: goal in collision';
    try {
      const started = await start(
        t.url,
        { home: { joints: WORK, speed: 0.5 }, waypoints: [] },
        { n_iterations: '1', delay_between_iterations: '0' },
      );
      assert.equal(started.status, 200, await started.text());
      const { status, logs } = await finished(t.url);
      assert.equal(status.returncode, 1, logs);
      assert.match(logs, /iteration 1: home failed: planning failed: goal in collision/);
    } finally {
      t.standin.knobs.failGoals = undefined;
    }
  });

  it('on POST /stop cancels its goal on the action server, closes the bag and leaves no process', async () => {
    const cancels = t.standin.cancels.length;
    const started = await start(
      t.url,
      { home: { joints: OTHER, speed: 0.02 }, waypoints: [] },
      { n_iterations: '5', delay_between_iterations: '0', bag_path: 'stopped', topics: '/joint_states' },
    );
    const { pid } = (await started.json()) as { pid: number };
    assert.equal(started.status, 200, JSON.stringify(pid));
    for (let i = 0; i < 200 && !t.sim.armActivity(); i++) await sleep(25);
    assert.ok(t.sim.armActivity(), "the runner's goal is moving the arm");
    const stopped = await call<{ sequence_stopped: boolean }>(t.url, '/stop', {});
    assert.equal(stopped.status, 200);
    assert.equal(stopped.body.sequence_stopped, true);
    const { status, logs } = await finished(t.url, 5000);
    assert.equal(status.returncode, 143, logs);
    assert.deepEqual(t.standin.cancels.slice(cancels), ['cobot/move_to_joints'], 'the runner cancelled its own goal');
    assert.equal(processExists(pid), false, 'no runner process is left');
    const bag = await readBag(path.join(bagRoot, 'stopped'));
    assert.deepEqual(
      bag.channels.map((c) => c.topic),
      ['/joint_states'],
    );
    assert.ok(bag.messages.length > 0);
    for (let i = 0; i < 100 && t.sim.armActivity(); i++) await sleep(25);
    assert.equal(t.sim.armActivity(), undefined, 'the arm holds after the stop');
  });

  it('refuses a topic whose message definition is neither installed nor built in, before starting anything', async () => {
    t.standin.knobs.extraTopics.push({ name: '/camera/camera_info', types: ['sensor_msgs/msg/CameraInfo'] });
    const before = (await call<SequenceStatus>(t.url, '/sequences/status')).body;
    try {
      const started = await start(
        t.url,
        { home: { joints: WORK }, waypoints: [] },
        { bag_path: 'camera', topics: '/camera/camera_info' },
      );
      assert.equal(started.status, 422);
      const body = (await started.json()) as { detail: { loc: string[]; msg: string }[] };
      assert.deepEqual(body.detail[0]?.loc, ['body', 'topics']);
      assert.match(body.detail[0]?.msg ?? '', /unknown topic\(s\) \/camera\/camera_info/);
      assert.deepEqual((await call<SequenceStatus>(t.url, '/sequences/status')).body, before, 'no runner started');
    } finally {
      t.standin.knobs.extraTopics.length = 0;
    }
  });
});

describe('sequence runner on robot.backend ros2 without a usable rclnodejs', () => {
  it('ends with returncode 3 and the message saying how to get ROS 2 and rclnodejs', async () => {
    const t = await startRclTestServer();
    try {
      // The runner's environment without a sourced ROS 2 (and so without the stand-in).
      const supervisor = new SequenceSupervisor(t.context, {
        backend: 'ros2',
        env: { ROS_DISTRO: '', AMENT_PREFIX_PATH: '', NODE_OPTIONS: '' },
      });
      const lease = new MotionArbiter().acquire('sequence', 'the test sequence');
      assert.ok(lease.ok);
      const run = {
        iterations: 1,
        delayS: 0,
        bagPath: undefined,
        bagRoot: tmpdir(),
        topics: [],
        jointsAction: 'cobot/move_to_joints',
        poseAction: 'cobot/move_to_pose',
      };
      const started = await supervisor.start(
        { home: { joints: [...WORK], speed: 0.5 }, waypoints: [] },
        run,
        lease.value,
      );
      assert.ok(started.ok);
      for (let i = 0; i < 400 && supervisor.status().status !== 'finished'; i++) await sleep(25);
      const status = supervisor.status();
      const logs = supervisor.logs.latest(50).join('\n');
      assert.equal(status.status === 'finished' && status.returncode, 3, logs);
      assert.match(
        logs,
        /robot\.backend 'ros2' needs a sourced ROS 2 and the rclnodejs package: ROS_DISTRO and AMENT_PREFIX_PATH are not set/,
      );
      assert.equal(t.sim.armActivity(), undefined, 'nothing moved');
    } finally {
      await t.close();
    }
  });
});
