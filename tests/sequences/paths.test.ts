/**
 * lib/sequences/paths.ts on the file system: bag folders confined by real path under bag_root, and
 * the runner's removal of its temporary configuration folder (only armgate-sequence-* in the temp
 * directory).
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { confineRequest } from '../../lib/sequences/paths.ts';

describe('confineRequest (bag_path under bag_root, by real path)', () => {
  let base: string;
  let root: string;
  let outside: string;
  before(async () => {
    base = await mkdtemp(path.join(tmpdir(), 'armgate-test-paths-'));
    root = path.join(base, 'bags');
    outside = path.join(base, 'outside');
    await mkdir(root);
    await mkdir(outside);
    await mkdir(path.join(root, 'real'));
    await writeFile(path.join(root, 'file'), '');
    await symlink(outside, path.join(root, 'escape'));
    await symlink(path.join(root, 'real'), path.join(root, 'inner'));
    await symlink('../outside', path.join(root, 'relative-escape'));
    await symlink(path.join(base, 'nowhere'), path.join(root, 'dangling'));
    await symlink(root, path.join(base, 'root-link'));
  });
  after(async () => {
    await rm(base, { recursive: true, force: true });
  });

  const refused: [string, RegExp][] = [
    ['escape', /is a symbolic link under sequences\.bag_root/],
    ['escape/run', /leads through a symbolic link to .*outside.*, outside sequences\.bag_root/],
    ['escape/a/b', /outside sequences\.bag_root/],
    ['relative-escape/run', /outside sequences\.bag_root/],
    ['inner', /is a symbolic link/],
    ['dangling', /is a symbolic link/],
    ['dangling/run', /cannot be resolved \(ENOENT\)/],
    ['real', /already exists/],
    ['file', /already exists/],
    ['../outside/run', /bag_path must stay inside sequences\.bag_root/],
  ];
  for (const [requested, message] of refused) {
    it(`refuses '${requested}'`, async () => {
      const result = await confineRequest(root, requested);
      assert.equal(result.ok, false, JSON.stringify(result));
      if (!result.ok) assert.match(result.error, message);
    });
  }

  it('accepts new folders, also through a link that stays inside, and returns the path under bag_root', async () => {
    for (const requested of ['run', 'nested/deeper/run', 'real/run', 'inner/run', 'inner/x/y']) {
      assert.deepEqual(await confineRequest(root, requested), { ok: true, value: path.join(root, requested) });
    }
    // A file as a parent passes here; the runner's mkdir then fails with returncode 4.
    assert.equal((await confineRequest(root, 'file/run')).ok, true);
  });

  it('accepts a bag_root that is itself a symbolic link, comparing real paths', async () => {
    const viaLink = path.join(base, 'root-link');
    assert.deepEqual(await confineRequest(viaLink, 'inner/run'), { ok: true, value: path.join(viaLink, 'inner/run') });
    assert.equal((await confineRequest(viaLink, 'escape/run')).ok, false);
  });

  it("refuses a bag_path whose folder or recorder files exceed the file system's NAME_MAX, before creating anything", async () => {
    // The recorder writes <name>_0.mcap into the folder: 248 characters is the longest name whose file fits 255.
    const fits = 'a'.repeat(248);
    assert.deepEqual(await confineRequest(root, fits), { ok: true, value: path.join(root, fits) });
    for (const [requested, message] of [
      ['b'.repeat(249), /the recorder would write the file 'b+\.\.\.' \(256 bytes\); .*at most 255 bytes \(NAME_MAX\)/],
      ['c'.repeat(255), /\(262 bytes\); this file system takes names of at most 255 bytes \(NAME_MAX\)/],
      [`${'d'.repeat(256)}/run`, /the folder name 'd+\.\.\.' is 256 bytes; .*NAME_MAX/],
    ] as const) {
      const result = await confineRequest(root, requested);
      assert.equal(result.ok, false, requested);
      if (!result.ok) assert.match(result.error, message);
    }
    assert.ok(!(await readdir(root)).some((name) => /^[bcd]+$/.test(name)), 'no folder was created');
  });

  it('refuses a bag_path whose recorder files would exceed PATH_MAX under a deep bag_root', async () => {
    // A bag_root 19 x 201 bytes deep: a 150-character bag_path makes its files' paths longer than 4095 bytes.
    let deep = base;
    for (let i = 0; i < 19; i++) deep = path.join(deep, `${i}`.padEnd(200, 'p'));
    await mkdir(deep, { recursive: true });
    const result = await confineRequest(deep, 'e'.repeat(150));
    assert.equal(result.ok, false);
    if (!result.ok) assert.match(result.error, /bytes of path \(e+_0\.mcap\); .*at most 4095 bytes \(PATH_MAX\)/);
    assert.equal((await confineRequest(deep, 'short')).ok, true);
    await rm(path.join(base, '0'.padEnd(200, 'p')), { recursive: true, force: true });
  });

  it('wrote nothing anywhere', async () => {
    assert.deepEqual(await readdir(outside), []);
    assert.deepEqual((await readdir(path.join(root, 'real'))).sort(), []);
  });
});
