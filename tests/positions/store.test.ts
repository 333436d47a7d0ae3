/**
 * The taught positions' store (lib/positions/store.ts) through its own surface: every change replaces the file
 * atomically, so a failure between the write and the rename (a crash, a full disk, a folder turned read-only) leaves
 * the old file whole and the list as it was; changes are serialized, so none is lost.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { parsePositionsFile, type TaughtPosition } from '../../lib/positions/taught.ts';
import { PositionStore } from '../../lib/positions/store.ts';
import { testConfig } from '../support/server.ts';
import type { JointLimits } from '../../lib/robot/limits.ts';

const JOINTS = ['joint1', 'joint2', 'joint3', 'joint4', 'joint5', 'joint6', 'joint7'];
const at = (name: string, j1: number): TaughtPosition => ({
  name,
  jointsRad: [j1, 0.3, 0, -1.3, 0, 1.2, 0],
  savedAt: '2026-11-28T00:00:00.000Z',
  savedBy: 'operator',
});

describe('the taught positions store', () => {
  let dir: string;
  let limits: JointLimits;
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'armgate-positions-store-'));
    limits = (await testConfig()).limits;
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('a rename that fails (a crash between write and rename) leaves the old file whole and the list unchanged', async () => {
    const file = path.join(dir, 'crash.yaml');
    let failing = false;
    const store = new PositionStore(file, JOINTS, [], {
      fs: {
        rename: async (from, to) => {
          if (failing) throw Object.assign(new Error('EROFS: read-only file system'), { code: 'EROFS' });
          await rename(from, to);
        },
      },
    });
    assert.equal((await store.save(at('a', 0.1))).ok, true);
    const before = await readFile(file, 'utf8');
    failing = true;
    const saved = await store.save(at('b', 0.2));
    assert.equal(saved.ok, false);
    if (!saved.ok) {
      assert.equal(saved.error.kind, 'io');
      assert.match(saved.error.detail, /could not be written \(EROFS\); nothing changed/);
    }
    const deleted = await store.delete('a');
    assert.equal(deleted.ok, false, 'a delete that cannot be written is not made either');
    assert.equal(await readFile(file, 'utf8'), before, 'the old file, byte for byte');
    assert.deepEqual(
      store.list().map((p) => p.name),
      ['a'],
      'the list is what the file says',
    );
    assert.deepEqual(
      (await readdir(dir)).filter((n) => n.endsWith('.tmp')),
      [],
      'the new file written before the rename is removed',
    );
    const reread = parsePositionsFile(before, limits);
    assert.ok(reread.ok && reread.value[0]?.name === 'a', 'what is on disk still parses');
    failing = false;
    assert.equal((await store.save(at('b', 0.2))).ok, true, 'works again once the rename does');
  });

  it('serializes changes: many saves and deletes at once all land, and the file is valid YAML after each', async () => {
    const file = path.join(dir, 'burst.yaml');
    const seen: string[] = [];
    const store = new PositionStore(file, JOINTS, [], {
      fs: {
        rename: async (from, to) => {
          // Each replacement is a whole, parseable file with what the changes before it made.
          const doc = parseYaml(await readFile(from, 'utf8')) as { positions: Record<string, unknown> };
          seen.push(Object.keys(doc.positions).sort().join(','));
          await rename(from, to);
        },
      },
    });
    const names = Array.from({ length: 40 }, (_, k) => `n${k}`);
    const results = await Promise.all(names.map((name, k) => store.save(at(name, k / 100))));
    assert.ok(results.every((r) => r.ok));
    assert.equal(seen.length, 40, 'one replacement per change');
    assert.deepEqual(
      seen.map((keys) => keys.split(',').length),
      Array.from({ length: 40 }, (_, k) => k + 1),
      'each replacement holds one more: none was lost',
    );
    await Promise.all([store.delete('n0'), store.delete('n1'), store.save(at('n2', 0.9))]);
    const parsed = parsePositionsFile(await readFile(file, 'utf8'), limits);
    assert.ok(parsed.ok);
    if (parsed.ok) {
      assert.equal(parsed.value.length, 38);
      assert.equal(parsed.value.find((p) => p.name === 'n2')?.jointsRad[0], 0.9);
    }
  });

  it('a bound on the number kept: one more is refused, replacing one is not', async () => {
    const store = new PositionStore(path.join(dir, 'bound.yaml'), JOINTS, [at('x', 0), at('y', 0)], { max: 2 });
    const more = await store.save(at('z', 0));
    assert.equal(more.ok, false);
    if (!more.ok) assert.equal(more.error.kind, 'full');
    assert.equal((await store.save(at('y', 0.5))).ok, true);
    assert.equal(store.get('y')?.jointsRad[0], 0.5);
  });
});
