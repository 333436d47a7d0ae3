/**
 * POST /sequences/start, GET /sequences/status and GET /sequences/logs end to end on a live server
 * over the simulated arm (issue 4): the runner process, its progress, the arm held meanwhile,
 * every 422 of the configuration and the fields, failing runs, and the bag read back with a real
 * MCAP reader.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { assertJointState, readBag, streamRecords } from '../support/bag.ts';
import {
  assertProcessGone,
  tempFilesWith,
  describeIssues,
  getJson,
  issuesOf,
  LOG_LINE,
  liveGroupMembers,
  logLines,
  maxDiff,
  positions,
  post,
  processExists,
  sleep,
  waitFor,
  WORK,
  send,
  type Target,
} from '../support/live.ts';
import { sequenceForm } from '../support/multipart.ts';
import { PROJECT_ROOT, createTestApp, type TestApp } from '../support/server.ts';

const JOINT_POINT = { joints: [0.4, 0.2, 0, -1.3, 0, 1.4, 0], speed: 0.5 };
const CARTESIAN_POINT = { x: 0.5, y: 0.1, z: 0.5, a: 0, b: Math.PI, c: 0, speed: 0.5 };
const CONFIG = { home: { joints: [...WORK], speed: 0.5 }, waypoints: [JOINT_POINT, CARTESIAN_POINT] };
const POINT_LABELS = ['starting', 'home', 'waypoint 1', 'waypoint 2'];

interface Status {
  status: 'idle' | 'running' | 'finished';
  returncode?: number;
  pid?: number;
  iteration?: number;
  n_iterations?: number;
  point?: string;
  started_at?: string;
  finished_at?: string;
  bag_path?: string;
}

describe('sequences end to end on the simulated arm', () => {
  let server: TestApp;
  let url: Target;
  let bagRoot: string;
  const status = () => getJson<Status>(url, '/sequences/status');
  const sequenceLog = (n = 1000) => logLines(url, '/sequences/logs', n);
  const finished = (timeoutMs = 30_000) =>
    waitFor('the sequence to finish', status, (s) => s.status === 'finished', timeoutMs, 25);
  /** Log text of the current/last run only: from its "runner started (pid N)" line on. */
  const runLog = async (pid: number) => {
    const lines = await sequenceLog();
    const start = lines.findIndex((l) => l.includes(`runner started (pid ${pid})`));
    assert.ok(start >= 0, `no start line for pid ${pid}:\n${lines.join('\n')}`);
    return lines.slice(start).map((l) => LOG_LINE.exec(l)?.[2] ?? `(no timestamp) ${l}`);
  };
  const start = (config: unknown, fields: Record<string, string> = {}) =>
    post<{ status: string; pid: number }>(url, '/sequences/start', sequenceForm(config, fields));

  before(async () => {
    bagRoot = await mkdtemp(path.join(tmpdir(), 'armgate-test-bags-'));
    server = await createTestApp({ sim: { time_scale: 20 }, sequences: { bag_root: bagRoot } });
    url = server;
  });
  after(async () => {
    await server.close();
    await rm(bagRoot, { recursive: true, force: true });
  });

  it('is idle before any run, with an empty log', async () => {
    assert.deepEqual(await status(), { status: 'idle' });
    assert.deepEqual(await sequenceLog(), []);
  });

  it('runs 2 iterations (a joint and a Cartesian point): started, running with progress, 409 to a second start and to motions, reads work, finished 0, each point reached, a bag of every topic', async () => {
    const since = Date.now();
    const marker = `sequence-lifecycle-${process.pid}-${since}`;
    const res = await start(
      { ...CONFIG, name: marker },
      { n_iterations: '2', delay_between_iterations: '0.1', bag_path: 'runA', topics: '' },
    );
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(Object.keys(res.body).sort(), ['config', 'pid', 'status']);
    assert.equal(res.body.status, 'started');
    const pid = res.body.pid;
    assert.ok(Number.isInteger(pid) && pid > 0);
    assert.ok(processExists(pid), 'the runner process exists');
    assert.ok(processExists(-pid), 'the runner leads its own process group');

    // While it runs: 409 to a second start (no second process) and to motion requests; reads answer.
    const again = await start(CONFIG, { n_iterations: '1' });
    assert.equal(again.status, 409);
    assert.match(JSON.stringify(again.body), /already running/);
    for (const [p, body] of [
      ['/robot/move/named', { name: 'home' }],
      ['/robot/move/joints', { joints: WORK }],
      ['/robot/move/pose', { x: 0.5, y: 0, z: 0.5, b: Math.PI }],
      ['/trajectory/send', { points: [{ positions: WORK, time_from_start: 5 }] }],
    ] as const) {
      const r = await post<{ detail: string }>(url, p, body);
      assert.equal(r.status, 409, `${p} during a sequence: ${JSON.stringify(r.body)}`);
      assert.match(r.body.detail, /sequence/);
    }
    for (const p of ['/robot/joint_states', '/robot/pose', '/robot/positions', '/sequences/logs', '/trajectory/logs'])
      await getJson(url, p);
    // Progress while running (the configuration never touching the disk is checked after the run).
    const seen: Status[] = [];
    const last = await waitFor(
      'the sequence to finish',
      async () => {
        const s = await status();
        if (s.status === 'running') seen.push(s);
        return s;
      },
      (s) => s.status === 'finished',
      30_000,
      10,
    );
    assert.ok(seen.length > 0, 'status was running at least once');
    for (const s of seen) {
      assert.equal(s.pid, pid);
      assert.equal(s.n_iterations, 2);
      assert.ok(s.iteration !== undefined && s.iteration >= 0 && s.iteration <= 2, JSON.stringify(s));
      assert.ok(POINT_LABELS.includes(s.point ?? ''), JSON.stringify(s));
      assert.equal(s.bag_path, path.join(bagRoot, 'runA'));
      assert.equal(typeof s.started_at, 'string');
      assert.equal(s.returncode, undefined);
    }
    for (let k = 1; k < seen.length; k++)
      assert.ok((seen[k]?.iteration ?? 0) >= (seen[k - 1]?.iteration ?? 0), 'iterations never go back');
    assert.ok(
      new Set(seen.map((s) => `${s.iteration} ${s.point}`)).size >= 2,
      `progress was reported: ${seen.map((s) => `${s.iteration}/${s.point}`).join(', ')}`,
    );

    assert.equal(last.returncode, 0, (await runLog(pid)).join('\n'));
    assert.equal(last.pid, pid);
    assert.equal(last.bag_path, path.join(bagRoot, 'runA'));
    assert.ok(Date.parse(last.finished_at ?? '') >= Date.parse(last.started_at ?? ''), JSON.stringify(last));
    assert.equal(last.iteration, undefined);
    assertProcessGone(pid);

    const lines = await runLog(pid);
    const text = lines.join('\n');
    assert.match(text, /sequence started: 2 iteration\(s\) of 4 points, 0\.1 s between iterations/);
    assert.match(
      text,
      /recording \/joint_states \(sensor_msgs\/msg\/JointState\), \/iiwa_arm_controller\/joint_trajectory \(trajectory_msgs\/msg\/JointTrajectory\), \/robot_description \(std_msgs\/msg\/String\), \/tf_static \(tf2_msgs\/msg\/TFMessage\), \/tf \(tf2_msgs\/msg\/TFMessage\) to /,
    );
    for (const i of [1, 2]) {
      assert.equal(lines.filter((l) => l === `iteration ${i}/2: home reached`).length, 2, text);
      assert.equal(lines.filter((l) => l === `iteration ${i}/2: waypoint 1 reached`).length, 1, text);
      assert.equal(lines.filter((l) => l === `iteration ${i}/2: waypoint 2 reached`).length, 1, text);
      assert.ok(lines.includes(`iteration ${i}/2: waypoint 1 via cobot/move_to_joints`), text);
      assert.ok(lines.includes(`iteration ${i}/2: waypoint 2 via cobot/move_to_pose`), text);
    }
    assert.equal(lines.filter((l) => l === 'waiting 0.1 s').length, 1, 'waits between iterations, not after the last');
    assert.ok(lines.indexOf('iteration 2/2: home via cobot/move_to_joints') > lines.indexOf('waiting 0.1 s'));
    assert.ok(lines.includes('sequence finished: 2 iteration(s)'), text);
    assert.ok(lines.includes('bag closed'), text);
    assert.equal(lines.at(-1), `runner ${pid} exited with code 0`);
    assert.ok(!lines.some((l) => l.startsWith('stderr: ')), text);
    for (const line of await sequenceLog()) assert.match(line, LOG_LINE);
    assert.ok(maxDiff(await positions(url), WORK) < 1e-6, 'the run ends at home');

    // The uploaded configuration never touched the disk.
    assert.deepEqual(await tempFilesWith(marker, since), [], 'no file holds the configuration');

    // The bag: rosbag2 MCAP with ros2msg schemas and CDR messages, every topic the simulator offers.
    const folder = path.join(bagRoot, 'runA');
    const bag = await readBag(folder);
    assert.deepEqual(bag.files, ['metadata.yaml', 'runA_0.mcap']);
    assert.equal(bag.profile, 'ros2');
    const schemas: Record<string, string> = {
      '/iiwa_arm_controller/joint_trajectory': 'trajectory_msgs/msg/JointTrajectory',
      '/joint_states': 'sensor_msgs/msg/JointState',
      '/robot_description': 'std_msgs/msg/String',
      '/tf': 'tf2_msgs/msg/TFMessage',
      '/tf_static': 'tf2_msgs/msg/TFMessage',
    };
    assert.deepEqual(bag.channels.map((c) => c.topic).sort(), Object.keys(schemas));
    for (const channel of bag.channels) {
      assert.equal(channel.schemaEncoding, 'ros2msg');
      assert.equal(channel.messageEncoding, 'cdr');
      assert.equal(channel.schemaName, schemas[channel.topic]);
    }
    const states = bag.messages.filter((m) => m.topic === '/joint_states');
    assert.ok(states.length > 20, `${states.length} joint states recorded`);
    for (const m of states) assertJointState(m.decoded);
    const moved = states.map((m) => Array.from((m.decoded as { position: ArrayLike<number> }).position));
    assert.ok(
      moved.some((q) => maxDiff(q, JOINT_POINT.joints) < 1e-3),
      'the recording shows the arm at the joint waypoint',
    );
    for (let k = 1; k < bag.messages.length; k++)
      assert.ok((bag.messages[k]?.logTimeNs ?? 0n) >= (bag.messages[k - 1]?.logTimeNs ?? 0n), 'messages in time order');
    assert.equal(bag.metadata.storage_identifier, 'mcap');
    assert.equal(bag.metadata.message_count, bag.messages.length, 'metadata.yaml counts every message');
    for (const t of bag.metadata.topics_with_message_count) {
      assert.equal(
        t.message_count,
        bag.messages.filter((m) => m.topic === t.topic_metadata.name).length,
        t.topic_metadata.name,
      );
      assert.equal(t.topic_metadata.serialization_format, 'cdr');
    }
    assert.ok((await streamRecords(path.join(folder, bag.mcapFile))) > states.length);
  });

  it('records only the given topics: topics=/joint_states under a nested bag_path', async () => {
    const res = await start(
      { home: { joints: WORK, speed: 1 }, waypoints: [{ joints: [0.2, 0, 0, -1.57, 0, 1.57, 0], speed: 1 }] },
      { n_iterations: '1', bag_path: 'nested/runB', topics: ' /joint_states ' },
    );
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const done = await finished();
    assert.equal(done.returncode, 0, (await runLog(res.body.pid)).join('\n'));
    const bag = await readBag(path.join(bagRoot, 'nested', 'runB'));
    assert.deepEqual(
      bag.channels.map((c) => c.topic),
      ['/joint_states'],
    );
    assert.deepEqual(
      bag.metadata.topics_with_message_count.map((t) => t.topic_metadata.name),
      ['/joint_states'],
    );
    assert.ok(bag.messages.length > 0 && bag.messages.every((m) => m.topic === '/joint_states'));
    for (const m of bag.messages) assertJointState(m.decoded);
  });

  it('records nothing without bag_path', async () => {
    const before = await readdir(bagRoot);
    const res = await start({ home: { joints: WORK }, waypoints: [] }, { n_iterations: '1', bag_path: '' });
    assert.equal(res.status, 200);
    const done = await finished();
    assert.equal(done.returncode, 0);
    assert.equal(done.bag_path, undefined);
    assert.deepEqual(await readdir(bagRoot), before);
    assert.ok(!(await runLog(res.body.pid)).some((l) => /recording|bag closed/.test(l)));
  });

  describe('422 for an invalid configuration or field, and nothing starts', () => {
    const W = [...WORK];
    const cases: [string, unknown, Record<string, string>, (string | number)[], RegExp][] = [
      ['invalid JSON', '{"home": ', {}, ['body', 'config'], /not valid JSON/],
      ['an empty file', '', {}, ['body', 'config'], /not valid JSON/],
      ['a JSON array', '[]', {}, ['body', 'config', 'home'], /Field required/],
      ['a JSON null', 'null', {}, ['body', 'config'], /.+/],
      ['invalid UTF-8', new Uint8Array([0x7b, 0xff, 0x7d]), {}, ['body', 'config'], /not valid JSON/],
      ['home missing', { waypoints: [] }, {}, ['body', 'config', 'home'], /Field required/],
      ['waypoints missing', { home: CONFIG.home }, {}, ['body', 'config', 'waypoints'], /Field required/],
      [
        'waypoints not an array',
        { home: CONFIG.home, waypoints: { a: JOINT_POINT } },
        {},
        ['body', 'config', 'waypoints'],
        /Array/,
      ],
      ['home not a point', { home: 'work', waypoints: [] }, {}, ['body', 'config', 'home'], /.+/],
      [
        'a point with 6 joints',
        { home: CONFIG.home, waypoints: [JOINT_POINT, { joints: [0, 0, 0, 0, 0, 0] }] },
        {},
        ['body', 'config', 'waypoints', 1, 'joints'],
        /exactly 7 joint values .*got 6/,
      ],
      [
        'a point with 8 joints',
        { home: { joints: [...W, 0] }, waypoints: [] },
        {},
        ['body', 'config', 'home', 'joints'],
        /got 8/,
      ],
      [
        'a joint beyond its limits',
        { home: CONFIG.home, waypoints: [JOINT_POINT, JOINT_POINT, { joints: [0, 0, 0, -2.5, 0, 0, 0] }] },
        {},
        ['body', 'config', 'waypoints', 2, 'joints', 3],
        /joint4 = -2\.5 rad is outside its limits \[-2\.\d+, 2\.\d+\]/,
      ],
      [
        'a non-numeric joint',
        { home: { joints: [0, 0, 0, 0, 0, 0, 'x'] }, waypoints: [] },
        {},
        ['body', 'config', 'home', 'joints', 6],
        /number/,
      ],
      [
        'speed 0',
        { home: { joints: W, speed: 0 }, waypoints: [] },
        {},
        ['body', 'config', 'home', 'speed'],
        /at least 0\.01/,
      ],
      [
        'speed 2',
        { home: CONFIG.home, waypoints: [{ ...CARTESIAN_POINT, speed: 2 }] },
        {},
        ['body', 'config', 'waypoints', 0, 'speed'],
        /at most 1/,
      ],
      [
        'an unknown planner',
        { home: CONFIG.home, waypoints: [{ ...CARTESIAN_POINT, planner: 'rrt' }] },
        {},
        ['body', 'config', 'waypoints', 0, 'planner'],
        /ptp, lin, circ, ompl, chomp/,
      ],
      [
        'a Cartesian point in an unknown frame',
        { home: CONFIG.home, waypoints: [{ x: 0.5, y: 0, z: 0.5, frame_id: 'camera' }] },
        {},
        ['body', 'config', 'waypoints', 0, 'frame_id'],
        /unknown frame_id 'camera'/,
      ],
      [
        'a Cartesian coordinate that is not a number',
        { home: CONFIG.home, waypoints: [{ ...CARTESIAN_POINT, z: '0.5' }] },
        {},
        ['body', 'config', 'waypoints', 0, 'z'],
        /number/,
      ],
      [
        'an unknown key in a point',
        { home: { joints: W, speed: 0.5, accel: 1 }, waypoints: [] },
        {},
        ['body', 'config', 'home', 'accel'],
        /.+/,
      ],
      ['an unknown top-level key', { ...CONFIG, loops: 3 }, {}, ['body', 'config', 'loops'], /.+/],
      ['n_iterations 0', CONFIG, { n_iterations: '0' }, ['body', 'n_iterations'], /at least 1/],
      ['n_iterations abc', CONFIG, { n_iterations: 'abc' }, ['body', 'n_iterations'], /integer/],
      ['n_iterations 1.5', CONFIG, { n_iterations: '1.5' }, ['body', 'n_iterations'], /integer/],
      ['n_iterations -1', CONFIG, { n_iterations: '-1' }, ['body', 'n_iterations'], /.+/],
      [
        'delay_between_iterations -1',
        CONFIG,
        { delay_between_iterations: '-1' },
        ['body', 'delay_between_iterations'],
        /.+/,
      ],
      [
        'delay_between_iterations abc',
        CONFIG,
        { delay_between_iterations: 'abc' },
        ['body', 'delay_between_iterations'],
        /number/,
      ],
      ["bag_path '../x'", CONFIG, { bag_path: '../x' }, ['body', 'bag_path'], /inside sequences\.bag_root/],
      ["bag_path 'a/../../x'", CONFIG, { bag_path: 'a/../../x' }, ['body', 'bag_path'], /inside sequences\.bag_root/],
      [
        "bag_path 'café' (a letter outside ASCII)",
        CONFIG,
        { bag_path: 'café' },
        ['body', 'bag_path'],
        /^'é' is not allowed: a bag path may contain only A-Z, a-z, 0-9, space, _ \. - and \/$/,
      ],
      ["bag_path '/etc/x'", CONFIG, { bag_path: '/etc/x' }, ['body', 'bag_path'], /outside sequences\.bag_root/],
      [
        'bag_path of 255 characters (its recorder file cannot be named)',
        CONFIG,
        { bag_path: 'n'.repeat(255) },
        ['body', 'bag_path'],
        /NAME_MAX/,
      ],
      [
        'bag_path naming an existing folder',
        CONFIG,
        { bag_path: 'existing-folder' },
        ['body', 'bag_path'],
        /already exists/,
      ],
      [
        'bag_path naming an existing file',
        CONFIG,
        { bag_path: 'existing-file' },
        ['body', 'bag_path'],
        /already exists/,
      ],
      [
        'an unknown topic',
        CONFIG,
        { bag_path: 'never', topics: '/joint_states,/nope' },
        ['body', 'topics'],
        /unknown topic\(s\) \/nope; this stack offers \/joint_states, \/iiwa_arm_controller\/joint_trajectory/,
      ],
      ['an invalid joints_action', CONFIG, { joints_action: 'not a name!' }, ['body', 'joints_action'], /ROS name/],
      ['an empty pose_action', CONFIG, { pose_action: '' }, ['body', 'pose_action'], /ROS name/],
      ['an unknown form field', CONFIG, { iterations: '2' }, ['body', 'iterations'], /unexpected field 'iterations'/],
      ['a field given twice', CONFIG, {}, ['body', 'n_iterations'], /more than once/],
    ];
    before(async () => {
      await mkdir(path.join(bagRoot, 'existing-folder'), { recursive: true });
      await writeFile(path.join(bagRoot, 'existing-file'), 'x');
    });
    for (const [name, config, fields, loc, msg] of cases) {
      it(`${name}: 422 at ${loc.join('.')}`, async () => {
        const before = await status();
        const bagsBefore = await readdir(bagRoot);
        const form = sequenceForm(config, fields);
        if (name === 'a field given twice') {
          form.append('n_iterations', '1');
          form.append('n_iterations', '2');
        }
        const res = await post(url, '/sequences/start', form);
        assert.equal(res.status, 422, JSON.stringify(res.body));
        const issues = issuesOf(res.body);
        assert.deepEqual(issues[0]?.loc, loc, describeIssues(issues));
        assert.match(issues[0]?.msg ?? '', msg);
        assert.deepEqual(await status(), before, 'nothing started');
        assert.deepEqual(await readdir(bagRoot), bagsBefore, 'no bag folder was created');
      });
    }

    it('a missing config part: 422; a body that is not multipart: 415', async () => {
      const form = new FormData();
      form.append('n_iterations', '1');
      const missing = await post(url, '/sequences/start', form);
      assert.equal(missing.status, 422);
      assert.deepEqual(issuesOf(missing.body)[0]?.loc, ['body', 'config']);
      const json = await post<{ detail: string }>(url, '/sequences/start', CONFIG);
      assert.equal(json.status, 415);
      assert.match(json.body.detail, /expected a multipart\/form-data body/);
      assert.notEqual((await status()).status, 'running');
    });

    it('a configuration file over 1 MiB: 413', async () => {
      const big = JSON.stringify({ ...CONFIG, description: 'x'.repeat(1024 * 1024) });
      const before = await status();
      const res = await post<{ detail: string }>(url, '/sequences/start', sequenceForm(big));
      assert.equal(res.status, 413);
      assert.match(res.body.detail, /larger than 1048576 bytes/);
      assert.deepEqual(await status(), before);
    });
  });

  it('ends a failing sequence (a Cartesian point out of reach) with a non-zero returncode and names the point in the logs', async () => {
    const config = {
      home: CONFIG.home,
      waypoints: [JOINT_POINT, { x: 2, y: 0, z: 0.5, a: 0, b: Math.PI, c: 0, speed: 0.5 }, JOINT_POINT],
    };
    const res = await start(config, { n_iterations: '2', delay_between_iterations: '0' });
    assert.equal(res.status, 200, 'started is answered even though a motion will fail');
    const done = await finished();
    assert.notEqual(done.returncode, 0);
    assert.equal(done.returncode, 1);
    assertProcessGone(res.body.pid);
    const lines = await runLog(res.body.pid);
    const text = lines.join('\n');
    assert.ok(lines.includes('iteration 1/2: waypoint 1 reached'), text);
    assert.ok(
      lines.some((l) => /^stderr: iteration 1: waypoint 2 failed: .+/.test(l)),
      text,
    );
    assert.ok(!lines.some((l) => /waypoint 3|iteration 2\//.test(l)), 'the run stops at the failed point');
    assert.equal(lines.at(-1), `runner ${res.body.pid} exited with code 1`);
    // The arm is free again.
    const move = await post<{ success: boolean }>(url, '/robot/move/joints', { joints: WORK, speed: 1 });
    assert.equal(move.status, 200);
  });

  it('ends with returncode 3 and says why when joints_action is not served', async () => {
    const res = await start(CONFIG, { n_iterations: '1', joints_action: 'nope/move' });
    assert.equal(res.status, 200);
    const done = await finished();
    assert.equal(done.returncode, 3);
    assertProcessGone(res.body.pid);
    const lines = await runLog(res.body.pid);
    assert.ok(
      lines.some((l) =>
        /^stderr: iteration 1: home: no action server 'nope\/move' for MoveToJoints goals \(this stack serves 'cobot\/move_to_joints'\)/.test(
          l,
        ),
      ),
      lines.join('\n'),
    );
  });

  it('ends with returncode 3 when pose_action is not served (at the first Cartesian point)', async () => {
    const res = await start(CONFIG, { n_iterations: '1', pose_action: '/other/move_to_pose' });
    assert.equal(res.status, 200);
    const done = await finished();
    assert.equal(done.returncode, 3);
    const lines = await runLog(res.body.pid);
    assert.ok(lines.includes('iteration 1/1: waypoint 1 reached'), lines.join('\n'));
    assert.ok(
      lines.some((l) => /waypoint 2: no action server '\/other\/move_to_pose'/.test(l)),
      lines.join('\n'),
    );
  });

  it('accepts a leading slash on the default action names', async () => {
    const res = await start(
      { home: { joints: WORK, speed: 1 }, waypoints: [] },
      { n_iterations: '1', joints_action: '/cobot/move_to_joints' },
    );
    assert.equal(res.status, 200);
    assert.equal((await finished()).returncode, 0);
  });

  it('keeps serving when a recording runner dies (SIGKILL): finished with returncode 137, no uncaught EPIPE on the broken IPC channel', async () => {
    const uncaught: Error[] = [];
    const onUncaught = (e: Error) => uncaught.push(e);
    process.on('uncaughtException', onUncaught);
    try {
      const res = await start(CONFIG, { n_iterations: '100', bag_path: 'killed-run' });
      assert.equal(res.status, 200);
      const pid = res.body.pid;
      // Past 'starting', the runner has subscribed to every topic for its bag.
      await waitFor(
        'the runner to subscribe',
        status,
        (s) => s.status === 'running' && s.point !== 'starting',
        15_000,
        10,
      );
      process.kill(pid, 'SIGKILL');
      // Block this (the server's) thread until the runner is surely dead, then publish on a recorded
      // topic before the event loop can notice the closed channel: the forward to the runner fails.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 300);
      await server.context.publishTrajectory({
        header: { stamp: { sec: 0, nanosec: 0 }, frame_id: '' },
        joint_names: [],
        points: [],
      });
      const done = await finished();
      assert.equal(done.returncode, 137);
      assertProcessGone(pid);
      await sleep(50);
      assert.deepEqual(
        uncaught.map((e) => e.message),
        [],
        'the server must not throw when a message to an exited runner fails (ChildProcess.send without a callback emits an unhandled "error")',
      );
      await getJson(url, '/robot/joint_states');
      const next = await start({ home: { joints: WORK, speed: 1 }, waypoints: [] }, { n_iterations: '1' });
      assert.equal(next.status, 200);
      assert.equal((await finished()).returncode, 0);
    } finally {
      process.off('uncaughtException', onUncaught);
    }
  });

  it('keeps at least 1000 runner lines; n is 1..1000, default 50', async () => {
    // 300 iterations of home -> home (already there): 4 lines each, over 1200 in all.
    const res = await start(
      { home: { joints: WORK, speed: 1 }, waypoints: [] },
      { n_iterations: '300', delay_between_iterations: '0' },
    );
    assert.equal(res.status, 200);
    const done = await finished(60_000);
    assert.equal(done.returncode, 0);
    const all = await sequenceLog(1000);
    assert.equal(all.length, 1000);
    assert.match(all.at(-1) ?? '', new RegExp(`runner ${res.body.pid} exited with code 0$`));
    assert.ok(!all.some((l) => l.includes(`runner started (pid ${res.body.pid})`)), 'the oldest lines were dropped');
    let previous = '';
    for (const line of all) {
      const stamp = LOG_LINE.exec(line)?.[1];
      assert.ok(stamp, line);
      assert.ok(stamp >= previous, 'oldest first');
      previous = stamp;
    }
    assert.deepEqual((await getJson<{ lines: string[] }>(url, '/sequences/logs')).lines, all.slice(-50));
    assert.deepEqual(await sequenceLog(1), all.slice(-1));
    for (const n of ['0', '1001', 'abc', '2.5', '-3', '']) {
      const r = await send(url, `/sequences/logs?n=${n}`);
      const body = (await r.json()) as unknown;
      assert.equal(r.status, 422, `n=${n}`);
      assert.deepEqual(issuesOf(body)[0]?.loc, ['query', 'n']);
    }
  });
});

describe('a finished runner leaves no process behind', () => {
  it('kills what the runner started and left running (a sleep child) before it reports finished', async () => {
    const hook = pathToFileURL(path.join(PROJECT_ROOT, 'tests/support/leave-child-hook.mjs')).href;
    const server = await createTestApp(
      { sim: { time_scale: 20 } },
      { runnerEnv: { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${hook}`.trim() } },
    );
    try {
      const res = await post<{ status: string; pid: number }>(
        server,
        '/sequences/start',
        sequenceForm({ home: { joints: WORK, speed: 1 }, waypoints: [] }, { n_iterations: '1' }),
      );
      assert.equal(res.status, 200, JSON.stringify(res.body));
      await waitFor(
        'the sleep child in the runner group',
        async () => liveGroupMembers(res.body.pid),
        (members) => members.some((m) => / sleep$/.test(m)),
        15_000,
        5,
      );
      const done = await waitFor(
        'the sequence to finish',
        () => getJson<Status>(server, '/sequences/status'),
        (s) => s.status === 'finished',
        30_000,
        5,
      );
      assert.equal(done.returncode, 0);
      assertProcessGone(res.body.pid);
    } finally {
      await server.close();
    }
  });
});
