import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { isLoopbackHost, loadConfig } from '../../lib/settings/load.ts';
import { confineUnder, resolveFileRef } from '../../lib/settings/resolve.ts';
import { PROJECT_ROOT, type SettingsOverrides, settingsYaml, writeSettings } from '../support/server.ts';

async function load(
  overrides: SettingsOverrides,
  files: Record<string, string> = {},
  env: Record<string, string> = {},
) {
  const s = await writeSettings(overrides, files);
  try {
    return await loadConfig(s.file, { env });
  } finally {
    await s.cleanup();
  }
}

async function failure(overrides: SettingsOverrides, files: Record<string, string> = {}): Promise<string> {
  const result = await load(overrides, files);
  assert.equal(result.ok, false, 'expected the settings to be refused');
  return result.ok ? '' : result.error;
}

describe('settings', () => {
  it('loads the bundled defaults: simulator on 127.0.0.1:8007, no token, limits and named positions', async () => {
    const result = await loadConfig(path.join(PROJECT_ROOT, 'settings.yaml'), { env: {} });
    assert.ok(result.ok && result.value.kind === 'serve');
    const c = result.value.config;
    assert.equal(c.robot.backend, 'sim');
    assert.equal(c.web.host, '127.0.0.1');
    assert.equal(c.web.port, 8007);
    assert.equal(c.web.token, undefined);
    assert.deepEqual(c.limits.maxRad, [2.97, 2.1, 2.97, 2.1, 2.97, 2.1, 3.05]);
    assert.deepEqual(c.limits.maxVelRadS, [1.71, 1.71, 1.75, 2.27, 2.44, 3.14, 3.14]);
    assert.deepEqual(
      c.groupStates?.map((g) => g.name),
      ['home', 'work', 'transport'],
    );
  });

  const refused: [string, SettingsOverrides, Record<string, string>, RegExp][] = [
    ['an unknown backend', { robot: { backend: 'ros3' } }, {}, /^robot\.backend: /],
    ['a negative port', { web: { port: -1 } }, {}, /^web\.port: /],
    ['a port above 65535', { web: { port: 70000 } }, {}, /^web\.port: /],
    ['a port that is text', { web: { port: 'abc' } }, {}, /^web\.port: /],
    ['an unknown key in an armgate block', { web: { tokn: 'x' } }, {}, /web/],
    ['a missing endpoints file', { web: { endpoints: './nope.yaml' } }, {}, /^web\.endpoints: cannot read/],
    ['a missing limits file', { web: { joint_limits: './nope.yaml' } }, {}, /^web\.joint_limits: cannot read/],
    [
      'a malformed limits file',
      { web: { joint_limits: './limits.yaml' } },
      { 'limits.yaml': 'joint_limits: [oops' },
      /^web\.joint_limits: malformed YAML/,
    ],
    [
      'a limits file with min > max',
      { web: { joint_limits: './limits.yaml' } },
      { 'limits.yaml': '' },
      /joint3: min_position 1 is greater than max_position -1/,
    ],
    [
      'an unknown initial position',
      { sim: { initial_position: 'nowhere' } },
      {},
      /^sim\.initial_position: unknown named position 'nowhere' \(known: home, work, transport\)/,
    ],
    ['6 initial joint angles', { sim: { initial_position: [0, 0, 0, 0, 0, 0] } }, {}, /^sim\.initial_position/],
    ['a non-loopback host without a token', { web: { host: '0.0.0.0' } }, {}, /^web\.token: required/],
    ['a token with whitespace', { web: { token: 'a b' } }, {}, /^web\.token: /],
    [
      'a package reference that climbs out',
      { web: { joint_limits: 'pkg://armgate/../../etc/passwd' } },
      {},
      /climbs out/,
    ],
  ];
  for (const [name, overrides, files, pattern] of refused) {
    it(`refuses ${name}, naming the key`, async () => {
      let extra = files;
      if (files['limits.yaml'] === '') {
        const supplied = await readFile(path.join(PROJECT_ROOT, 'share/armgate/config/joint_limits.yaml'), 'utf8');
        extra = {
          'limits.yaml': supplied.replace(
            /(joint3:\n(?:.*\n)*?\s+min_position: )-2\.97\n(\s+max_position: )2\.97/,
            '$11\n$2-1',
          ),
        };
      }
      assert.match(await failure(overrides, extra), pattern);
    });
  }

  it('accepts loopback hosts without a token', async () => {
    for (const host of ['localhost', '127.0.0.1', '127.1.2.3', '::1']) {
      assert.equal(isLoopbackHost(host), true, host);
      const result = await load({ web: { host } });
      assert.ok(result.ok, host);
    }
    assert.equal(isLoopbackHost('0.0.0.0'), false);
    assert.equal(isLoopbackHost('192.168.1.2'), false);
  });

  it('takes ARMGATE_TOKEN over web.token', async () => {
    const result = await load(
      { web: { host: '0.0.0.0', token: 'file-token-0123456789' } },
      {},
      { ARMGATE_TOKEN: 'env-token-0123456789' },
    );
    assert.ok(result.ok && result.value.kind === 'serve');
    assert.equal(result.value.config.web.token, 'env-token-0123456789');
  });

  it('refuses an admin token shorter than 16 characters off loopback, naming its key; on loopback it is a notice', async () => {
    const short = await load({ web: { host: '0.0.0.0', token: 'fifteen-chars-x' } });
    assert.ok(!short.ok);
    assert.match(short.error, /^web\.token: expected at least 16 characters when web\.host is '0\.0\.0\.0'/);
    assert.doesNotMatch(short.error, /fifteen/, 'the token is never echoed');
    const env = await load({ web: { host: '192.168.1.2' } }, {}, { ARMGATE_TOKEN: 'short' });
    assert.ok(!env.ok);
    assert.match(env.error, /^ARMGATE_TOKEN: expected at least 16 characters/);
    const sixteen = await load({ web: { host: '0.0.0.0', token: 'sixteen-chars-xx' } });
    assert.ok(sixteen.ok, sixteen.ok ? '' : sixteen.error);
    const loopback = await load({ web: { host: '127.0.0.1', token: 'short' } });
    assert.ok(loopback.ok && loopback.value.kind === 'serve');
    assert.ok(
      loopback.value.config.notices.some((n) =>
        /^web\.token has 5 characters; it is accepted on loopback only/.test(n),
      ),
      loopback.value.config.notices.join(' | '),
    );
    const huge = await load({ web: { token: 'x'.repeat(4097) } });
    assert.ok(!huge.ok);
    assert.match(huge.error, /^web\.token: at most 4096 characters/);
  });

  it('reports web.enabled false as disabled', async () => {
    const result = await load({ web: { enabled: false } });
    assert.deepEqual(result, { ok: true, value: { kind: 'disabled' } });
  });

  it('applies the --port override', async () => {
    const s = await writeSettings();
    try {
      const result = await loadConfig(s.file, { env: {}, portOverride: 0 });
      assert.ok(result.ok && result.value.kind === 'serve');
      assert.equal(result.value.config.web.port, 0);
    } finally {
      await s.cleanup();
    }
  });

  it("reads a file's text as it is now (the same text again, another one, back), whatever a caller did to what it got", async () => {
    const bundledLimits = await readFile(path.join(PROJECT_ROOT, 'share/armgate/config/joint_limits.yaml'), 'utf8');
    const s = await writeSettings(
      { web: { port: 8101, joint_limits: './limits.yaml' } },
      {
        'limits.yaml': bundledLimits,
      },
    );
    const loadNow = async () => {
      const result = await loadConfig(s.file, { env: {} });
      assert.ok(result.ok && result.value.kind === 'serve', result.ok ? '' : result.error);
      return result.value.config;
    };
    /** Changes every number, string and list reachable from `value` (what a careless caller might do). */
    const scribble = (value: unknown): void => {
      if (Array.isArray(value)) {
        value.forEach((item, i) => {
          if (typeof item === 'number') value[i] = -1;
          else if (typeof item === 'string') value[i] = 'scribbled';
          else scribble(item);
        });
        value.push('scribbled');
      } else if (typeof value === 'object' && value !== null)
        for (const [key, item] of Object.entries(value)) {
          if (typeof item === 'number') (value as Record<string, unknown>)[key] = -1;
          else if (typeof item === 'string') (value as Record<string, unknown>)[key] = 'scribbled';
          else scribble(item);
        }
    };
    try {
      const first = await loadNow();
      const kept = structuredClone(first);
      assert.equal(first.web.port, 8101);
      scribble(first);
      assert.deepEqual(await loadNow(), kept, 'the same text again: the same settings, untouched by the scribbles');
      await writeFile(s.file, settingsYaml({ web: { port: 8102, joint_limits: './limits.yaml' } }));
      await writeFile(
        path.join(s.dir, 'limits.yaml'),
        bundledLimits.replace('max_velocity: 1.71', 'max_velocity: 1.5'),
      );
      const changed = await loadNow();
      assert.equal(changed.web.port, 8102);
      assert.equal(changed.limits.maxVelRadS[0], 1.5);
      await writeFile(s.file, settingsYaml({ web: { port: 8101, joint_limits: './limits.yaml' } }));
      await writeFile(path.join(s.dir, 'limits.yaml'), bundledLimits);
      assert.deepEqual(await loadNow(), kept, 'the first texts again');
    } finally {
      await s.cleanup();
    }
  });
});

describe('file references', () => {
  it('resolves pkg:// and package:// through the bundled packages', async () => {
    for (const scheme of ['pkg', 'package']) {
      const r = await resolveFileRef(`${scheme}://armgate/config/endpoints.yaml`, '/', '');
      assert.deepEqual(r, { ok: true, value: path.join(PROJECT_ROOT, 'share/armgate/config/endpoints.yaml') });
    }
  });

  it('searches AMENT_PREFIX_PATH prefixes before the bundled packages', async () => {
    const prefix = await mkdtemp(path.join(tmpdir(), 'armgate-prefix-'));
    try {
      await mkdir(path.join(prefix, 'share/armgate/config'), { recursive: true });
      await writeFile(path.join(prefix, 'share/armgate/config/joint_limits.yaml'), 'x: 1\n');
      const r = await resolveFileRef('pkg://armgate/config/joint_limits.yaml', '/', `/nonexistent:${prefix}`);
      assert.deepEqual(r, { ok: true, value: path.join(prefix, 'share/armgate/config/joint_limits.yaml') });
    } finally {
      await rm(prefix, { recursive: true, force: true });
    }
  });

  it('resolves plain relative paths against the referring folder, and refuses unknown schemes', async () => {
    const r = await resolveFileRef('config/endpoints.yaml', path.join(PROJECT_ROOT, 'share/armgate'), '');
    assert.ok(r.ok);
    const bad = await resolveFileRef('http://example.com/x.yaml', '/', '');
    assert.equal(bad.ok, false);
  });

  it('confines paths under a root', () => {
    assert.deepEqual(confineUnder('/data/bags', 'run1'), { ok: true, value: '/data/bags/run1' });
    for (const outside of ['../x', '/etc/x', 'a/../../x', '', '.'])
      assert.equal(confineUnder('/data/bags', outside).ok, false, outside);
  });
});
