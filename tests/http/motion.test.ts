import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse as parseYaml, stringify } from 'yaml';
import { type Quaternion, quatAngle, quatFromAbc } from '../../lib/kinematics/rotation.ts';
import { type Clock, SteppedClock } from '../../lib/clock.ts';
import { SimContext } from '../../lib/sim/context.ts';
import { PROJECT_ROOT, createTestApp, type TestApp, testConfig } from '../support/server.ts';
import { send, type Target } from '../support/live.ts';
import { createSteppedApp, steppedTarget, steppedUntilSettled } from '../support/stepped.ts';
import { JOINTS, WORK } from '../support/arm.ts';

// End to end over a live server on the simulated arm. The module keeps one server per process
// (the ROS context is the one singleton of the process), so the servers below run one after the other.

const OTHER = [0.5, 0.3, 0, -1.2, 0, 1.2, 0.3];

interface Reply {
  readonly status: number;
  readonly body: unknown;
}
interface MotionResult {
  success: boolean;
  message: string;
}
interface JointState {
  name: string[];
  position: number[];
  velocity: number[];
}
interface Pose {
  position: { x: number; y: number; z: number };
  orientation: { quaternion: Quaternion; euler_rad: { a: number; b: number; c: number } };
}
interface ValidationBody {
  detail: { loc: (string | number)[]; msg: string; type: string }[];
}

async function post(url: Target, route: string, body: unknown): Promise<Reply> {
  const res = await send(url, `${route}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, body: parsed };
}

async function get<T>(url: Target, route: string): Promise<{ body: T }> {
  const res = await send(url, `${route}`);
  assert.equal(res.status, 200, `GET ${route}`);
  const body = (await res.json()) as T;
  return { body };
}

async function move(url: Target, route: string, body: unknown): Promise<MotionResult> {
  const reply = await post(url, route, body);
  assert.equal(reply.status, 200, `${route} ${JSON.stringify(body)} -> ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply.body as MotionResult;
}

async function moveOk(url: Target, route: string, body: unknown): Promise<void> {
  const result = await move(url, route, body);
  assert.equal(result.success, true, `${route} ${JSON.stringify(body)}: ${result.message}`);
}

const jointState = async (url: Target) => (await get<JointState>(url, '/robot/joint_states')).body;
const pose = async (url: Target) => (await get<Pose>(url, '/robot/pose')).body;

function assertJointsNear(actual: readonly number[], expected: readonly number[], tol = 1e-3): void {
  assert.equal(actual.length, 7);
  for (const [i, v] of actual.entries())
    assert.ok(
      Math.abs(v - (expected[i] ?? Number.NaN)) <= tol,
      `${JOINTS[i]} = ${v}, expected ${expected[i]} (tolerance ${tol})`,
    );
}

function assertPoseNear(actual: Pose, position: readonly number[], orientation: Quaternion, tol = 1e-3): void {
  const p = [actual.position.x, actual.position.y, actual.position.z];
  const distance = Math.hypot(...p.map((v, k) => v - (position[k] ?? 0)));
  assert.ok(
    distance <= tol,
    `TCP at ${p.map((v) => v.toFixed(5)).join(', ')}, ${(distance * 1000).toFixed(3)} mm from ${position.join(', ')}`,
  );
  const angle = quatAngle(actual.orientation.quaternion, orientation);
  assert.ok(angle <= tol, `orientation ${angle} rad from the target`);
}

const positionOf = (p: Pose) => [p.position.x, p.position.y, p.position.z];

describe('motion endpoints on the simulated arm (time_scale 20)', () => {
  let server: TestApp;
  let clock: SteppedClock;
  let url: Target = '';
  let named: { name: string; joints: Record<string, number> }[] = [];

  before(async () => {
    // On a clock the test steps: each request steps it until answered (a move at its goal), no time of the machine's.
    const stepped = await createSteppedApp({ sim: { time_scale: 20 } });
    server = stepped.app;
    clock = stepped.clock;
    url = steppedTarget(server, clock);
    named = (await get<{ name: string; joints: Record<string, number> }[]>(url, '/robot/positions')).body;
  });
  after(async () => {
    await server.close();
  });

  /** Back to work quickly, so each test starts from the same place. */
  const toWork = () => moveOk(url, '/robot/move/named', { name: 'work', speed: 1 });

  it('move/joints moves the arm to the given angles (200, success true) and the joint state shows them', async () => {
    const result = await move(url, '/robot/move/joints', { joints: OTHER, speed: 0.5 });
    assert.deepEqual(result, { success: true, message: result.message });
    assert.equal(result.success, true, result.message);
    const state = await jointState(url);
    assert.deepEqual(state.name, JOINTS);
    assertJointsNear(state.position, OTHER);
  });

  for (const name of ['home', 'transport', 'work']) {
    it(`move/named '${name}' moves the arm to that SRDF state`, async () => {
      const joints = named.find((n) => n.name === name)?.joints;
      assert.ok(joints, `GET /robot/positions lists ${name}`);
      const target = JOINTS.map((j) => joints[j] ?? Number.NaN);
      await moveOk(url, '/robot/move/named', { name, speed: 1, accel_scale: 1 });
      assertJointsNear((await jointState(url)).position, target);
    });
  }

  it('move/pose with ptp (planner given in upper case) moves the TCP to the pose', async () => {
    await toWork();
    const start = await pose(url);
    const { a, b, c } = start.orientation.euler_rad;
    const target = [start.position.x + 0.05, start.position.y - 0.1, start.position.z + 0.05];
    await moveOk(url, '/robot/move/pose', {
      x: target[0],
      y: target[1],
      z: target[2],
      a,
      b,
      c,
      planner: 'PTP',
      speed: 0.5,
    });
    assertPoseNear(await pose(url), target, quatFromAbc({ a, b, c }));
  });

  it('move/pose with lin moves the TCP along y by 0.1 m from work at speed 0.1', async () => {
    await toWork();
    const start = await pose(url);
    const { a, b, c } = start.orientation.euler_rad;
    const target = [start.position.x, start.position.y + 0.1, start.position.z];
    await moveOk(url, '/robot/move/pose', {
      x: target[0],
      y: target[1],
      z: target[2],
      a,
      b,
      c,
      planner: 'lin',
      speed: 0.1,
    });
    assertPoseNear(await pose(url), target, start.orientation.quaternion);
  });

  it('move/pose with circ through circ_interim ends at the target', async () => {
    await toWork();
    const start = await pose(url);
    const [x = 0, y = 0, z = 0] = positionOf(start);
    const { a, b, c } = start.orientation.euler_rad;
    await moveOk(url, '/robot/move/pose', {
      x,
      y: y + 0.2,
      z,
      a,
      b,
      c,
      planner: 'circ',
      speed: 0.2,
      circ_interim: { x: x + 0.1, y: y + 0.1, z },
    });
    assertPoseNear(await pose(url), [x, y + 0.2, z], start.orientation.quaternion);
  });

  it('move/pose with circ about circ_center ends at the target', async () => {
    await toWork();
    const start = await pose(url);
    const [x = 0, y = 0, z = 0] = positionOf(start);
    const { a, b, c } = start.orientation.euler_rad;
    await moveOk(url, '/robot/move/pose', {
      x: x + 0.1,
      y: y + 0.1,
      z,
      a,
      b,
      c,
      planner: 'circ',
      speed: 0.2,
      circ_center: { x, y: y + 0.1, z },
    });
    assertPoseNear(await pose(url), [x + 0.1, y + 0.1, z], start.orientation.quaternion);
  });

  it('move/pose with circ and no auxiliary point answers 200 success false naming circ_center and circ_interim, and does not move', async () => {
    await toWork();
    const before = await jointState(url);
    const start = await pose(url);
    const { a, b, c } = start.orientation.euler_rad;
    const result = await move(url, '/robot/move/pose', {
      x: start.position.x,
      y: start.position.y + 0.1,
      z: start.position.z,
      a,
      b,
      c,
      planner: 'circ',
    });
    assert.equal(result.success, false);
    assert.match(result.message, /circ_center/);
    assert.match(result.message, /circ_interim/);
    assert.deepEqual((await jointState(url)).position, before.position);
  });

  it('move/pose to an unreachable pose answers 200 success false with a reason, and does not move', async () => {
    const before = await jointState(url);
    const result = await move(url, '/robot/move/pose', { x: 2, y: 0, z: 0.5, b: Math.PI });
    assert.equal(result.success, false);
    assert.match(result.message, /out of reach|no inverse kinematics/);
    assert.doesNotMatch(result.message, /orientation/, 'no other orientation reaches (2, 0, 0.5) either');
    assert.deepEqual((await jointState(url)).position, before.position);
  });

  for (const [where, position, why] of [
    ['out of reach', { x: 0.78, y: 0, z: 0.2 }, /out of reach/],
    ['in collision with the floor', { x: 0.6, y: 0, z: 0.15 }, /in collision \(floor/],
  ] as const) {
    it(`move/pose with a, b, c left out, ${where} only because the flange points up: says the orientation is the problem and which would do`, async () => {
      await toWork();
      const before = await jointState(url);
      const result = await move(url, '/robot/move/pose', { ...position, speed: 1 });
      assert.equal(result.success, false);
      assert.match(result.message, why);
      assert.match(
        result.message,
        /the orientation is the problem, not the position: ABC \(0, 0, 0\), what a, b and c are when left out over HTTP, points the flange up; this position is reachable with a=0, b=pi \(3\.1416\), c=0, the flange pointing down/,
      );
      assert.deepEqual((await jointState(url)).position, before.position, 'nothing moved');
      const down = await move(url, '/robot/move/pose', { ...position, a: 0, b: Math.PI, c: 0, speed: 1 });
      assert.equal(down.success, true, `the orientation it names reaches: ${down.message}`);
    });
  }

  it('answers every invalid request with 422 (413 for a body over 1 MiB), saying what is wrong, and none of them moves the arm', async () => {
    await toWork();
    const before = await jointState(url);
    const okJoints = JSON.stringify(OTHER);
    const pose0 = '"x": 0.5, "y": 0.1, "z": 0.5';
    const known = named.map((n) => n.name);
    assert.deepEqual([...known].sort(), ['home', 'transport', 'work']);
    const cases: { route: string; body: string; loc?: (string | number)[]; msg?: RegExp; status?: number }[] = [
      // move/joints
      {
        route: '/robot/move/joints',
        body: JSON.stringify({ joints: OTHER.slice(0, 6) }),
        loc: ['body', 'joints'],
        msg: /exactly 7 joint values .* got 6/,
      },
      {
        route: '/robot/move/joints',
        body: JSON.stringify({ joints: [...OTHER, 0] }),
        loc: ['body', 'joints'],
        msg: /exactly 7 .* got 8/,
      },
      {
        route: '/robot/move/joints',
        body: JSON.stringify({ joints: [0, 2.5, 0, -1, 0, 1, 0] }),
        loc: ['body', 'joints', 1],
        msg: /joint2 = 2\.5 rad is outside its limits \[-2\.1, 2\.1\]/,
      },
      {
        route: '/robot/move/joints',
        body: JSON.stringify({ joints: [0, 0, 0, -1, 0, 1, -3.1] }),
        loc: ['body', 'joints', 6],
        msg: /joint7 = -3\.1 rad is outside its limits \[-3\.05, 3\.05\]/,
      },
      { route: '/robot/move/joints', body: JSON.stringify({ speed: 0.5 }), loc: ['body', 'joints'] },
      {
        route: '/robot/move/joints',
        body: JSON.stringify({ joints: ['a', 0, 0, 0, 0, 0, 0] }),
        loc: ['body', 'joints', 0],
      },
      { route: '/robot/move/joints', body: `{"joints": ${okJoints}, "extra": 1}`, loc: ['body', 'extra'] },
      {
        route: '/robot/move/joints',
        body: `{"joints": ${okJoints}, "sped": 1}`,
        loc: ['body', 'sped'],
        msg: /^unknown key "sped" \(did you mean "speed"\?\); the keys are joints, speed, /,
      },
      // move/named
      {
        route: '/robot/move/named',
        body: JSON.stringify({ name: 'nowhere' }),
        loc: ['body', 'name'],
        msg: /unknown named position 'nowhere'; known: .*home.*/,
      },
      {
        route: '/robot/move/named',
        body: JSON.stringify({ name: 'work', accel_scale: -0.1 }),
        loc: ['body', 'accel_scale'],
        msg: /at least 0/,
      },
      {
        route: '/robot/move/named',
        body: JSON.stringify({ name: 'work', accel_scale: 1.1 }),
        loc: ['body', 'accel_scale'],
        msg: /at most 1/,
      },
      { route: '/robot/move/named', body: JSON.stringify({}), loc: ['body', 'name'] },
      {
        route: '/robot/move/named',
        body: JSON.stringify({ name: 'work', extra: true }),
        loc: ['body', 'extra'],
        msg: /^unknown key "extra"; the keys are name, speed/,
      },
      // move/pose
      {
        route: '/robot/move/pose',
        body: `{${pose0}, "planner": "rrt"}`,
        loc: ['body', 'planner'],
        msg: /unknown planner 'rrt'; use one of ptp, lin, circ, ompl, chomp/,
      },
      {
        route: '/robot/move/pose',
        body: `{${pose0}, "frame_id": "world"}`,
        loc: ['body', 'frame_id'],
        msg: /unknown frame_id 'world'; known: '' .* 'base_link'/,
      },
      { route: '/robot/move/pose', body: '{"y": 0.1, "z": 0.5}', loc: ['body', 'x'] },
      { route: '/robot/move/pose', body: '{"x": 0.5, "z": 0.5}', loc: ['body', 'y'] },
      { route: '/robot/move/pose', body: '{"x": 0.5, "y": 0.1}', loc: ['body', 'z'] },
      { route: '/robot/move/pose', body: `{${pose0}, "extra": 1}`, loc: ['body', 'extra'] },
      {
        route: '/robot/move/pose',
        body: `{${pose0}, "circ_center": {"x": 0.5, "y": 0, "z": 0.5}}`,
        loc: ['body', 'circ_center'],
        msg: /circ only/,
      },
      {
        route: '/robot/move/pose',
        body: `{${pose0}, "planner": "circ", "circ_center": {"x": 0.5, "y": 0, "z": 0.5}, "circ_interim": {"x": 0.5, "y": 0, "z": 0.6}}`,
        loc: ['body', 'circ_interim'],
      },
      { route: '/robot/move/pose', body: `{"x": 1e999, "y": 0.1, "z": 0.5}`, loc: ['body', 'x'], msg: /finite/ },
    ];
    const endpoints = [
      { route: '/robot/move/joints', base: `"joints": ${okJoints}` },
      { route: '/robot/move/named', base: '"name": "work"' },
      { route: '/robot/move/pose', base: pose0 },
    ];
    for (const { route, base } of endpoints) {
      cases.push(
        { route, body: `{${base}, "speed": 0}`, loc: ['body', 'speed'], msg: /speed must be at least 0\.01/ },
        { route, body: `{${base}, "speed": 1.5}`, loc: ['body', 'speed'], msg: /speed must be at most 1\.0/ },
        { route, body: `{${base}, "speed": "fast"}`, loc: ['body', 'speed'] },
        { route, body: `{${base}, "speed": NaN}`, loc: ['body'], msg: /JSON/ },
        { route, body: `{${base}, "speed": 1e999}`, loc: ['body', 'speed'], msg: /finite/ },
        { route, body: `{${base}, `, loc: ['body'], msg: /JSON/ },
        { route, body: '', loc: ['body'] },
        { route, body: JSON.stringify({ padding: 'x'.repeat(1024 * 1024) }), status: 413 },
      );
    }
    for (const c of cases) {
      const reply = await post(url, c.route, c.body);
      const what = `${c.route} ${c.body.slice(0, 120)}`;
      assert.equal(
        reply.status,
        c.status ?? 422,
        `${what} -> ${reply.status} ${JSON.stringify(reply.body).slice(0, 300)}`,
      );
      if (reply.status === 413) {
        assert.equal(typeof (reply.body as { detail: unknown }).detail, 'string');
        continue;
      }
      const detail = (reply.body as ValidationBody).detail;
      assert.ok(Array.isArray(detail) && detail.length > 0, `${what}: a 422 detail list`);
      if (c.loc)
        assert.ok(
          detail.some((d) => JSON.stringify(d.loc) === JSON.stringify(c.loc)),
          `${what}: loc ${JSON.stringify(c.loc)} in ${JSON.stringify(detail)}`,
        );
      if (c.msg) {
        const pattern = c.msg;
        assert.ok(
          detail.some((d) => pattern.test(d.msg)),
          `${what}: a message matching ${pattern} in ${JSON.stringify(detail)}`,
        );
      }
      if (c.route === '/robot/move/named' && c.msg?.source.startsWith('unknown named')) {
        for (const name of known)
          assert.ok(
            detail.some((d) => d.msg.includes(name)),
            `the message lists ${name}`,
          );
      }
    }
    const after = await jointState(url);
    assert.deepEqual(after.position, before.position, 'no 4xx moved the arm');
    assert.deepEqual(after.velocity, [0, 0, 0, 0, 0, 0, 0]);
  });

  it('accepts the spec defaults: speed 0.1 when omitted, accel_scale 0 meaning "use speed"', async () => {
    await moveOk(url, '/robot/move/named', { name: 'work', accel_scale: 0, speed: 1 });
    const small = WORK.map((v, i) => (i === 6 ? v + 0.05 : v));
    await moveOk(url, '/robot/move/joints', { joints: small });
    assertJointsNear((await jointState(url)).position, small);
  });

  it('answers a second motion request while one runs with 409 at once, reads keep answering with a changing position, and the first succeeds', async () => {
    await toWork();
    // ~1.2 rad at speed 0.02 on J1 (1.71 rad/s): ~35 s of simulated time, ~1.8 s at time_scale 20
    const far = [1.2, 0.3, 0, -1.2, 0, 1.2, 0.3];
    // Sent without stepping: the clock moves only with the checks' own requests and waits, in their order.
    const first = post(server, '/robot/move/joints', { joints: far, speed: 0.02 });
    try {
      await duringMotion(first);
    } finally {
      // never leave the request behind a failed check
      await steppedUntilSettled(
        clock,
        first.catch(() => undefined),
        'the first move',
      );
    }
    const result = await first;
    assert.equal(result.status, 200);
    assert.equal((result.body as MotionResult).success, true, (result.body as MotionResult).message);
    assertJointsNear((await jointState(url)).position, far);
  });

  /**
   * The checks made while the first motion runs. Ordered, not timed: each read and each 409 is answered while the
   * first motion still runs (a loaded machine stretches a read's time, not the order; the read latency during a
   * motion is a figure of `npm run bench -- events`, polling beside the event streams).
   */
  async function duringMotion(first: Promise<Reply>): Promise<void> {
    let settled = false;
    void first.then(() => (settled = true)).catch(() => undefined);
    const stillRunning = (what: string) => assert.equal(settled, false, `${what} while the first motion runs`);
    // wait until the arm moves (a read while the motion runs)
    let moving: JointState | undefined;
    for (let k = 0; k < 100 && !moving; k++) {
      const { body } = await get<JointState>(url, '/robot/joint_states');
      stillRunning('joint_states answered');
      if (body.velocity.some((v) => v !== 0)) moving = body;
    }
    assert.ok(moving, 'the arm started moving');
    for (const [route, body] of [
      ['/robot/move/joints', { joints: WORK }],
      ['/robot/move/named', { name: 'home' }],
      ['/robot/move/pose', { x: 0.5, y: 0, z: 0.5, b: Math.PI }],
    ] as const) {
      const reply = await post(url, route, body);
      assert.equal(reply.status, 409, `${route} while moving -> ${reply.status} ${JSON.stringify(reply.body)}`);
      stillRunning(`409 for ${route} answered at once`);
      assert.match((reply.body as { detail: string }).detail, /busy/);
    }
    await clock.advance(50);
    const later = await get<JointState>(url, '/robot/joint_states');
    stillRunning('joint_states answered');
    assert.notDeepEqual(later.body.position, moving.position, 'the position changes during motion');
    await get<Pose>(url, '/robot/pose');
    stillRunning('pose answered');
    // A turn of the event loop, the clock standing still.
    await Promise.race([first.then(() => (settled = true)), new Promise((resolve) => setImmediate(resolve))]);
    assert.equal(settled, false, 'the first motion is still running after these checks');
  }

  it("serves the active limits file's joint bounds, and speed's bounds and default, in move/joints's schema", async () => {
    const limitsYaml = parseYaml(
      await readFile(path.join(PROJECT_ROOT, 'share/armgate/config/joint_limits.yaml'), 'utf8'),
    ) as { joint_limits: Record<string, { min_position: number; max_position: number }> };
    const schema = await moveJointsSchema(url);
    JOINTS.forEach((name, i) => {
      const item = schema.properties.joints.prefixItems[i];
      assert.equal(item?.minimum, limitsYaml.joint_limits[name]?.min_position, `${name} minimum`);
      assert.equal(item?.maximum, limitsYaml.joint_limits[name]?.max_position, `${name} maximum`);
    });
    assert.equal(schema.properties.joints.prefixItems.length, 7);
    assert.deepEqual(
      [schema.properties.speed.minimum, schema.properties.speed.maximum, schema.properties.speed.default],
      [0.01, 1, 0.1],
    );
  });
});

interface JointsSchema {
  properties: {
    joints: { prefixItems: { minimum: number; maximum: number }[] };
    speed: { minimum: number; maximum: number; default: number };
  };
}

/** The request schema of POST /robot/move/joints in the served document (following a $ref if there is one). */
async function moveJointsSchema(url: Target): Promise<JointsSchema> {
  type Doc = {
    paths: Record<string, Record<string, { requestBody: { content: Record<string, { schema: unknown }> } }>>;
    components?: { schemas?: Record<string, unknown> };
  };
  const doc = (await get<Doc>(url, '/openapi.json')).body;
  let schema = doc.paths['/robot/move/joints']?.post?.requestBody.content['application/json']?.schema as
    | { $ref?: string }
    | undefined;
  const ref = schema?.$ref;
  if (ref) schema = doc.components?.schemas?.[ref.split('/').at(-1) ?? ''] as { $ref?: string } | undefined;
  assert.ok(schema, 'move/joints has a request schema');
  return schema as JointsSchema;
}

describe('a custom joint limits file (web.joint_limits)', () => {
  let server: TestApp;
  let dir = '';

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'armgate-limits-'));
    const doc = parseYaml(
      await readFile(path.join(PROJECT_ROOT, 'share/armgate/config/joint_limits.yaml'), 'utf8'),
    ) as { joint_limits: Record<string, Record<string, unknown>> };
    const j1 = doc.joint_limits.joint1;
    const j7 = doc.joint_limits.joint7;
    assert.ok(j1 && j7);
    Object.assign(j1, { min_position: -1.5, max_position: 1.5 });
    Object.assign(j7, { min_position: -2.5, max_position: 2.5 });
    const file = path.join(dir, 'tight_limits.yaml');
    await writeFile(file, stringify(doc));
    server = await createTestApp({ web: { joint_limits: file }, sim: { time_scale: 20 } });
  });
  after(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('shows the tighter bounds in the served document', async () => {
    const schema = await moveJointsSchema(server);
    assert.deepEqual(
      [schema.properties.joints.prefixItems[0]?.minimum, schema.properties.joints.prefixItems[0]?.maximum],
      [-1.5, 1.5],
    );
    assert.deepEqual(
      [schema.properties.joints.prefixItems[6]?.minimum, schema.properties.joints.prefixItems[6]?.maximum],
      [-2.5, 2.5],
    );
    assert.deepEqual(
      [schema.properties.joints.prefixItems[1]?.minimum, schema.properties.joints.prefixItems[1]?.maximum],
      [-2.1, 2.1],
    );
  });

  it('refuses angles outside the tighter bounds with 422 naming joint, value and bounds, and still moves within them', async () => {
    const before = await jointState(server);
    const reply = await post(server, '/robot/move/joints', { joints: [2, 0, 0, -1.57, 0, 1.57, 0] });
    assert.equal(reply.status, 422);
    assert.match(JSON.stringify(reply.body), /joint1 = 2 rad is outside its limits \[-1\.5, 1\.5\]/);
    assert.deepEqual((await jointState(server)).position, before.position);
    const inside = [1.4, 0, 0, -1.57, 0, 1.57, 0];
    await moveOk(server, '/robot/move/joints', { joints: inside, speed: 1 });
    assertJointsNear((await jointState(server)).position, inside);
  });
});

describe('the internal motion timeout (timeouts.motion_s)', () => {
  let server: TestApp;
  let dir = '';
  // On a clock the test steps: a refusal that waited for the timeout would not come while the clock stands still.
  const clock = new SteppedClock(0, Date.now());

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'armgate-endpoints-'));
    const doc = parseYaml(await readFile(path.join(PROJECT_ROOT, 'share/armgate/config/endpoints.yaml'), 'utf8')) as {
      timeouts: Record<string, number>;
    };
    doc.timeouts.motion_s = 0.2;
    const file = path.join(dir, 'endpoints.yaml');
    // the copy's pkg:// references (URDF, SRDF) still resolve to the bundled package
    await writeFile(file, stringify(doc));
    const overrides = { web: { endpoints: file }, sim: { time_scale: 1 } };
    server = await createTestApp(overrides, { context: await SimContext.create(await testConfig(overrides), clock) });
  });
  after(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('refuses a motion planned to outlast it before moving: 200 success false with the figure, answered at once', async () => {
    const before = await jointState(server);
    const started = clock.nowMs();
    const result = await move(server, '/robot/move/joints', { joints: OTHER, speed: 0.01 });
    const elapsed = clock.nowMs() - started;
    assert.equal(result.success, false);
    assert.match(
      result.message,
      /^the motion would take \d+(\.\d+)? s at speed 0\.01, longer than the motion timeout \(0\.2 s\); raise the speed$/,
    );
    assert.equal(elapsed, 0, 'answered with the clock standing still, without waiting for the timeout');
    const after = await jointState(server);
    assert.deepEqual(after.position, before.position, 'nothing moved');
    let done = false;
    const back = moveOk(server, '/robot/move/joints', { joints: WORK, speed: 1 }).finally(() => (done = true));
    assert.ok(await clock.until(() => done, 10, 10_000), 'the arm still moves on the clock');
    await back;
  });
});

describe('the internal motion timeout on a stalled arm', () => {
  it('cancels a goal that outlasts it (a drive far slower than planned): success false saying it timed out, in time', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'armgate-endpoints-'));
    const doc = parseYaml(await readFile(path.join(PROJECT_ROOT, 'share/armgate/config/endpoints.yaml'), 'utf8')) as {
      timeouts: Record<string, number>;
    };
    doc.timeouts.motion_s = 0.3;
    const file = path.join(dir, 'endpoints.yaml');
    await writeFile(file, stringify(doc));
    // A drive 1000 times slower than planned: the motion (well within the timeout on paper) outlasts it.
    // Both on a clock the test steps: the timeout is counted on the context's clock, not on the machine's load.
    const clock = new SteppedClock(0, Date.now());
    const stalled: Clock = {
      nowMs: () => clock.nowMs() / 1000,
      epochMs: () => clock.epochMs(),
      after: (ms, fn) => clock.after(ms, fn),
      every: (ms, fn) => clock.every(ms, fn),
    };
    const context = await SimContext.create(
      await testConfig({ web: { endpoints: file }, sim: { publish_joint_states: false } }),
      clock,
      stalled,
    );
    try {
      const started = clock.nowMs();
      let answered: number | undefined;
      const pending = context.moveToJoints({ joints: [0.05, 0, 0, -1.57, 0, 1.57, 0], speed: 1 }).then((r) => {
        answered = clock.nowMs();
        return r;
      });
      assert.ok(await clock.until(() => answered !== undefined, 5, 3000), 'answered within 3 s of the clock');
      const result = await pending;
      const elapsed = (answered ?? 0) - started;
      assert.ok(result.ok);
      assert.equal(result.value.success, false);
      assert.match(result.value.message, /timed out after 0\.3 s/);
      assert.ok(
        elapsed >= 300 && elapsed < 3000,
        `answered after ${elapsed.toFixed(0)} ms (timeout 300 ms, then the slow drive decelerates)`,
      );
      assert.equal(context.armActivity()?.kind !== 'goal', true, 'no goal is left in flight');
    } finally {
      await context.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
