import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parse } from '@foxglove/rosmsg';
import { MessageReader, MessageWriter } from '@foxglove/rosmsg2-serialization';
import { definitionFor, KNOWN_TYPES } from '../../lib/bag/definitions.ts';

const RULE = '='.repeat(80);

describe('ros2msg definitions for MCAP schemas', () => {
  it('knows the types armgate records', () => {
    for (const type of [
      'sensor_msgs/msg/JointState',
      'trajectory_msgs/msg/JointTrajectory',
      'trajectory_msgs/msg/JointTrajectoryPoint',
      'std_msgs/msg/Header',
      'std_msgs/msg/String',
      'builtin_interfaces/msg/Time',
      'builtin_interfaces/msg/Duration',
      'geometry_msgs/msg/PoseStamped',
      'geometry_msgs/msg/Pose',
      'geometry_msgs/msg/Point',
      'geometry_msgs/msg/Quaternion',
    ]) {
      assert.ok(KNOWN_TYPES.includes(type), type);
      assert.equal(typeof definitionFor(type), 'string', type);
    }
  });

  it('returns undefined for an unknown type or a name without /msg/', () => {
    assert.equal(definitionFor('sensor_msgs/msg/Image'), undefined);
    assert.equal(definitionFor('sensor_msgs/JointState'), undefined);
    assert.equal(definitionFor('toString'), undefined);
  });

  it('lays out JointTrajectory as rosbag2 does: root, then dependencies depth first in sorted order', () => {
    const expected = [
      'std_msgs/Header header\nstring[] joint_names\nJointTrajectoryPoint[] points\n',
      `${RULE}\nMSG: std_msgs/Header\nbuiltin_interfaces/Time stamp\nstring frame_id\n`,
      `${RULE}\nMSG: builtin_interfaces/Time\nint32 sec\nuint32 nanosec\n`,
      `${RULE}\nMSG: trajectory_msgs/JointTrajectoryPoint\nfloat64[] positions\nfloat64[] velocities\nfloat64[] accelerations\nfloat64[] effort\nbuiltin_interfaces/Duration time_from_start\n`,
      `${RULE}\nMSG: builtin_interfaces/Duration\nint32 sec\nuint32 nanosec\n`,
    ].join('\n');
    assert.equal(definitionFor('trajectory_msgs/msg/JointTrajectory'), expected);
  });

  it('includes each dependency once (PoseStamped: Pose, Point, Quaternion, Header, Time)', () => {
    const text = definitionFor('geometry_msgs/msg/PoseStamped') ?? '';
    const names = [...text.matchAll(/^MSG: (.+)$/gm)].map((m) => m[1]);
    assert.deepEqual(names, [
      'geometry_msgs/Pose',
      'geometry_msgs/Point',
      'geometry_msgs/Quaternion',
      'std_msgs/Header',
      'builtin_interfaces/Time',
    ]);
    assert.match(text, /\nfloat64 w 1\n/);
  });

  it('parses with @foxglove/rosmsg and round-trips a message through CDR for every known type', () => {
    for (const type of KNOWN_TYPES) {
      const definitions = parse(definitionFor(type) ?? '', { ros2: true });
      assert.ok(definitions.length > 0, type);
      const bytes = new MessageWriter(definitions).writeMessage({});
      assert.ok(bytes.byteLength >= 4, type);
      const decoded = new MessageReader(definitions).readMessage(bytes);
      assert.equal(typeof decoded, 'object', type);
    }
  });

  it('resolves JointState fields to the ROS 2 types', () => {
    const [root] = parse(definitionFor('sensor_msgs/msg/JointState') ?? '', { ros2: true });
    assert.deepEqual(
      root?.definitions.map((f) => [f.name, f.type, f.isArray ?? false]),
      [
        ['header', 'std_msgs/Header', false],
        ['name', 'string', true],
        ['position', 'float64', true],
        ['velocity', 'float64', true],
        ['effort', 'float64', true],
      ],
    );
  });
});
