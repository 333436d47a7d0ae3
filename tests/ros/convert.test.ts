import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  durationFromRos,
  feedbackStateFromRos,
  fkRequestToRos,
  fkResponseFromRos,
  jointStateByName,
  jointStateFromRos,
  jointTrajectoryFromRos,
  jointTrajectoryToRos,
  motionResultFromRos,
  moveToJointsGoalToRos,
  moveToNamedToRos,
  moveToPoseGoalToRos,
  numbersOf,
  plainOf,
  stringParameterFromRos,
  timeFromRos,
} from '../../lib/ros/convert.ts';
import { durationFromS, type JointStateMsg } from '../../lib/ros/messages.ts';
import { JOINTS } from '../support/arm.ts';

// Message objects below are shaped as rclnodejs builds them for received messages: plain
// objects, Float64Array for float64[] fields (its default enableTypedArray), numbers for
// int32/uint32/float32, strings, arrays of nested message objects.

function rosJointState(name: string[], position: number[]) {
  return {
    header: { stamp: { sec: 1700000000, nanosec: 250000000 }, frame_id: '' },
    name,
    position: Float64Array.from(position),
    velocity: Float64Array.from(position.map((p) => p / 10)),
    effort: Float64Array.from(position.map((p) => p * 10)),
  };
}

describe('ROS message conversion (rclnodejs shapes <-> armgate messages)', () => {
  it('reads a JointState with Float64Array fields into plain number arrays', () => {
    const msg = jointStateFromRos(rosJointState([...JOINTS], [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]));
    assert.ok(msg.ok);
    assert.ok(Array.isArray(msg.value.position));
    assert.deepEqual(msg.value.position, [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]);
    assert.deepEqual(msg.value.header.stamp, { sec: 1700000000, nanosec: 250000000 });
    assert.equal(JSON.stringify(msg.value).includes('"0":'), false, 'no typed array left');
  });

  it('takes joints by name: restores J1..J7 order and drops extra joints', () => {
    const shuffled = ['gripper_finger', 'joint7', 'joint3', 'joint1', 'joint5', 'joint2', 'joint6', 'joint4'];
    const value = (n: string) => (n === 'gripper_finger' ? 9 : Number(n.slice(-1)) / 10);
    const raw = jointStateFromRos(rosJointState(shuffled, shuffled.map(value)));
    assert.ok(raw.ok);
    const ordered = jointStateByName(raw.value, JOINTS);
    assert.ok(ordered.ok);
    assert.deepEqual(ordered.value.name, JOINTS);
    assert.deepEqual(ordered.value.position, [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]);
    assert.deepEqual(
      ordered.value.velocity.map((v) => Math.round(v * 100) / 100),
      [0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07],
    );
  });

  it("reads a velocity or effort that is NaN (joint_state_broadcaster's for an interface the joint lacks) as 0", () => {
    const ros = { ...rosJointState([...JOINTS], [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]) };
    ros.velocity = Float64Array.from([0.5, Number.NaN, 0, 0, 0, 0, -0.5]);
    ros.effort = Float64Array.from(JOINTS.map(() => Number.NaN));
    const raw = jointStateFromRos(ros);
    assert.ok(raw.ok);
    const ordered = jointStateByName(raw.value, JOINTS);
    assert.ok(ordered.ok);
    assert.deepEqual(ordered.value.velocity, [0.5, 0, 0, 0, 0, 0, -0.5]);
    assert.deepEqual(ordered.value.effort, [0, 0, 0, 0, 0, 0, 0]);
    assert.deepEqual(ordered.value.position, [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]);
    assert.equal(JSON.stringify(ordered.value).includes('null'), false, 'nothing serializes as null');
  });

  it('names the joints a JointState lacks', () => {
    const raw = jointStateFromRos(
      rosJointState(['joint1', 'joint2', 'joint3', 'joint5', 'joint6', 'joint7'], [0, 0, 0, 0, 0, 0]),
    );
    assert.ok(raw.ok);
    const ordered = jointStateByName(raw.value, JOINTS);
    assert.equal(ordered.ok, false);
    if (!ordered.ok) assert.deepEqual(ordered.error, ['joint4']);
  });

  it('reads empty velocity and effort arrays (publishers that leave them out) as zeros', () => {
    const raw = jointStateFromRos({
      header: { stamp: { sec: 0, nanosec: 0 }, frame_id: '' },
      name: JOINTS,
      position: new Float64Array(7),
      velocity: new Float64Array(0),
      effort: new Float64Array(0),
    });
    assert.ok(raw.ok);
    const ordered = jointStateByName(raw.value, JOINTS);
    assert.ok(ordered.ok);
    assert.deepEqual(ordered.value.velocity, [0, 0, 0, 0, 0, 0, 0]);
  });

  it('refuses malformed joint states, saying what is wrong', () => {
    for (const [raw, expected] of [
      [null, /not a message/],
      [{ name: 'joint1', position: [] }, /name/],
      [{ name: JOINTS, position: new Float64Array(6) }, /6 values for 7 names/],
      [{ name: JOINTS }, /no values/],
    ] as const) {
      const msg = jointStateFromRos(raw);
      assert.equal(msg.ok, false);
      if (!msg.ok) assert.match(msg.error, expected);
    }
  });

  it('converts durations with nanosec in [0, 1e9) and reads times', () => {
    assert.deepEqual(durationFromS(1.5), { sec: 1, nanosec: 500000000 });
    assert.deepEqual(durationFromS(0), { sec: 0, nanosec: 0 });
    assert.deepEqual(durationFromS(2.9999999999), { sec: 3, nanosec: 0 });
    assert.deepEqual(durationFromRos({ sec: 4, nanosec: 5 }), { sec: 4, nanosec: 5 });
    assert.deepEqual(timeFromRos(undefined), { sec: 0, nanosec: 0 });
    fc.assert(
      fc.property(fc.double({ min: 0, max: 86400, noNaN: true }), (s) => {
        const d = durationFromS(s);
        return (
          Number.isInteger(d.sec) &&
          Number.isInteger(d.nanosec) &&
          d.nanosec >= 0 &&
          d.nanosec < 1e9 &&
          Math.abs(d.sec + d.nanosec / 1e9 - s) < 1e-9 * Math.max(1, s)
        );
      }),
    );
  });

  it('builds a GetPositionFK request with Float64Array positions and reads the response', () => {
    const request = fkRequestToRos({
      header: { stamp: { sec: 1, nanosec: 2 }, frame_id: 'base_link' },
      fk_link_names: ['flange'],
      robot_state: { joint_state: { name: [...JOINTS], position: [0, 0, 0, -1.57, 0, 1.57, 0] } },
    });
    assert.ok(request.robot_state.joint_state.position instanceof Float64Array);
    assert.deepEqual(Array.from(request.robot_state.joint_state.position), [0, 0, 0, -1.57, 0, 1.57, 0]);
    assert.equal(request.header.frame_id, 'base_link');
    const response = fkResponseFromRos({
      pose_stamped: [
        {
          header: { stamp: { sec: 1, nanosec: 2 }, frame_id: 'base_link' },
          pose: { position: { x: 0.4, y: 0, z: 0.61 }, orientation: { x: 0, y: 1, z: 0, w: 0 } },
        },
      ],
      fk_link_names: ['flange'],
      error_code: { val: 1, message: '', source: '' },
    });
    assert.ok(response.ok);
    assert.equal(response.value.error_code.val, 1);
    assert.deepEqual(response.value.pose_stamped[0]?.pose.position, { x: 0.4, y: 0, z: 0.61 });
    const failed = fkResponseFromRos({ pose_stamped: [], fk_link_names: [], error_code: { val: -22 } });
    assert.ok(failed.ok);
    assert.equal(failed.value.error_code.val, -22);
    assert.equal(fkResponseFromRos({ pose_stamped: [] }).ok, false, 'no error code');
    assert.equal(
      fkResponseFromRos({ pose_stamped: [{ pose: { position: { x: 'a' }, orientation: {} } }], error_code: { val: 1 } })
        .ok,
      false,
    );
  });

  it('builds the motion goals with float64 joints and float32 speeds, per the stack layouts', () => {
    const joints = moveToJointsGoalToRos({ joints: [0.5, 0.3, 0, -1.2, 0, 1.2, 0.3], speed: 0.1 });
    assert.ok(joints.joints instanceof Float64Array);
    assert.equal(joints.joints.length, 7);
    assert.equal(joints.speed, Math.fround(0.1));
    assert.notEqual(joints.speed, 0.1, 'float32, as on the wire');
    const pose = moveToPoseGoalToRos({
      x: 0.5,
      y: 0.1,
      z: 0.5,
      a: 0,
      b: Math.PI,
      c: 0,
      speed: 0.2,
      planner: 'lin',
      frame_id: '',
    });
    assert.ok(pose.ok);
    assert.deepEqual(Object.keys(pose.value).sort(), ['a', 'b', 'c', 'frame_id', 'planner', 'speed', 'x', 'y', 'z']);
    assert.equal(pose.value.speed, Math.fround(0.2));
    const circ = moveToPoseGoalToRos({
      x: 0.5,
      y: 0.1,
      z: 0.5,
      a: 0,
      b: Math.PI,
      c: 0,
      speed: 0.2,
      planner: 'circ',
      frame_id: '',
      circ_interim: { x: 0.6, y: 0, z: 0.5 },
    });
    assert.equal(circ.ok, false);
    if (!circ.ok) assert.match(circ.error, /circ_interim/);
    assert.deepEqual(moveToNamedToRos({ name: 'home', speed: 0.5, accel_scale: 0 }), {
      name: 'home',
      speed: 0.5,
      accel_scale: 0,
    });
    assert.equal(moveToNamedToRos({ name: 'home', speed: 0.3, accel_scale: 0.7 }).accel_scale, Math.fround(0.7));
  });

  it('reads results and feedback', () => {
    assert.deepEqual(motionResultFromRos({ success: true, message: 'done' }), {
      ok: true,
      value: { success: true, message: 'done' },
    });
    assert.deepEqual(motionResultFromRos({ success: false }), { ok: true, value: { success: false, message: '' } });
    assert.equal(motionResultFromRos({ message: 'x' }).ok, false);
    assert.equal(feedbackStateFromRos({ state: 'PLANNING' }), 'planning');
    assert.equal(feedbackStateFromRos({ state: 'executing' }), 'executing');
    assert.equal(feedbackStateFromRos({ state: 'idle' }), undefined);
  });

  it('round-trips a JointTrajectory through the rclnodejs shape (Float64Array fields, durations)', () => {
    const msg = {
      header: { stamp: { sec: 0, nanosec: 0 }, frame_id: '' },
      joint_names: [...JOINTS],
      points: [
        {
          positions: [0, 0, 0, -1.57, 0, 1.57, 0.5],
          velocities: [],
          accelerations: [],
          effort: [],
          time_from_start: durationFromS(1),
        },
        {
          positions: [0, 0, 0, -1.57, 0, 1.57, 0],
          velocities: [0, 0, 0, 0, 0, 0, 0],
          accelerations: [],
          effort: [],
          time_from_start: durationFromS(2.25),
        },
      ],
    };
    const ros = jointTrajectoryToRos(msg);
    assert.ok(ros.points[0]?.positions instanceof Float64Array);
    assert.ok(ros.points[0]?.velocities instanceof Float64Array);
    assert.deepEqual(ros.points[1]?.time_from_start, { sec: 2, nanosec: 250000000 });
    const back = jointTrajectoryFromRos(ros);
    assert.ok(back.ok);
    assert.deepEqual(back.value, msg);
    assert.equal(jointTrajectoryFromRos({ joint_names: [...JOINTS], points: [{}] }).ok, false);
  });

  it('reads a string parameter from a GetParameters response', () => {
    assert.deepEqual(
      stringParameterFromRos({ values: [{ type: 4, string_value: '<robot/>' }] }, 'robot_description_semantic'),
      { ok: true, value: '<robot/>' },
    );
    const unset = stringParameterFromRos({ values: [{ type: 0, string_value: '' }] }, 'robot_description_semantic');
    assert.equal(unset.ok, false);
    if (!unset.ok) assert.match(unset.error, /robot_description_semantic.*not a string/);
    assert.equal(stringParameterFromRos({ values: [] }, 'p').ok, false);
  });

  it('makes received messages plain (typed arrays and bigints to numbers) for subscribers and IPC', () => {
    const plain = plainOf({ a: new Float64Array([1, 2]), b: [{ c: new Int32Array([3]) }], d: 5n, e: 'x' });
    assert.deepEqual(plain, { a: [1, 2], b: [{ c: [3] }], d: 5, e: 'x' });
    assert.deepEqual(numbersOf(new Float32Array([0.5])), [0.5]);
    assert.equal(numbersOf(['a']), undefined);
    const msg: JointStateMsg = {
      header: { stamp: { sec: 0, nanosec: 0 }, frame_id: '' },
      name: ['j'],
      position: [1],
      velocity: [],
      effort: [],
    };
    assert.deepEqual(plainOf(msg), msg);
  });
});
