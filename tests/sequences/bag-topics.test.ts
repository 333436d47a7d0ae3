/**
 * A bag recorded with a sequence on the simulated arm holds what Foxglove's 3D panel needs to replay
 * the arm (issue 25): /robot_description (the URDF the live page draws, transient local), /tf_static
 * and /tf computed from the joint states and the URDF, beside /joint_states and the controller's
 * trajectory topic with the trajectories the goals executed; each channel with rosbag2's
 * offered_qos_profiles, the file with rosbag2's metadata record. Read back with a real MCAP reader.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { readBag } from '../support/bag.ts';
import { getJson, maxDiff, post, waitFor, WORK } from '../support/live.ts';
import { sequenceForm } from '../support/multipart.ts';
import { createTestApp, PROJECT_ROOT, type TestApp } from '../support/server.ts';

interface Vec {
  x: number;
  y: number;
  z: number;
}
interface Quat extends Vec {
  w: number;
}
interface Tf {
  transforms: {
    header: { frame_id: string };
    child_frame_id: string;
    transform: { translation: Vec; rotation: Quat };
  }[];
}
interface Pose {
  position: Vec;
  orientation: { quaternion: Quat };
}

const mul = (a: Quat, b: Quat): Quat => ({
  x: a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
  y: a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
  z: a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w,
  w: a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
});
const turn = (q: Quat, v: Vec): Vec => {
  const p = mul(mul(q, { ...v, w: 0 }), { x: -q.x, y: -q.y, z: -q.z, w: q.w });
  return { x: p.x, y: p.y, z: p.z };
};

/** The pose of `child` in `root` by walking the transforms from child to root, as a tf listener would. */
function lookup(transforms: Tf['transforms'], root: string, child: string): { position: Vec; rotation: Quat } {
  const byChild = new Map(transforms.map((t) => [t.child_frame_id, t]));
  let position: Vec = { x: 0, y: 0, z: 0 };
  let rotation: Quat = { x: 0, y: 0, z: 0, w: 1 };
  for (let frame = child; frame !== root; ) {
    const t = byChild.get(frame);
    assert.ok(t, `no transform to ${frame} (have: ${[...byChild.keys()].join(', ')})`);
    const r = t.transform.rotation;
    const moved = turn(r, position);
    const tr = t.transform.translation;
    position = { x: tr.x + moved.x, y: tr.y + moved.y, z: tr.z + moved.z };
    rotation = mul(r, rotation);
    frame = t.header.frame_id;
  }
  return { position, rotation };
}

describe('a sequence bag replays the arm in 3D (robot_description, tf, tf_static, trajectories)', () => {
  let server: TestApp;
  let bagRoot: string;

  before(async () => {
    bagRoot = await mkdtemp(path.join(tmpdir(), 'armgate-test-bag-topics-'));
    server = await createTestApp({ sim: { time_scale: 20 }, sequences: { bag_root: bagRoot } });
  });
  after(async () => {
    await server.close();
    await rm(bagRoot, { recursive: true, force: true });
  });

  it('records /joint_states, the trajectory topic, /robot_description, /tf_static and /tf with rosbag2 metadata', async () => {
    const waypoint = [0.4, 0.2, 0, -1.3, 0, 1.4, 0];
    const config = { home: { joints: [...WORK], speed: 1 }, waypoints: [{ joints: waypoint, speed: 1 }] };
    // Two iterations 0.5 s apart (the defaults, 3 iterations 5 s apart, made this test 10 s of waiting): the arm moves
    // in each, and the recording holds about 50 joint states at 100 Hz or more, however fast the moves run.
    const res = await post<{ pid: number }>(
      server,
      '/sequences/start',
      sequenceForm(config, { bag_path: 'arm3d', n_iterations: '2', delay_between_iterations: '0.5' }),
    );
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const done = await waitFor(
      'the sequence to finish',
      () => getJson<{ status: string; returncode?: number }>(server, '/sequences/status'),
      (s) => s.status === 'finished',
      30_000,
      25,
    );
    assert.equal(done.returncode, 0);

    const bag = await readBag(path.join(bagRoot, 'arm3d'));
    const byTopic = (topic: string) => bag.messages.filter((m) => m.topic === topic).map((m) => m.decoded);
    const schemaOf = Object.fromEntries(bag.channels.map((c) => [c.topic, c.schemaName]));
    assert.deepEqual(schemaOf, {
      '/joint_states': 'sensor_msgs/msg/JointState',
      '/iiwa_arm_controller/joint_trajectory': 'trajectory_msgs/msg/JointTrajectory',
      '/robot_description': 'std_msgs/msg/String',
      '/tf_static': 'tf2_msgs/msg/TFMessage',
      '/tf': 'tf2_msgs/msg/TFMessage',
    });

    // The description is the URDF the simulator and the live page use, recorded once (latched).
    const urdf = await readFile(path.join(PROJECT_ROOT, 'share/armgate/urdf/iiwa7.urdf'), 'utf8');
    assert.deepEqual(byTopic('/robot_description'), [{ data: urdf }]);
    const statics = byTopic('/tf_static') as Tf[];
    assert.equal(statics.length, 1);
    assert.deepEqual(
      statics[0]?.transforms.map((t) => `${t.header.frame_id}->${t.child_frame_id}`),
      ['link7->flange'],
    );

    // Each goal's trajectory went out on the controller's topic: one to home, one to the waypoint.
    const trajectories = byTopic('/iiwa_arm_controller/joint_trajectory') as {
      points: { positions: ArrayLike<number> }[];
    }[];
    assert.ok(trajectories.length >= 2, `${trajectories.length} trajectories recorded`);
    const ends = trajectories.map((t) => Array.from(t.points.at(-1)?.positions ?? []));
    assert.ok(
      ends.some((q) => maxDiff(q, waypoint) < 1e-6),
      'a trajectory ends at the waypoint',
    );

    // /tf follows the joint states: one message per state, with the seven joints' transforms.
    const tfs = byTopic('/tf') as Tf[];
    const states = byTopic('/joint_states');
    assert.ok(
      tfs.length > 20 && Math.abs(tfs.length - states.length) <= 2,
      `${tfs.length} tf, ${states.length} states`,
    );
    for (const tf of tfs) assert.equal(tf.transforms.length, 7);

    // The last tf with the static one puts the flange where the service reports the pose (the arm is at home).
    const last = tfs.at(-1);
    assert.ok(last && statics[0]);
    const flange = lookup([...last.transforms, ...statics[0].transforms], 'base_link', 'flange');
    const pose = await getJson<Pose>(server, '/robot/pose');
    const p = pose.position;
    assert.ok(
      Math.hypot(flange.position.x - p.x, flange.position.y - p.y, flange.position.z - p.z) < 1e-6,
      `tf puts the flange at ${JSON.stringify(flange.position)}, the service at ${JSON.stringify(p)}`,
    );
    const q = pose.orientation.quaternion;
    const dot = Math.abs(
      flange.rotation.x * q.x + flange.rotation.y * q.y + flange.rotation.z * q.z + flange.rotation.w * q.w,
    );
    assert.ok(dot > 1 - 1e-9, `tf and the service agree on the orientation (|dot| ${dot})`);
    // And the recording shows the arm moving: the flange was elsewhere at the waypoint.
    const far = tfs.some((tf) => {
      const at = lookup([...tf.transforms, ...(statics[0]?.transforms ?? [])], 'base_link', 'flange').position;
      return Math.hypot(at.x - p.x, at.y - p.y, at.z - p.z) > 0.1;
    });
    assert.ok(far, 'the flange moved more than 0.1 m during the run');

    // rosbag2's channel metadata: offered_qos_profiles, transient local (1) for the latched topics, volatile (2) else.
    for (const channel of bag.channels) {
      const profiles = parseYaml(channel.metadata.get('offered_qos_profiles') ?? '') as Record<string, unknown>[];
      assert.equal(profiles.length, 1, channel.topic);
      const latched = channel.topic === '/robot_description' || channel.topic === '/tf_static';
      assert.equal(profiles[0]?.durability, latched ? 1 : 2, channel.topic);
      assert.equal(profiles[0]?.reliability, 1, channel.topic);
    }
    for (const t of bag.metadata.topics_with_message_count) {
      const channel = bag.channels.find((c) => c.topic === t.topic_metadata.name);
      assert.equal(t.topic_metadata.offered_qos_profiles, channel?.metadata.get('offered_qos_profiles'));
    }
    // The rosbag2 metadata record of the MCAP file (Humble's storage plugin: ROS_DISTRO).
    assert.deepEqual(
      bag.records.map((r) => [r.name, [...r.metadata.keys()]]),
      [['rosbag2', ['ROS_DISTRO']]],
    );
  });
});
