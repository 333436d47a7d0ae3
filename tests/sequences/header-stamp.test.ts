/**
 * The header stamp of a recorded message as the runner reads it from the raw CDR a ROS 2 subscription delivers
 * (a bag's end waits for the joint states stamped up to the run's end: lib/sequences/rcl-backend.ts).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parse } from '@foxglove/rosmsg';
import { MessageWriter } from '@foxglove/rosmsg2-serialization';
import { definitionFor } from '../../lib/bag/definitions.ts';
import { headerStampNs } from '../../lib/sequences/rcl-backend.ts';

const jointState = (sec: number, nanosec: number) =>
  new MessageWriter(parse(definitionFor('sensor_msgs/msg/JointState') ?? '', { ros2: true })).writeMessage({
    header: { stamp: { sec, nanosec }, frame_id: 'base' },
    name: ['joint1'],
    position: [0.5],
    velocity: [0],
    effort: [],
  });

describe('headerStampNs', () => {
  it("reads a serialized JointState's header stamp in ns, also at an offset in a larger buffer", () => {
    assert.equal(headerStampNs(jointState(1_795_858_563, 209_262_471)), 1_795_858_563_209_262_471n);
    const bytes = jointState(12, 5);
    const larger = new Uint8Array(bytes.byteLength + 8);
    larger.set(bytes, 8);
    assert.equal(headerStampNs(larger.subarray(8)), 12_000_000_005n);
  });

  it('reads a big-endian encapsulation (kind 0x0000) as such; too short a message has no stamp', () => {
    const be = new Uint8Array(16);
    const view = new DataView(be.buffer);
    view.setInt32(4, 7, false);
    view.setUint32(8, 3, false);
    assert.equal(headerStampNs(be), 7_000_000_003n);
    assert.equal(headerStampNs(new Uint8Array(11)), undefined);
  });
});
