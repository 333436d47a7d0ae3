/**
 * The Foxglove server on the ros2 backend (the rclnodejs context over its stand-in, a simulator behind it): the joint
 * states as armgate receives them from the graph, /tf computed from them by armgate's forward kinematics, the robot
 * description, and the services, through the same real FoxgloveClient.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type RclTestServer, startRclTestServer } from '../support/rcl-server.ts';
import { type Connected, connect } from './support.ts';

describe('the Foxglove server on the ros2 backend', () => {
  let rcl: RclTestServer;
  let client: Connected;

  before(async () => {
    rcl = await startRclTestServer({ sim: { foxglove: { enabled: true, port: 0 } } });
    const url = rcl.server.foxglove?.url;
    assert.ok(url, 'the Foxglove server runs on ros2 too');
    client = await connect(url);
  });

  after(async () => {
    client?.close();
    await rcl?.close();
  });

  it("serves /joint_states and /tf as armgate sees them, and armgate's own channels and services", async () => {
    const [state] = (await client.take('/joint_states')) as { name: string[]; position: Float64Array }[];
    assert.equal(state?.name.length, 7);
    const [tf] = (await client.take('/tf')) as { transforms: { child_frame_id: string }[] }[];
    assert.deepEqual(
      tf?.transforms.map((t) => t.child_frame_id),
      ['link1', 'link2', 'link3', 'link4', 'link5', 'link6', 'link7'],
    );
    const [description] = (await client.take('/robot_description')) as { data: string }[];
    assert.match(description?.data ?? '', /<robot name="iiwa7"/);
    assert.ok(client.services.some((s) => s.name === '/armgate/move_to_joints'));
    const target = Array.from(state?.position ?? []).map((q, j) => (j === 0 ? q + 0.05 : q));
    const moved = await client.call('/armgate/move_to_joints', { joints: target, speed: 0.2 });
    assert.ok(moved.ok && moved.value.success === true, JSON.stringify(moved));
    const [after] = (await client.take('/joint_states')) as { position: Float64Array }[];
    assert.ok(Math.abs((after?.position[0] ?? 0) - (target[0] ?? 0)) < 1e-3, 'the arm went there on the graph');
    const stopped = await client.call('/armgate/stop', {});
    assert.ok(stopped.ok && stopped.value.success !== undefined, JSON.stringify(stopped));
  });
});
