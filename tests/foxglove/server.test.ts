/**
 * armgate's Foxglove WebSocket server through a real third-party client: the FoxgloveClient of @foxglove/ws-protocol
 * (written by Foxglove) over `ws`, messages decoded with @foxglove/rosmsg2-serialization from the schemas the server
 * advertises. On the simulated arm: channels, a late subscriber of a latched topic, assets, services with the roles
 * of the tokens (stop during a move stops the arm), refusals at the upgrade, and bad input that must never crash it.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PROJECT_ROOT, startTestServer, type TestServer } from '../support/server.ts';
import { type Connected, connect, fillSendBuffer, until } from './support.ts';

const ADMIN = 'admin-token-5e1d9a7c3b77';
const OPERATE = 'operator-token-abcdef0123';
const READ = 'viewer-token-0123456789ab';
const WORK = [0, 0, 0, -1.57, 0, 1.57, 0];

// fetchAsset resolves package:// through AMENT_PREFIX_PATH, then armgate's bundled share/ (as the live page does).
process.env.AMENT_PREFIX_PATH = path.join(PROJECT_ROOT, 'tests/fixtures/foxglove');

interface JointState {
  name: string[];
  position: Float64Array;
  velocity: Float64Array;
}

describe('the Foxglove server on the simulated arm', () => {
  let server: TestServer;
  let url: string;
  let dir: string;
  let auditFile: string;
  const open: Connected[] = [];
  const as = async (token: string | undefined, query = true) => {
    const c = await connect(
      token && query ? `${url}/?token=${token}` : url,
      token && !query ? { authorization: `Bearer ${token}` } : {},
    );
    open.push(c);
    return c;
  };

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'armgate-foxglove-'));
    auditFile = path.join(dir, 'audit.jsonl');
    server = await startTestServer({
      web: {
        token: ADMIN,
        tokens: [
          { name: 'operator', token: OPERATE, role: 'operate' },
          { name: 'viewer', token: READ, role: 'read' },
        ],
      },
      audit: { path: auditFile },
      foxglove: { enabled: true, port: 0, address: '127.0.0.1', send_buffer_limit: 262_144 },
    });
    assert.ok(server.foxglove, 'the Foxglove server runs when foxglove.enabled is true');
    url = server.foxglove.url;
    assert.match(url, /^ws:\/\/127\.0\.0\.1:\d+$/);
  });

  after(async () => {
    for (const c of open) c.close();
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('lists the channels with ros2msg schemas, and decodes /joint_states, /tf and /tf_static from CDR', async () => {
    const c = await as(ADMIN);
    assert.equal(c.info.name, 'armgate');
    assert.deepEqual(c.info.capabilities, ['services', 'assets', 'parameters']);
    assert.deepEqual(
      c.channels.map((ch) => ch.topic),
      [
        '/joint_states',
        '/tf',
        '/tf_static',
        '/robot_description',
        '/armgate/motion',
        '/armgate/sequence',
        '/armgate/events',
        '/armgate/safety',
        '/armgate/positions',
        '/armgate/trajectory',
      ],
    );
    for (const ch of c.channels) {
      assert.equal(ch.encoding, 'cdr');
      assert.equal(ch.schemaEncoding, 'ros2msg');
    }
    assert.equal(c.channel('/joint_states').schemaName, 'sensor_msgs/msg/JointState');
    assert.equal(c.channel('/armgate/safety').schemaName, 'visualization_msgs/msg/MarkerArray');
    const states = (await c.take('/joint_states', 5)) as JointState[];
    for (const s of states) {
      assert.deepEqual(s.name, ['joint1', 'joint2', 'joint3', 'joint4', 'joint5', 'joint6', 'joint7']);
      for (const [j, q] of s.position.entries()) assert.ok(Math.abs(q - (WORK[j] ?? 0)) < 1e-6, `J${j + 1} at work`);
    }
    const [tf] = (await c.take('/tf')) as { transforms: { header: { frame_id: string }; child_frame_id: string }[] }[];
    assert.deepEqual(
      tf?.transforms.map((t) => `${t.header.frame_id}>${t.child_frame_id}`),
      ['base_link>link1', 'link1>link2', 'link2>link3', 'link3>link4', 'link4>link5', 'link5>link6', 'link6>link7'],
    );
    const [tfStatic] = (await c.take('/tf_static')) as { transforms: { child_frame_id: string }[] }[];
    assert.ok(
      tfStatic?.transforms.some((t) => t.child_frame_id === 'flange'),
      'the fixed joints are on /tf_static',
    );
  });

  it('gives a late subscriber /robot_description, the envelope and the named positions (latched)', async () => {
    await new Promise((r) => setTimeout(r, 300));
    const c = await as(READ);
    const [description] = (await c.take('/robot_description')) as { data: string }[];
    const bundled = await readFile(path.join(PROJECT_ROOT, 'share/armgate/urdf/iiwa7.urdf'), 'utf8');
    assert.equal(description?.data, bundled, 'the URDF the simulator uses');
    // Something to see: every collision shape is also a visual, in the live page's colours.
    const count = (re: RegExp) => (description?.data.match(re) ?? []).length;
    assert.equal(count(/<collision>/g), 26);
    assert.equal(count(/<visual>/g), 26);
    assert.equal(count(/<material name="armgate_orange"\/>/g), 25);
    assert.equal(count(/<material name="armgate_foot"\/>/g), 1);
    const [positions] = (await c.take('/armgate/positions')) as { markers: { ns: string; text: string }[] }[];
    assert.deepEqual(
      positions?.markers.filter((m) => m.ns === 'named_names').map((m) => m.text),
      ['home', 'work', 'transport'],
    );
    const [motion] = (await c.take('/armgate/motion')) as { state: string }[];
    assert.equal(motion?.state, 'idle');
  });

  it("docs/foxglove-layout.json draws what the server serves: the 3D panel's topics, the plot's paths, the STOP service", async () => {
    const layout = JSON.parse(await readFile(path.join(PROJECT_ROOT, 'docs/foxglove-layout.json'), 'utf8'));
    const c = await as(READ);
    const configs = layout.configById as Record<string, Record<string, unknown>>;
    const placed = JSON.stringify(layout.layout);
    for (const id of Object.keys(configs)) assert.ok(placed.includes(`"${id}"`), `${id} is placed in the layout`);
    const scene = configs['3D!arm'] as { topics: Record<string, unknown>; followTf: string };
    for (const topic of Object.keys(scene.topics)) c.channel(topic);
    assert.deepEqual(Object.keys(scene.topics), ['/robot_description', '/armgate/safety', '/armgate/positions']);
    assert.equal(scene.followTf, 'base_link');
    const plot = configs['Plot!joints'] as { paths: { value: string }[] };
    assert.deepEqual(
      plot.paths.map((p) => p.value),
      [0, 1, 2, 3, 4, 5, 6].map((i) => `/joint_states.position[${i}]`),
    );
    const stop = configs['CallService!stop'] as { serviceName: string; requestPayload: string };
    assert.ok(c.service(stop.serviceName), 'the STOP button calls a service a read token has');
    assert.deepEqual(JSON.parse(stop.requestPayload), {});
    c.channel((configs['RawMessages!motion'] as { topicPath: string }).topicPath);
  });

  it('serves package:// assets and refuses other schemes and paths out of the package (status 1, a reason)', async () => {
    const c = await as(READ);
    const mesh = await c.fetch('package://armgate_test_meshes/meshes/cube.stl');
    assert.equal(mesh.status, 0);
    const expected = await readFile(
      path.join(PROJECT_ROOT, 'tests/fixtures/foxglove/share/armgate_test_meshes/meshes/cube.stl'),
    );
    assert.ok('data' in mesh);
    assert.deepEqual(Buffer.from(mesh.data.buffer, mesh.data.byteOffset, mesh.data.byteLength), expected);
    for (const [uri, reason] of [
      ['package://armgate/../../../etc/passwd', /inside its package/],
      ['package://armgate/urdf/%2e%2e/%2e%2e/settings.yaml', /inside its package/],
      ['file:///etc/passwd', /only package:\/\//],
      ['http://example.com/x.stl', /only package:\/\//],
      ['package://armgate/config/endpoints.yaml', /not a mesh/],
      ['package://armgate_test_meshes/meshes/none.stl', /not found/],
    ] as const) {
      const answer = await c.fetch(uri);
      assert.equal(answer.status, 1, uri);
      assert.ok('error' in answer);
      assert.match(answer.error, reason, uri);
      assert.doesNotMatch(answer.error, /\/tmp|\/work|share\//, 'no server path in the reason');
    }
  });

  it('gives a read token no service that moves the arm, and the operation refuses what its role may not do', async () => {
    const reader = await as(READ, false);
    assert.deepEqual(
      reader.services.map((s) => s.name),
      ['/armgate/stop', '/armgate/pause', '/armgate/set_override'],
    );
    const admin = await as(ADMIN);
    assert.deepEqual(
      admin.services.map((s) => s.name),
      [
        '/armgate/stop',
        '/armgate/pause',
        '/armgate/resume',
        '/armgate/set_override',
        '/armgate/move_to_named_position',
        '/armgate/move_to_joints',
        '/armgate/move_to_pose',
        '/armgate/save_position',
        '/armgate/jog',
      ],
    );
    for (const s of admin.services) {
      assert.equal(s.request?.encoding, 'cdr');
      assert.equal(s.response?.schemaName, 'armgate_msgs/msg/Outcome');
    }
    // The read token lowers the override (any role) but may not raise it (operate): the operation's own rule.
    const lowered = await reader.call('/armgate/set_override', { percent: 40 });
    assert.ok(lowered.ok && lowered.value.success === true, JSON.stringify(lowered));
    const raised = await reader.call('/armgate/set_override', { percent: 100 });
    assert.ok(!raised.ok);
    assert.match(raised.message, /operate/);
    const back = await admin.call('/armgate/set_override', { percent: 100 });
    assert.ok(back.ok);
    // The same service with a JSON request (encoding json): the answer in JSON too.
    const overrideId = reader.service('/armgate/set_override')?.id ?? 0;
    const viaJson = await new Promise<{ encoding: string; body: Record<string, unknown> }>((resolve) => {
      reader.client.on('serviceCallResponse', (r) => {
        if (r.callId === 4242)
          resolve({
            encoding: r.encoding,
            body: JSON.parse(Buffer.from(r.data.buffer, r.data.byteOffset, r.data.byteLength).toString()),
          });
      });
      reader.client.sendServiceCallRequest({
        serviceId: overrideId,
        callId: 4242,
        encoding: 'json',
        data: new TextEncoder().encode('{"percent": 90}'),
      });
    });
    assert.equal(viaJson.encoding, 'json');
    assert.equal(viaJson.body.success, true);
    assert.equal(JSON.parse(String(viaJson.body.json)).percent, 90);
    assert.ok((await admin.call('/armgate/set_override', { percent: 100 })).ok);
    // A move's id is not a service of the read connection.
    const moveId = admin.service('/armgate/move_to_joints')?.id ?? 0;
    const answer = await new Promise<string>((resolve) => {
      reader.client.on('serviceCallFailure', (f) => resolve(f.message));
      reader.client.sendServiceCallRequest({ serviceId: moveId, callId: 7, encoding: 'cdr', data: new Uint8Array(8) });
    });
    assert.match(answer, /no service/);
  });

  it('validates a call with the operation schema: an out-of-range move is a serviceCallFailure naming the field', async () => {
    const operator = await as(OPERATE);
    const failed = await operator.call('/armgate/move_to_joints', {
      joints: [0, 0, 0, -1.57, 0, 1.57, 99],
      speed: 0.2,
    });
    assert.ok(!failed.ok);
    assert.match(failed.message, /^move_to_joints: joints\.6: .*joint7/);
    const short = await operator.call('/armgate/move_to_joints', { joints: [0, 0], speed: 0 });
    assert.ok(!short.ok);
    assert.match(short.message, /exactly 7/);
  });

  it('jogs one bounded step through the jog service: joint 2 by 0.05 rad, exact to 1e-3; a read token has no jog', async () => {
    const operator = await as(OPERATE);
    const reader = await as(READ);
    assert.equal(reader.service('/armgate/jog'), undefined, 'a read token is offered no jog');
    const [before] = (await operator.take('/joint_states')) as JointState[];
    const stepped = await operator.call('/armgate/jog', { joint: 2, axis: '', delta: 0.05, frame: '' });
    assert.ok(stepped.ok, JSON.stringify(stepped));
    assert.equal(stepped.value.success, true, String(stepped.value.message));
    const [after] = (await operator.take('/joint_states')) as JointState[];
    assert.ok(before && after);
    assert.ok(Math.abs((after.position[1] ?? 0) - (before.position[1] ?? 0) - 0.05) < 1e-3, 'joint 2 moved 0.05 rad');
    for (const j of [0, 2, 3, 4, 5, 6])
      assert.ok(Math.abs((after.position[j] ?? 0) - (before.position[j] ?? 0)) < 1e-6, `joint ${j + 1} still`);
    const tooFar = await operator.call('/armgate/jog', { joint: 2, axis: '', delta: 0.5, frame: '' });
    assert.ok(!tooFar.ok);
    assert.match(tooFar.message, /delta/);
  });

  it('stops the arm when stop is called during a move (a read token may stop)', async () => {
    const operator = await as(OPERATE);
    const reader = await as(READ);
    const target = [0.8, 0.3, 0, -1.2, 0, 1.2, 0.5];
    const moving = operator.call('/armgate/move_to_joints', { joints: target, speed: 0.1 });
    // Moving: some joint velocity on /joint_states.
    const speed = (s: JointState) => Math.max(...Array.from(s.velocity, Math.abs));
    for (let i = 0; ; i++) {
      const [s] = (await reader.take('/joint_states')) as JointState[];
      if (s && speed(s) > 0.01) break;
      assert.ok(i < 500, 'the move started');
    }
    const stopped = await reader.call('/armgate/stop', {});
    assert.ok(stopped.ok, JSON.stringify(stopped));
    assert.equal(stopped.value.success, true);
    assert.equal(JSON.parse(String(stopped.value.json)).status, 'stopped');
    const moved = await moving;
    assert.ok(moved.ok, JSON.stringify(moved));
    assert.equal(moved.value.success, false, 'the move answers that it did not reach its target');
    assert.match(String(moved.value.message), /stop/i);
    // At rest, short of the target.
    let rest: JointState | undefined;
    for (let i = 0; i < 500; i++) {
      [rest] = (await reader.take('/joint_states')) as JointState[];
      if (rest && speed(rest) < 1e-3) break;
    }
    assert.ok(rest && speed(rest) < 1e-3, 'the arm comes to rest');
    assert.ok(Math.abs((rest?.position[0] ?? 0) - (target[0] ?? 0)) > 0.05, 'short of the target');
    // The trail is written in the background: read until the stop's line is there.
    let audit: Record<string, unknown>[] = [];
    const stopLineOf = () => audit.find((l) => l.operation === 'stop' && l.interface === 'foxglove');
    for (let i = 0; i < 100 && !stopLineOf(); i++) {
      await new Promise((r) => setTimeout(r, 50));
      audit = (await readFile(auditFile, 'utf8').catch(() => ''))
        .trim()
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l));
    }
    const stopLine = stopLineOf();
    assert.equal(stopLine?.principal, 'viewer', 'the call is on the audit trail with its face and token name');
    assert.ok(
      !JSON.stringify(audit).includes(READ) && !JSON.stringify(audit).includes(OPERATE),
      'no token on the trail',
    );
  });

  it('stops a motion whose Foxglove connection closes before its answer (the dead-man)', async () => {
    const operator = await as(OPERATE);
    const reader = await as(READ);
    const speed = (s: JointState) => Math.max(...Array.from(s.velocity, Math.abs));
    const [start] = (await reader.take('/joint_states')) as JointState[];
    const target = Array.from(start?.position ?? []).map((q, j) => (j === 0 ? q + 0.6 : q));
    void operator.call('/armgate/move_to_joints', { joints: target, speed: 0.1 });
    for (let i = 0; ; i++) {
      const [s] = (await reader.take('/joint_states')) as JointState[];
      if (s && speed(s) > 0.01) break;
      assert.ok(i < 500, 'the move started');
    }
    operator.ws.terminate();
    let rest: JointState | undefined;
    for (let i = 0; i < 500; i++) {
      [rest] = (await reader.take('/joint_states')) as JointState[];
      if (rest && speed(rest) < 1e-3) break;
    }
    assert.ok(rest && speed(rest) < 1e-3, 'the arm comes to rest');
    assert.ok(Math.abs((rest?.position[0] ?? 0) - (target[0] ?? 0)) > 0.05, 'short of the target');
    const [motion] = (await reader.take('/armgate/motion')) as { state: string; message: string }[];
    assert.equal(motion?.state, 'stopped');
    assert.match(motion?.message ?? '', /Foxglove client disconnected/);
  });

  it('refuses an upgrade without a valid token (401), from a foreign origin or to a Host not served (403)', async () => {
    const status = (e: unknown) => (e as { status?: number }).status;
    await assert.rejects(as(undefined), (e) => status(e) === 401);
    await assert.rejects(as('not-a-token-0000000000'), (e) => status(e) === 401);
    await assert.rejects(as('not-a-token-0000000000', false), (e) => status(e) === 401);
    await assert.rejects(connect(`${url}/?token=${READ}`, { origin: 'http://evil.example' }), (e) => status(e) === 403);
    await assert.rejects(connect(`${url}/?token=${READ}`, { host: 'evil.example' }), (e) => status(e) === 403);
    // The same origin is a page of this server: admitted.
    const same = await connect(`${url}/?token=${READ}`, { origin: url.replace('ws:', 'http:') });
    open.push(same);
    const logged = JSON.stringify(server.logs);
    for (const token of [ADMIN, OPERATE, READ, 'not-a-token-0000000000'])
      assert.ok(!logged.includes(token), 'no token in the log');
  });

  it('answers bad input with a status or a close and keeps serving: unknown ops, bad frames, huge frames, floods', async () => {
    const c = await as(ADMIN);
    const statusCount = () => c.statuses.length;
    const send = (data: string | Buffer) => c.ws.send(data);
    send('{"op":"frobnicate"}');
    send('not json at all');
    send('[1,2,3]');
    send(Buffer.from([9, 1, 2, 3]));
    send(Buffer.from([2, 1, 0]));
    const bad = Buffer.alloc(13);
    bad.writeUInt8(2, 0);
    bad.writeUInt32LE(1, 1);
    bad.writeUInt32LE(1, 5);
    bad.writeUInt32LE(1_000_000, 9);
    send(bad);
    send(Buffer.from([1, 1, 0, 0, 0, 42]));
    send(JSON.stringify({ op: 'subscribe', subscriptions: [{ id: 1, channelId: 999 }] }));
    send(JSON.stringify({ op: 'unsubscribe', subscriptionIds: [12345] }));
    send(JSON.stringify({ op: 'fetchAsset', uri: 'package://x', requestId: -1 }));
    send(JSON.stringify({ op: 'advertise', channels: [{ id: 1, topic: '/x', encoding: 'json', schemaName: 'x' }] }));
    send(JSON.stringify({ op: 'setParameters', parameters: [{ name: 'armgate.backend', value: 'ros2' }] }));
    await until(() => statusCount() >= 12, 10_000, 'a status per bad message');
    const messages = c.statuses.map((s) => s.message).join(' | ');
    for (const expected of [
      /unknown op 'frobnicate'/,
      /not JSON/,
      /unknown binary opcode 9/,
      /shorter than its header/,
      /bad encoding length/,
      /no channel 999/,
      /read only/,
    ])
      assert.match(messages, expected);
    // A service call whose data is not CDR of its request: a failure naming the type.
    const garbage = await new Promise<string>((resolve) => {
      c.client.on('serviceCallFailure', (f) => f.callId === 99 && resolve(f.message));
      c.client.sendServiceCallRequest({
        serviceId: c.service('/armgate/move_to_named_position')?.id ?? 0,
        callId: 99,
        encoding: 'cdr',
        data: new Uint8Array([0, 1, 0, 0, 255, 255, 255, 127]),
      });
    });
    assert.match(garbage, /not a armgate_msgs\/msg\/MoveNamedRequest/);
    // A flood of asset fetches: at most 4 in flight per client, the rest answered at once with a reason.
    const fetches = await Promise.all(Array.from({ length: 40 }, () => c.fetch('package://armgate/urdf/iiwa7.urdf')));
    assert.ok(fetches.some((f) => f.status === 0));
    assert.ok(fetches.some((f) => 'error' in f && /at most 4 asset fetches in flight/.test(f.error)));
    // A flood of subscriptions: one per channel (as the protocol says), each refusal a status, never a crash.
    send(
      JSON.stringify({
        op: 'subscribe',
        subscriptions: Array.from({ length: 5000 }, (_, i) => ({ id: i, channelId: 4 })),
      }),
    );
    for (let i = 0; i < 300; i++)
      send(JSON.stringify({ op: 'subscribe', subscriptions: [{ id: 10_000 + i, channelId: 4 }] }));
    await until(
      () =>
        c.statuses.filter((s) => /already subscribed to .* as subscription 0 \(one per channel\)/.test(s.message))
          .length >= 300,
      10_000,
      'a second subscription to a channel refused',
    );
    // A frame over the limit closes the connection (1009), and the server goes on serving.
    const other = await as(READ);
    other.ws.send(Buffer.alloc(2 * 1024 * 1024));
    assert.equal((await other.closed).code, 1009);
    const after = await as(READ);
    const [state] = (await after.take('/joint_states')) as JointState[];
    assert.equal(state?.name.length, 7);
    const params = await new Promise<{ name: string; value: unknown }[]>((resolve) => {
      after.client.on('parameterValues', (p) => resolve(p.parameters));
      after.client.getParameters(['armgate.backend', 'armgate.nothing']);
    });
    assert.deepEqual(params, [{ name: 'armgate.backend', value: 'sim' }]);
  });

  it('closes a client that sends more than 1000 messages in a second (1008), answering at most those, and goes on serving', async () => {
    // Each message is cheap, its answer (a status) is not: 5000 of them in one burst kept POST /stop waiting for
    // seconds (found from outside), as the jog WebSocket's flood cap keeps it from happening there.
    const c = await as(READ);
    const statuses = () => c.statuses.filter((s) => /no subscription 1\b/.test(s.message)).length;
    for (let i = 0; i < 5000; i++) c.ws.send('{"op":"unsubscribe","subscriptionIds":[1]}');
    const open = { code: 0, reason: 'still open 20 s after the burst' };
    const closed = await Promise.race([c.closed, delay(20_000).then(() => open)]);
    assert.equal(closed.code, 1008);
    assert.match(closed.reason, /more than 1000 messages a second/);
    assert.ok(statuses() <= 1000, `${statuses()} of the 5000 answered`);
    const after = await as(READ);
    const [state] = (await after.take('/joint_states')) as JointState[];
    assert.equal(state?.name.length, 7);
  });

  it('drops a client that does not read once its send buffer passes send_buffer_limit, with a close saying why; the others go on', async () => {
    const slow = await as(READ);
    const fast = await as(READ);
    const before = server.foxglove?.counts.dropped ?? 0;
    await fillSendBuffer(slow, () => (server.foxglove?.counts.dropped ?? 0) > before);
    assert.ok(server.logs.some((l) => l.msg === 'foxglove client dropped' && l.principal === 'viewer'));
    // Reading again, it reaches the close behind what it had not read: 1008 and why (within the 5 s grace).
    (slow.ws as unknown as { _socket: { resume(): void } })._socket.resume();
    const closed = await slow.closed;
    assert.equal(closed.code, 1008, `closed ${closed.code} ${closed.reason}`);
    assert.match(closed.reason, /reads too slowly: over 262144 bytes queued \(foxglove\.send_buffer_limit\)/);
    const [state] = (await fast.take('/joint_states')) as JointState[];
    assert.equal(state?.name.length, 7);
  });
});
