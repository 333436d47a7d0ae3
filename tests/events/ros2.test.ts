/**
 * Issue 14 on the ros2 backend (the rclnodejs context over its stand-in): GET /events carries the
 * stack's joint states, and the live page's model is the stack's robot_description parameter
 * when the SRDF's node publishes one, the endpoints file's otherwise.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { type RclTestServer, startRclTestServer } from '../support/rcl-server.ts';
import { openSse } from '../support/sse.ts';

const STACK_URDF = '<?xml version="1.0"?><robot name="from-the-stack"><link name="base_link"/></robot>';

describe('events and the live page on the ros2 backend', () => {
  let server: RclTestServer | undefined;
  /** One server per process: each test closes its own (here too when it fails). */
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it("streams the stack's joint states and serves its robot_description to the page", async () => {
    server = await startRclTestServer({ srdfFromNode: true });
    const srdf = server.standin.knobs.srdf;
    assert.ok(srdf, 'the stand-in serves the SRDF parameter');
    server.standin.knobs.srdf = { ...srdf, more: { robot_description: STACK_URDF } };
    const stream = await openSse(server.url, '/events?rate_hz=10');
    assert.equal(stream.status, 200, 'GET /events: 200');
    const event = await stream.next((e) => e.type === 'joint_state');
    assert.equal((event.data as { position: number[] }).position.length, 7, 'a joint state of 7 joints');
    stream.close();
    const res = await fetch(`${server.url}/ui/robot.urdf`);
    assert.equal(res.status, 200, 'GET /ui/robot.urdf: 200');
    assert.equal(res.headers.get('x-armgate-model-source'), 'robot_description parameter', 'from the parameter');
    assert.equal(await res.text(), STACK_URDF, "the stack's URDF");
  });

  it("falls back to the endpoints file's URDF when the SRDF comes from a file", async () => {
    server = await startRclTestServer();
    const res = await fetch(`${server.url}/ui/robot.urdf`);
    assert.equal(res.status, 200, 'GET /ui/robot.urdf: 200');
    assert.match(res.headers.get('x-armgate-model-source') ?? '', /^endpoints file/, 'from the endpoints file');
    assert.match(await res.text(), /<robot name="iiwa7">/, 'the bundled URDF');
  });
});
