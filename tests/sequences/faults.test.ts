/**
 * Faults around a recorded sequence, through the public surface of the command line server
 * (issue 11, items 5 and 6): armgate SIGKILLed mid-recording (the runner closes its bag and exits,
 * no temporary folder stays), the runner itself SIGKILLed (its bag reads back with a stream reader
 * up to about its last second), and bag_path through a symbolic link out of bag_root (422, nothing
 * written outside).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { assertJointState, readBag } from '../support/bag.ts';
import { streamBagFolder } from '../support/bag-stream.ts';
import { listeningUrl, runServerCli, type CliRun } from '../support/cli.ts';
import { tempFilesWith, describeIssues, getJson, issuesOf, post, sleep, waitFor, WORK } from '../support/live.ts';
import { sequenceForm } from '../support/multipart.ts';
import { writeSettings } from '../support/settings-file.ts';

const TIME_SCALE = 10;
/** Long enough to be interrupted: 100 iterations between two joint points. */
const LONG_SEQUENCE = {
  home: { joints: [...WORK], speed: 0.3 },
  waypoints: [{ joints: [0.5, 0.3, 0, -1.2, 0, 1.2, 0.3], speed: 0.3 }],
};

interface Status {
  status: string;
  pid?: number;
  point?: string;
  returncode?: number;
}

/** True while `pid` is a live process (a zombie waiting to be collected counts as gone). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/** SIGKILLs `pid` if it still lives (cleanup of a runner whose server is gone). */
function killIfAlive(pid: number): void {
  if (pid > 0 && alive(pid)) process.kill(pid, 'SIGKILL');
}

/** A command line server on an ephemeral port recording under `bagRoot`; `stop()` SIGKILLs it if needed. */
async function startCli(bagRoot: string): Promise<{ cli: CliRun; url: string; stop: () => Promise<void> }> {
  const settings = await writeSettings({ sim: { time_scale: TIME_SCALE }, sequences: { bag_root: bagRoot } });
  const cli = runServerCli(['--settings', settings.file, '--port', '0']);
  const stop = async () => {
    if (cli.child.exitCode === null && cli.child.signalCode === null) cli.child.kill('SIGKILL');
    await cli.exited;
    await settings.cleanup();
  };
  try {
    return { cli, url: await listeningUrl(cli, 30_000), stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

/** Starts the long sequence recording into `bagPath` and waits until it runs its first point (recording by then). */
async function startRecording(url: string, bagPath: string, name: string): Promise<number> {
  const res = await post<{ status: string; pid: number }>(
    url,
    '/sequences/start',
    sequenceForm({ ...LONG_SEQUENCE, name }, { n_iterations: '100', delay_between_iterations: '0', bag_path: bagPath }),
  );
  assert.equal(res.status, 200, JSON.stringify(res.body));
  await waitFor(
    'the sequence to run a point',
    () => getJson<Status>(url, '/sequences/status'),
    (s) => s.status === 'running' && s.point !== 'starting',
    20_000,
    20,
  );
  return res.body.pid;
}

/** The last message's receive time in ms since the epoch. */
const lastMs = (messages: readonly { logTimeNs: bigint }[]) => Number((messages.at(-1)?.logTimeNs ?? 0n) / 1_000_000n);

describe('armgate SIGKILLed during a recorded sequence', () => {
  let bagRoot: string;
  before(async () => {
    bagRoot = await mkdtemp(path.join(tmpdir(), 'armgate-test-faults-server-'));
  });
  after(async () => {
    await rm(bagRoot, { recursive: true, force: true });
  });

  it('the runner cancels, closes its bag (indexed reader, metadata.yaml) and exits within seconds; no configuration folder of the run remains', async () => {
    const server = await startCli(bagRoot);
    const since = Date.now();
    const marker = `faults-server-kill-${process.pid}-${since}`;
    let pid = 0;
    let killedAtMs = 0;
    try {
      pid = await startRecording(server.url, 'orphaned', marker);
      await sleep(1500);
      assert.ok(alive(pid), 'the runner runs');
      killedAtMs = Date.now();
      server.cli.child.kill('SIGKILL');
      await server.cli.exited;
      const deadline = Date.now() + 5000;
      while (alive(pid) && Date.now() < deadline) await sleep(25);
      assert.ok(!alive(pid), `the runner ${pid} still runs 5 s after armgate was SIGKILLed`);
    } finally {
      killIfAlive(pid);
      await server.stop();
    }
    const folder = path.join(bagRoot, 'orphaned');
    const bag = await readBag(folder);
    assert.deepEqual(bag.files, ['metadata.yaml', 'orphaned_0.mcap']);
    const states = bag.messages.filter((m) => m.topic === '/joint_states');
    assert.ok(states.length > 20, `${states.length} joint states recorded`);
    for (const m of states) assertJointState(m.decoded);
    assert.equal(
      bag.metadata.message_count,
      bag.messages.length,
      'metadata.yaml counts the messages: the bag was closed',
    );
    const lost = killedAtMs - lastMs(bag.messages);
    assert.ok(lost < 1000, `the recording stops ${lost} ms before the kill`);
    assert.deepEqual(await tempFilesWith(marker, since), [], 'no file holds the configuration');
  });
});

describe('faults on a running server', () => {
  let bagRoot: string;
  let outside: string;
  let server: Awaited<ReturnType<typeof startCli>>;
  before(async () => {
    bagRoot = await mkdtemp(path.join(tmpdir(), 'armgate-test-faults-bags-'));
    outside = await mkdtemp(path.join(tmpdir(), 'armgate-test-faults-outside-'));
    server = await startCli(bagRoot);
  });
  after(async () => {
    await server.stop();
    await rm(bagRoot, { recursive: true, force: true });
    await rm(outside, { recursive: true, force: true });
  });

  it('a SIGKILLed runner leaves a bag that a stream reader reads up to about its last second', async () => {
    const since = Date.now();
    const marker = `faults-runner-kill-${process.pid}-${since}`;
    let pid = 0;
    let killedAtMs = 0;
    try {
      pid = await startRecording(server.url, 'killed-runner', marker);
      await sleep(1500);
      const status = await getJson<Status>(server.url, '/sequences/status');
      assert.equal(status.pid, pid);
      assert.deepEqual(
        await tempFilesWith(marker, since),
        [],
        'the configuration reached the runner as a message, not a file',
      );
      killedAtMs = Date.now();
      process.kill(pid, 'SIGKILL');
      const done = await waitFor(
        'the run to finish',
        () => getJson<Status>(server.url, '/sequences/status'),
        (s) => s.status === 'finished',
        10_000,
        20,
      );
      assert.equal(done.returncode, 137);
    } finally {
      killIfAlive(pid);
    }
    const streamed = await streamBagFolder(path.join(bagRoot, 'killed-runner'));
    assert.ok(streamed.files.includes('metadata.yaml'), 'metadata.yaml is written at the start');
    assert.equal(streamed.complete, false, 'the file has no footer');
    assert.deepEqual(streamed.topics.sort(), [
      '/iiwa_arm_controller/joint_trajectory',
      '/joint_states',
      '/robot_description',
      '/tf',
      '/tf_static',
    ]);
    const states = streamed.messages.filter((m) => m.topic === '/joint_states');
    assert.ok(states.length > 20, `${states.length} joint states read back`);
    for (const m of states) assertJointState(m.decoded);
    const lost = killedAtMs - lastMs(streamed.messages);
    assert.ok(lost <= 1000, `the last ${lost} ms before the kill were lost`);
  });

  it('refuses with 422 a bag_path that is, or passes through, a symbolic link out of bag_root, and writes nothing outside', async () => {
    await symlink(outside, path.join(bagRoot, 'escape'));
    await symlink(path.join(outside, 'missing'), path.join(bagRoot, 'dangling'));
    const cases: [string, RegExp][] = [
      ['escape', /'escape' is a symbolic link under sequences\.bag_root/],
      ['escape/run', /'escape\/run' leads through a symbolic link to .*, outside sequences\.bag_root/],
      ['escape/a/b/run', /'escape\/a\/b\/run' leads through a symbolic link to .*, outside sequences\.bag_root/],
      ['./escape/../escape/run', /leads through a symbolic link to .*, outside sequences\.bag_root/],
      ['dangling', /'dangling' is a symbolic link/],
      ['dangling/run', /'dangling\/run': .*dangling cannot be resolved/],
    ];
    for (const [bagPath, message] of cases) {
      const res = await post(
        server.url,
        '/sequences/start',
        sequenceForm(LONG_SEQUENCE, { n_iterations: '1', bag_path: bagPath }),
      );
      assert.equal(res.status, 422, `${bagPath}: ${JSON.stringify(res.body)}`);
      const issues = issuesOf(res.body);
      assert.deepEqual(issues[0]?.loc, ['body', 'bag_path']);
      assert.match(describeIssues(issues), message, bagPath);
    }
    assert.notEqual((await getJson<Status>(server.url, '/sequences/status')).status, 'running', 'nothing started');
    await sleep(200);
    assert.deepEqual(await readdir(outside), [], 'nothing was written outside bag_root');
  });

  it('records through a symbolic link that stays inside bag_root', async () => {
    await mkdir(path.join(bagRoot, 'real'));
    await symlink(path.join(bagRoot, 'real'), path.join(bagRoot, 'inner'));
    const res = await post(
      server.url,
      '/sequences/start',
      sequenceForm(
        { home: { joints: [...WORK], speed: 1 }, waypoints: [] },
        { n_iterations: '1', bag_path: 'inner/run' },
      ),
    );
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const done = await waitFor(
      'the run to finish',
      () => getJson<Status>(server.url, '/sequences/status'),
      (s) => s.status === 'finished',
      20_000,
      20,
    );
    assert.equal(done.returncode, 0);
    assert.deepEqual((await readBag(path.join(bagRoot, 'real', 'run'))).files, ['metadata.yaml', 'run_0.mcap']);
  });
});
