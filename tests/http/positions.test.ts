/**
 * Teach (issue 34, item 4): PUT /robot/positions/{name} saves where the arm stands or the given angles, DELETE removes
 * a taught position, GET /robot/positions lists both sources; taught positions survive a restart (their YAML file),
 * are usable by move/named (and its dry run) and by sequences, are refused where the SRDF owns the name, outside the
 * limits or the envelope, and to a read token; every change is audited and announced on /events. The first suite's
 * simulator and app run on a clock the test steps (tests/support/stepped.ts): each request steps it until answered, a
 * move waited for moves in its time; the sequence's runner is a process of its own, polled in the machine's time.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse as parseYaml, stringify } from 'yaml';
import { catalog } from '../../handlers/index.ts';
import { MAX_TAUGHT_POSITIONS, positionsFileText } from '../../lib/positions/taught.ts';
import { refusalsPath } from '../../lib/audit/trail.ts';
import { type RunningServer, startServer } from '../../lib/server/start.ts';
import { loadConfig } from '../../lib/settings/load.ts';
import { issuesOf, maxDiff } from '../support/live.ts';
import { SteppedClock } from '../../lib/clock.ts';
import { SimContext } from '../../lib/sim/context.ts';
import { steppedUntilSettled, waitOnClock } from '../support/stepped.ts';
import { sequenceForm } from '../support/multipart.ts';
import { openSse } from '../support/sse.ts';

const ADMIN = 'admin-token-7c1e5a9b3d';
const OPERATOR = 'operator-token-2b8f4d6a1c';
const VIEWER = 'viewer-token-9e3a7c5b2d';
const JOINTS = ['joint1', 'joint2', 'joint3', 'joint4', 'joint5', 'joint6', 'joint7'];
const WORK = [0, 0, 0, -1.57, 0, 1.57, 0];
/** A taught pose inside the limits and the workspace below. */
const PICK = [0.4, 0.35, 0, -1.3, 0, 1.2, 0.2];
const byName = (q: readonly number[]) => Object.fromEntries(JOINTS.map((j, i) => [j, q[i] ?? 0]));

interface Listed {
  name: string;
  source: string;
  joints: Record<string, number>;
  description: string;
  group: string;
}

/** The settings of the suite: tokens of each role, the audit trail, a workspace whose ceiling (1.1 m) 'home' is above. */
function settings(extra: Record<string, unknown> = {}): string {
  return stringify({
    web: {
      enabled: true,
      host: '127.0.0.1',
      port: 0,
      token: ADMIN,
      tokens: [
        { name: 'operator', token: OPERATOR, role: 'operate' },
        { name: 'viewer', token: VIEWER, role: 'read' },
      ],
      endpoints: 'pkg://armgate/config/endpoints.yaml',
      joint_limits: 'pkg://armgate/config/joint_limits.yaml',
    },
    armgate: {
      backend: 'sim',
      sim: { time_scale: 20, joint_state_rate_hz: 100, publish_joint_states: true, initial_position: 'work' },
      sequences: { bag_root: './bags' },
      audit: { path: 'audit.jsonl' },
      safety: { workspace: { min: [-1.5, -1.5, -0.3], max: [1.5, 1.5, 1.1] } },
      ...extra,
    },
  });
}

/** Starts armgate over the settings file in `dir` (written by the caller); its simulator and app on `clock` if given. */
async function start(dir: string, clock?: SteppedClock): Promise<RunningServer> {
  const loaded = await loadConfig(path.join(dir, 'settings.yaml'), { env: {} });
  if (!loaded.ok) throw new Error(loaded.error);
  if (loaded.value.kind !== 'serve') throw new Error('web disabled');
  const { config } = loaded.value;
  if (!clock) return startServer(config, catalog, { log: () => undefined });
  return startServer(config, catalog, { log: () => undefined, clock, context: await SimContext.create(config, clock) });
}

describe('teach: named positions saved, used, kept across restarts', () => {
  let dir: string;
  let server: RunningServer;
  let clock: SteppedClock;
  let file: string;

  /** A request, not waited for: its answer as status and JSON body. */
  const ask = async (method: string, route: string, body?: unknown, token = OPERATOR) => {
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${server.url}${route}`, {
      method,
      headers,
      ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    return { status: res.status, body: (text === '' ? undefined : JSON.parse(text)) as Record<string, unknown> };
  };
  /** A request, the clock stepped until it is answered (a move answers at its goal). */
  const call = (method: string, route: string, body?: unknown, token = OPERATOR) =>
    steppedUntilSettled(clock, ask(method, route, body, token), `${method} ${route}`);
  const list = async () => (await call('GET', '/robot/positions')).body as unknown as Listed[];
  const jointState = async () => ((await call('GET', '/robot/joint_states')).body as { position: number[] }).position;
  /** The positions file as YAML, asserting it parses. */
  const fileDoc = async () =>
    parseYaml(await readFile(file, 'utf8')) as { positions: Record<string, { joints: Record<string, number> }> };

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'armgate-teach-'));
    file = path.join(dir, 'positions.yaml');
    await writeFile(path.join(dir, 'settings.yaml'), settings());
    clock = new SteppedClock(0, Date.now());
    server = await start(dir, clock);
  });
  after(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('lists the SRDF positions with source srdf and nothing taught at first; no file is written by reading', async () => {
    const listed = await list();
    assert.deepEqual(
      listed.map((p) => [p.name, p.source]),
      [
        ['home', 'srdf'],
        ['work', 'srdf'],
        ['transport', 'srdf'],
      ],
    );
    assert.deepEqual(listed[1]?.joints, byName(WORK), 'the existing fields stay');
    assert.deepEqual(await readdir(dir).then((names) => names.includes('positions.yaml')), false);
  });

  it('saves where the arm stands (body {}), lists it as taught and writes a valid YAML file beside the settings', async () => {
    const here = await jointState();
    const saved = await call('PUT', '/robot/positions/here_1', {});
    assert.equal(saved.status, 200, JSON.stringify(saved.body));
    assert.equal(saved.body.created, true);
    assert.equal(saved.body.source, 'taught');
    assert.deepEqual(saved.body.joints, byName(here), 'the angles of the joint state');
    const taught = (await list()).find((p) => p.name === 'here_1');
    assert.equal(taught?.source, 'taught');
    assert.equal(taught?.group, 'iiwa_arm');
    assert.match(taught?.description ?? '', /saved by operator/);
    assert.deepEqual(taught?.joints, byName(here));
    assert.deepEqual((await fileDoc()).positions.here_1?.joints, byName(here), 'the file holds it');
  });

  it('saves given angles, moves there with move/named (and plans there with its dry run)', async () => {
    const saved = await call('PUT', '/robot/positions/pick', { joints: byName(PICK) });
    assert.equal(saved.status, 200, JSON.stringify(saved.body));
    const planned = await call('POST', '/robot/move/named', { name: 'pick', speed: 1, dry_run: true });
    assert.equal(planned.status, 200, JSON.stringify(planned.body));
    assert.equal(planned.body.success, true, JSON.stringify(planned.body));
    const plan = planned.body.plan as { final_joints: number[] };
    assert.ok(maxDiff(plan.final_joints, PICK) < 1e-9, `the plan ends at the taught angles: ${plan.final_joints}`);
    assert.ok(maxDiff(await jointState(), WORK) < 1e-3, 'the dry run did not move');
    const moved = await call('POST', '/robot/move/named', { name: 'pick', speed: 1 });
    assert.equal(moved.status, 200, JSON.stringify(moved.body));
    assert.equal(moved.body.success, true, JSON.stringify(moved.body));
    assert.ok(maxDiff(await jointState(), PICK) < 1e-3, 'the arm is at the taught position');
    // Saved again over itself (PUT replaces): created false, the file still valid.
    const again = await call('PUT', '/robot/positions/pick', {});
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.equal(again.body.created, false);
    assert.ok(maxDiff(Object.values((await fileDoc()).positions.pick?.joints ?? {}), PICK) < 1e-3);
  });

  it("an unknown name for move/named is a 422 that lists the taught names with the SRDF's", async () => {
    const res = await call('POST', '/robot/move/named', { name: 'nowhere' });
    assert.equal(res.status, 422);
    const [issue] = issuesOf(res.body);
    assert.deepEqual(issue?.loc, ['body', 'name']);
    assert.match(issue?.msg ?? '', /known: home, work, transport, .*pick/);
  });

  it('the SRDF positions are read-only: PUT and DELETE are 409 and change nothing', async () => {
    const before = await readFile(file, 'utf8');
    for (const [method, body] of [
      ['PUT', {}],
      ['PUT', { joints: byName(PICK) }],
      ['DELETE', undefined],
    ] as const) {
      const res = await call(method, '/robot/positions/home', body);
      assert.equal(res.status, 409, `${method}: ${JSON.stringify(res.body)}`);
      assert.match(String(res.body.detail), /'home' is a position of the robot description \(SRDF\): it is read-only/);
    }
    assert.deepEqual(
      (await list()).filter((p) => p.name === 'home').map((p) => [p.source, p.joints]),
      [['srdf', byName([0, 0, 0, 0, 0, 0, 0])]],
    );
    assert.equal(await readFile(file, 'utf8'), before, 'the file is untouched');
  });

  it('another method on /robot/positions/{name} is a 405 naming PUT and DELETE', async () => {
    const res = await fetch(`${server.url}/robot/positions/pick`, {
      method: 'POST',
      headers: { authorization: `Bearer ${OPERATOR}`, 'content-type': 'application/json' },
      body: '{}',
    });
    assert.equal(res.status, 405);
    assert.equal(res.headers.get('allow'), 'PUT, DELETE');
    const get = await fetch(`${server.url}/robot/positions/pick`, { headers: { authorization: `Bearer ${OPERATOR}` } });
    assert.equal(get.status, 405, 'a position is read from the list');
  });

  it('bad names are 422 at path.name', async () => {
    for (const name of ['1abc', 'a.b', 'has%20space', 'x'.repeat(65), '-lead', '%C3%A9t%C3%A9']) {
      const res = await call('PUT', `/robot/positions/${name}`, {});
      assert.equal(res.status, 422, `${name}: ${JSON.stringify(res.body)}`);
      const [issue] = issuesOf(res.body);
      assert.deepEqual(issue?.loc, ['path', 'name'], name);
      assert.match(issue?.msg ?? '', /the name must be a letter or _/);
      const deleted = await call('DELETE', `/robot/positions/${name}`);
      assert.equal(deleted.status, 422, `DELETE ${name}`);
    }
    const longest = await call('PUT', `/robot/positions/_${'a'.repeat(63)}`, { joints: byName(PICK) });
    assert.equal(longest.status, 200, '64 characters is the longest name');
  });

  it('joints outside the limits, missing, unknown or not numbers are 422 with the field path; nothing is saved', async () => {
    const before = await readFile(file, 'utf8');
    const cases: [string, unknown, (string | number)[], RegExp][] = [
      [
        'joint2 beyond its limit',
        { joints: { ...byName(PICK), joint2: 2.2 } },
        ['body', 'joints', 'joint2'],
        /outside its limits/,
      ],
      [
        'joint7 missing',
        { joints: Object.fromEntries(Object.entries(byName(PICK)).filter(([joint]) => joint !== 'joint7')) },
        ['body', 'joints', 'joint7'],
        /required/i,
      ],
      ['an unknown joint', { joints: { ...byName(PICK), joint8: 0 } }, ['body', 'joints', 'joint8'], /./],
      ['a string angle', { joints: { ...byName(PICK), joint1: 'x' } }, ['body', 'joints', 'joint1'], /number/],
      ['joints as an array', { joints: PICK }, ['body', 'joints'], /./],
      ['an unknown field', { joints: byName(PICK), speed: 1 }, ['body', 'speed'], /./],
      ['the name again in the body', { name: 'other', joints: byName(PICK) }, ['body', 'name'], /given in the path/],
    ];
    for (const [why, body, loc, msg] of cases) {
      const res = await call('PUT', '/robot/positions/bad_one', body);
      assert.equal(res.status, 422, `${why}: ${JSON.stringify(res.body)}`);
      const [issue] = issuesOf(res.body);
      assert.deepEqual(issue?.loc, loc, why);
      assert.match(issue?.msg ?? '', msg, why);
    }
    const bodyless = await call('PUT', '/robot/positions/bad_one', 'not json');
    assert.equal(bodyless.status, 422, 'a body that is not JSON');
    assert.equal(await readFile(file, 'utf8'), before, 'the file is untouched');
    assert.ok(!(await list()).some((p) => p.name === 'bad_one'));
  });

  it('angles outside the safety envelope are 422 at body.joints (home stands above the workspace ceiling)', async () => {
    const res = await call('PUT', '/robot/positions/straight_up', { joints: byName([0, 0, 0, 0, 0, 0, 0]) });
    assert.equal(res.status, 422, JSON.stringify(res.body));
    const [issue] = issuesOf(res.body);
    assert.deepEqual(issue?.loc, ['body', 'joints']);
    assert.match(issue?.msg ?? '', /outside the safety envelope: .*workspace/);
    assert.ok(!(await list()).some((p) => p.name === 'straight_up'));
  });

  it('saving where the arm stands while it moves is a 409 (nothing saved); given angles are saved meanwhile', async () => {
    // A long, slow turn of the base (1.9 rad at 1 % of its speed: seconds of wall time at time_scale 20).
    // Sent without stepping: the clock moves with the test's own waits and requests, in their order.
    const moving = ask('POST', '/robot/move/joints', { joints: [-1.5, ...PICK.slice(1)], speed: 0.01 });
    await waitOnClock(
      clock,
      'the arm to move',
      async () => ((await ask('GET', '/robot/joint_states')).body as { velocity: number[] }).velocity,
      (velocity) => velocity.some((qd) => Math.abs(qd) > 0.005),
      10_000,
      5,
      10_000,
    );
    const refused = await call('PUT', '/robot/positions/in_motion', {});
    assert.equal(refused.status, 409, JSON.stringify(refused.body));
    assert.match(
      String(refused.body.detail),
      /the arm is moving \(joint\d at -?\d+\.\d+ rad\/s\): save where it stands once it is at rest, or give the joints/,
    );
    const given = await call('PUT', '/robot/positions/given_in_motion', { joints: byName(PICK) });
    assert.equal(given.status, 200, 'teaching given angles does not need the arm at rest');
    assert.equal((await call('POST', '/stop', undefined)).status, 200);
    assert.equal(
      (await steppedUntilSettled(clock, moving, 'the stopped move')).body.success,
      false,
      'the move was stopped',
    );
    assert.ok(!(await list()).some((p) => p.name === 'in_motion'));
  });

  it('a read token may not teach or delete (403); the operator may', async () => {
    const put = await call('PUT', '/robot/positions/viewer_pos', { joints: byName(PICK) }, VIEWER);
    assert.equal(put.status, 403);
    assert.match(String(put.body.detail), /needs the role 'operate'; the token 'viewer' has the role 'read'/);
    const del = await call('DELETE', '/robot/positions/pick', undefined, VIEWER);
    assert.equal(del.status, 403);
    assert.ok(
      (await list()).some((p) => p.name === 'pick'),
      'still there',
    );
    assert.ok(!(await list()).some((p) => p.name === 'viewer_pos'));
  });

  it('concurrent PUTs of different names are all kept, in the list and in the file', async () => {
    const names = Array.from({ length: 24 }, (_, k) => `burst_${k}`);
    const answers = await Promise.all(
      names.map((name, k) =>
        call('PUT', `/robot/positions/${name}`, { joints: byName([0.01 * k, 0.3, 0, -1.3, 0, 1.2, 0]) }),
      ),
    );
    for (const [k, a] of answers.entries()) assert.equal(a.status, 200, `${names[k]}: ${JSON.stringify(a.body)}`);
    const listed = new Map((await list()).map((p) => [p.name, p]));
    const inFile = (await fileDoc()).positions;
    for (const [k, name] of names.entries()) {
      assert.equal(listed.get(name)?.joints.joint1, 0.01 * k, `${name} listed`);
      assert.equal(inFile[name]?.joints.joint1, 0.01 * k, `${name} in the file`);
    }
    assert.deepEqual(
      (await readdir(dir)).filter((n) => n.endsWith('.tmp')),
      [],
      'no temporary file is left behind',
    );
  });

  it('DELETE removes a taught position (200 with what it was); a name never taught is a 404', async () => {
    const deleted = await call('DELETE', '/robot/positions/burst_0');
    assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
    assert.deepEqual(deleted.body.joints, byName([0, 0.3, 0, -1.3, 0, 1.2, 0]));
    assert.ok(!(await list()).some((p) => p.name === 'burst_0'));
    assert.equal((await fileDoc()).positions.burst_0, undefined, 'gone from the file');
    const again = await call('DELETE', '/robot/positions/burst_0');
    assert.equal(again.status, 404);
    assert.match(String(again.body.detail), /no taught position 'burst_0'/);
    const moved = await call('POST', '/robot/move/named', { name: 'burst_0' });
    assert.equal(moved.status, 422, 'a deleted position cannot be moved to');
  });

  it('announces each change on /events (positions) and audits it with the token name', async () => {
    const events = await openSse(server.url, '/events?rate_hz=1', { token: ADMIN });
    try {
      const mark = events.events.length;
      assert.equal((await call('PUT', '/robot/positions/evented', { joints: byName(PICK) })).status, 200);
      const saved = await events.next((e) => e.type === 'positions', 5000, mark);
      assert.deepEqual(
        { ...(saved.data as Record<string, unknown>), count: undefined },
        { change: 'saved', name: 'evented', joints: byName(PICK), by: 'operator', count: undefined },
      );
      assert.equal((await call('DELETE', '/robot/positions/evented')).status, 200);
      const deleted = await events.next(
        (e) => e.type === 'positions' && (e.data as { change: string }).change === 'deleted',
        5000,
        mark,
      );
      assert.equal((deleted.data as { name: string }).name, 'evented');
    } finally {
      events.close();
    }
    await server.services.audit?.flush();
    const lines = (await readFile(path.join(dir, 'audit.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as {
            operation: string;
            principal: string;
            input?: { name?: string };
            outcome: { status: number };
          },
      );
    const teach = lines.filter((l) => l.operation === 'save_position' && l.input?.name === 'evented');
    assert.deepEqual(
      teach.map((l) => [l.principal, l.outcome.status]),
      [['operator', 200]],
    );
    assert.ok(
      lines.some((l) => l.operation === 'delete_position' && l.input?.name === 'evented' && l.principal === 'operator'),
    );
    // A refused call changed nothing: it is in the refusals' file, beside the trail (docs/safe-deployment.md).
    const refused = (await readFile(refusalsPath(path.join(dir, 'audit.jsonl')), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { operation: string; principal: string; outcome: { status: number } });
    assert.ok(
      refused.some((l) => l.operation === 'save_position' && l.principal === 'viewer' && l.outcome.status === 403),
      'the refusal is on the trail',
    );
  });

  it('a sequence names positions ({position}), taught or of the SRDF; an unknown one is 422 at its path', async () => {
    const form = (config: unknown) =>
      fetch(`${server.url}/sequences/start`, {
        method: 'POST',
        headers: { authorization: `Bearer ${OPERATOR}` },
        body: sequenceForm(config, { n_iterations: '1', delay_between_iterations: '0' }),
      });
    const unknown = await form({ home: { position: 'pick' }, waypoints: [{ position: 'work' }, { position: 'gone' }] });
    assert.equal(unknown.status, 422);
    const [issue] = issuesOf(await unknown.json());
    assert.deepEqual(issue?.loc, ['body', 'config', 'waypoints', 1, 'position']);
    assert.match(issue?.msg ?? '', /unknown named position 'gone'/);
    const started = await form({ home: { position: 'pick', speed: 1 }, waypoints: [{ position: 'work', speed: 1 }] });
    assert.equal(started.status, 200, await started.clone().text());
    // The runner is a process of its own: polled in the machine's time while the clock steps its motions.
    const done = await waitOnClock(
      clock,
      'the sequence to finish',
      async () => (await ask('GET', '/sequences/status')).body as { status: string; returncode?: number | null },
      (s) => s.status === 'finished',
      60_000,
      10,
      60_000,
    );
    assert.equal(done.returncode, 0, JSON.stringify(done));
    assert.ok(maxDiff(await jointState(), PICK) < 1e-3, 'the run ended at its home, the taught position');
  });

  it('after a restart (a new app over the same file) the taught positions are still there and usable', async () => {
    const before = (await list()).filter((p) => p.source === 'taught');
    await server.close();
    clock = new SteppedClock(0, Date.now());
    server = await start(dir, clock);
    const afterRestart = (await list()).filter((p) => p.source === 'taught');
    assert.deepEqual(afterRestart, before);
    assert.ok(afterRestart.some((p) => p.name === 'pick'));
    const moved = await call('POST', '/robot/move/named', { name: 'here_1', speed: 1 });
    assert.equal(moved.body.success, true, JSON.stringify(moved.body));
    const pick = afterRestart.find((p) => p.name === 'here_1');
    assert.ok(maxDiff(await jointState(), Object.values(pick?.joints ?? {})) < 1e-3);
  });
});

describe('the positions file at start-up, and the bound on taught positions', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'armgate-teach-file-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('a corrupt positions file refuses start-up with a message naming the file and the problem', async () => {
    const cases: [string, RegExp][] = [
      ['positions: [unclosed', /malformed YAML/],
      ['positions:\n  pick:\n    joints: {joint1: 0}\n', /positions\.pick\.joints\.joint2: expected a finite angle/],
      [`positions:\n  "9bad":\n    joints: ${JSON.stringify(byName(PICK))}\n`, /positions\.9bad: the name must be/],
      [
        `positions:\n  far:\n    joints: ${JSON.stringify({ ...byName(PICK), joint4: 3 })}\n`,
        /far\.joints\.joint4: .*outside its limits/,
      ],
      ['other: 1\n', /other: unknown key/],
    ];
    await writeFile(path.join(dir, 'settings.yaml'), settings({ positions_file: 'taught/cell.yaml' }));
    await mkdir(path.join(dir, 'taught'), { recursive: true });
    for (const [text, problem] of cases) {
      await writeFile(path.join(dir, 'taught', 'cell.yaml'), text);
      const loaded = await loadConfig(path.join(dir, 'settings.yaml'), { env: {} });
      assert.equal(loaded.ok, false, text);
      if (loaded.ok) continue;
      assert.match(
        loaded.error,
        /^armgate\.positions_file: '.*taught\/cell\.yaml' is not a valid positions file/,
        text,
      );
      assert.match(loaded.error, problem, text);
      assert.match(loaded.error, /move it away to start with none/);
    }
  });

  it('a positions file in a folder that does not exist: start-up says so (a notice), and a save is a 500 naming the file', async () => {
    await writeFile(path.join(dir, 'settings.yaml'), settings({ positions_file: 'no/such/folder/p.yaml' }));
    const loaded = await loadConfig(path.join(dir, 'settings.yaml'), { env: {} });
    assert.ok(loaded.ok && loaded.value.kind === 'serve', loaded.ok ? '' : loaded.error);
    if (!loaded.ok || loaded.value.kind !== 'serve') return;
    assert.ok(
      loaded.value.config.notices.some((n) =>
        /^armgate\.positions_file: the folder '.*no\/such\/folder' does not exist; saving a taught position fails/.test(
          n,
        ),
      ),
      loaded.value.config.notices.join('\n'),
    );
    const server = await startServer(loaded.value.config, catalog, { log: () => undefined });
    try {
      const res = await fetch(`${server.url}/robot/positions/nowhere`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${OPERATOR}`, 'content-type': 'application/json' },
        body: JSON.stringify({ joints: byName(PICK) }),
      });
      assert.equal(res.status, 500);
      assert.match(
        ((await res.json()) as { detail: string }).detail,
        /the positions file '.*p\.yaml' could not be written \(ENOENT\); nothing changed/,
      );
      const listed = (await (
        await fetch(`${server.url}/robot/positions`, { headers: { authorization: `Bearer ${OPERATOR}` } })
      ).json()) as { name: string }[];
      assert.ok(!listed.some((p) => p.name === 'nowhere'), 'nothing was saved');
    } finally {
      await server.close();
    }
  });

  it(`keeps at most ${MAX_TAUGHT_POSITIONS}: one more is a 409 that says so; replacing one is still allowed`, async () => {
    await writeFile(path.join(dir, 'settings.yaml'), settings());
    const full = Array.from({ length: MAX_TAUGHT_POSITIONS }, (_, k) => ({
      name: `p${k}`,
      jointsRad: PICK,
      savedAt: '2026-01-01T00:00:00.000Z',
      savedBy: 'operator',
    }));
    await writeFile(path.join(dir, 'positions.yaml'), positionsFileText(full, JOINTS));
    const server = await start(dir);
    try {
      const put = (name: string) =>
        fetch(`${server.url}/robot/positions/${name}`, {
          method: 'PUT',
          headers: { authorization: `Bearer ${OPERATOR}`, 'content-type': 'application/json' },
          body: JSON.stringify({ joints: byName(WORK) }),
        });
      const more = await put('one_more');
      assert.equal(more.status, 409);
      assert.match(
        ((await more.json()) as { detail: string }).detail,
        /1000 positions are taught, the most armgate keeps/,
      );
      const replaced = await put('p7');
      assert.equal(replaced.status, 200, await replaced.clone().text());
    } finally {
      await server.close();
    }
    const doc = parseYaml(await readFile(path.join(dir, 'positions.yaml'), 'utf8')) as {
      positions: Record<string, { joints: Record<string, number> }>;
    };
    assert.equal(Object.keys(doc.positions).length, MAX_TAUGHT_POSITIONS);
    assert.deepEqual(doc.positions.p7?.joints, byName(WORK));
    assert.equal(doc.positions.one_more, undefined);
  });
});
