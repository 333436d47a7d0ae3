/**
 * bag_path is checked when POST /sequences/start comes, and again by the runner when it creates the
 * folder: a link planted in between (after the check, before the runner starts) sends nothing
 * outside bag_root. The race is set up by handing the supervisor a path that leads through such a
 * link, as if it had been planted right after the request's check.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createConfinedFolder } from '../../lib/sequences/paths.ts';
import { getJson, waitFor, WORK } from '../support/live.ts';
import { createTestApp, type TestApp } from '../support/server.ts';

describe('a link planted under bag_root after the request was checked', () => {
  let server: TestApp;
  let root: string;
  let outside: string;

  before(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'armgate-test-race-root-'));
    outside = await mkdtemp(path.join(tmpdir(), 'armgate-test-race-outside-'));
    await symlink(outside, path.join(root, 'planted'));
    server = await createTestApp({ sequences: { bag_root: root } });
  });
  after(async () => {
    await server.close();
    await rm(root, { recursive: true, force: true });
    await rm(outside, { recursive: true, force: true });
  });

  it('createConfinedFolder refuses it before creating anything, and creates a folder that stays inside', async () => {
    const refused = await createConfinedFolder(root, path.join(root, 'planted', 'deep', 'run'));
    assert.equal(refused.ok, false);
    assert.match(refused.ok ? '' : refused.error, /resolves to .*outside sequences\.bag_root .*nothing was written/);
    assert.deepEqual(await readdir(outside), []);
    const created = await createConfinedFolder(root, path.join(root, 'fine', 'run'));
    assert.ok(created.ok);
    assert.deepEqual(await readdir(path.join(root, 'fine')), ['run']);
  });

  it('the runner ends with returncode 4 saying why, and nothing is written outside bag_root', async () => {
    const { arbiter, sequences } = server.services;
    const lease = arbiter.acquire('sequence', 'the race test');
    assert.ok(lease.ok);
    const run = {
      iterations: 1,
      delayS: 0,
      bagPath: path.join(root, 'planted', 'run'),
      bagRoot: root,
      topics: [],
      jointsAction: 'cobot/move_to_joints',
      poseAction: 'cobot/move_to_pose',
    };
    const started = await sequences.start({ home: { joints: [...WORK], speed: 1 }, waypoints: [] }, run, lease.value);
    assert.ok(started.ok);
    const done = await waitFor(
      'the runner to end',
      () => getJson<{ status: string; returncode?: number }>(server, '/sequences/status'),
      (s) => s.status === 'finished',
      20_000,
    );
    assert.equal(done.returncode, 4);
    const logs = JSON.stringify(await getJson<unknown>(server, '/sequences/logs?n=50'));
    assert.match(logs, /cannot record the bag: the bag folder .* outside sequences\.bag_root/);
    assert.deepEqual(await readdir(outside), [], 'nothing was written outside bag_root');
  });
});
