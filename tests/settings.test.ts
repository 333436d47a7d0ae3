import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { parse as parseYaml, stringify } from 'yaml';
import { parseJointLimits } from '../lib/robot/limits.ts';
import { parseGroupStates } from '../lib/robot/srdf.ts';
import { type Config, isLoopbackHost, type LoadOptions, loadConfig } from '../lib/settings/load.ts';
import { confineUnder, resolveFileRef } from '../lib/settings/resolve.ts';
import { PROJECT_ROOT, type SettingsOverrides, writeSettings } from './support/server.ts';
import { JOINTS } from './support/arm.ts';

/** web.limits' documented defaults (docs/settings.md). */
const DEFAULT_LIMITS = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 300_000,
  bodyGraceMs: 5000,
  bodyMinBytesPerS: 1024,
  maxConnections: 2048,
  maxConnectionsPerClient: 256,
  maxEventClients: 1024,
  eventStallMs: 30_000,
  maxUploads: 16,
  retryAfterS: 2,
  lingeringTimeMs: 10_000,
  lingeringTimeoutMs: 2000,
  tokenGuessBurst: 10,
  tokenGuessRefillS: 1,
};

const SHARE = path.join(PROJECT_ROOT, 'share', 'armgate');
const BUNDLED_LIMITS = path.join(SHARE, 'config', 'joint_limits.yaml');
const BUNDLED_ENDPOINTS = path.join(SHARE, 'config', 'endpoints.yaml');
const BUNDLED_SRDF = path.join(SHARE, 'srdf', 'iiwa7.srdf');

type Files = Record<string, string>;

/** Loads settings written into a fresh temp folder (with `files` beside them); always cleans up. */
async function load(overrides: SettingsOverrides, files: Files = {}, options: LoadOptions = { env: {} }) {
  const s = await writeSettings(overrides, files);
  try {
    return await loadConfig(s.file, options);
  } finally {
    await s.cleanup();
  }
}

async function loadServe(
  overrides: SettingsOverrides,
  files: Files = {},
  options: LoadOptions = { env: {} },
): Promise<Config> {
  const result = await load(overrides, files, options);
  if (!result.ok) assert.fail(`expected the settings to load, got: ${result.error}`);
  if (result.value.kind !== 'serve') assert.fail('expected kind serve, got disabled');
  return result.value.config;
}

async function loadError(
  overrides: SettingsOverrides,
  files: Files = {},
  options: LoadOptions = { env: {} },
): Promise<string> {
  const result = await load(overrides, files, options);
  if (result.ok) assert.fail(`expected the settings to be refused, got kind ${result.value.kind}`);
  return result.error;
}

/** The bundled joint_limits.yaml as a plain object, for edited copies. */
async function bundledLimitsDoc(): Promise<
  { joint_limits: Record<string, Record<string, unknown>> } & Record<string, unknown>
> {
  return parseYaml(await readFile(BUNDLED_LIMITS, 'utf8'));
}

/** A copy of the bundled limits with `joint`'s position limits replaced. */
async function limitsYamlWith(joint: string, min: number, max: number): Promise<string> {
  const doc = await bundledLimitsDoc();
  const entry = doc.joint_limits[joint];
  assert.ok(entry, `bundled limits name ${joint}`);
  entry.min_position = min;
  entry.max_position = max;
  return stringify(doc);
}

async function withTempDir<T>(prefix: string, body: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(path.join(tmpdir(), prefix));
  try {
    return await body(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('loadConfig: bundled defaults', () => {
  it('loads settings.yaml as the simulated arm on 127.0.0.1:8007 without a token', async () => {
    const result = await loadConfig(path.join(PROJECT_ROOT, 'settings.yaml'), { env: {} });
    if (!result.ok) assert.fail(result.error);
    assert.equal(result.value.kind, 'serve');
    if (result.value.kind !== 'serve') return;
    const c = result.value.config;
    assert.equal(c.settingsFile, path.join(PROJECT_ROOT, 'settings.yaml'));
    assert.equal(c.robot.backend, 'sim');
    assert.deepEqual(c.web, {
      host: '127.0.0.1',
      port: 8007,
      token: undefined,
      allowedHosts: [],
      corsOrigins: [],
      tokens: [],
      limits: DEFAULT_LIMITS,
    });
    assert.equal(c.sequences.bagRoot, path.join(PROJECT_ROOT, 'bags'));
    assert.deepEqual(Object.keys(c.robot.positionDescriptions), ['home', 'work', 'transport']);
    assert.equal(c.sim.initial_position, 'work');
    assert.match(c.robotDescriptionXml, /<robot\b/);
  });

  it('reads the 7 bundled joint limits with their position and velocity bounds', async () => {
    const result = await loadConfig(path.join(PROJECT_ROOT, 'settings.yaml'), { env: {} });
    if (!result.ok || result.value.kind !== 'serve') return assert.fail('bundled settings must load');
    const l = result.value.config.limits;
    assert.deepEqual(l.jointNames, [...JOINTS]);
    assert.deepEqual(l.maxRad, [2.97, 2.1, 2.97, 2.1, 2.97, 2.1, 3.05]);
    assert.deepEqual(l.minRad, [-2.97, -2.1, -2.97, -2.1, -2.97, -2.1, -3.05]);
    assert.deepEqual(l.maxVelRadS, [1.71, 1.71, 1.75, 2.27, 2.44, 3.14, 3.14]);
    assert.deepEqual(l.maxJerkRadS3, [85, 85, 87, 113, 122, 157, 157]);
    assert.deepEqual(l.cartesian, { maxTransVelMS: 1, maxTransAccMS2: 2.25, maxTransDecMS2: 5, maxRotVelRadS: 1.57 });
  });

  it('reads the group states home, work and transport from the bundled SRDF', async () => {
    const result = await loadConfig(path.join(PROJECT_ROOT, 'settings.yaml'), { env: {} });
    if (!result.ok || result.value.kind !== 'serve') return assert.fail('bundled settings must load');
    const states = result.value.config.groupStates;
    assert.deepEqual(
      states?.map((g) => g.name),
      ['home', 'work', 'transport'],
    );
    assert.deepEqual(states?.[0]?.jointsRad, [0, 0, 0, 0, 0, 0, 0]);
    assert.deepEqual(states?.[1]?.jointsRad, [0, 0, 0, -1.57, 0, 1.57, 0]);
    assert.ok(states?.every((g) => g.group === 'iiwa_arm'));
  });

  it('fills every armgate block from defaults when the settings file is empty', async () => {
    const s = await writeSettings();
    let result: Awaited<ReturnType<typeof loadConfig>>;
    try {
      await writeFile(s.file, '');
      result = await loadConfig(s.file, { env: {} });
    } finally {
      await s.cleanup();
    }
    if (!result.ok || result.value.kind !== 'serve') return assert.fail(result.ok ? 'disabled' : result.error);
    const c = result.value.config;
    assert.deepEqual(c.web, {
      host: '127.0.0.1',
      port: 8007,
      token: undefined,
      allowedHosts: [],
      corsOrigins: [],
      tokens: [],
      limits: DEFAULT_LIMITS,
    });
    assert.equal(c.robot.backend, 'sim');
    assert.equal(c.limits.jointNames.length, 7);
  });

  it('keeps unknown top-level blocks, which belong to the rest of the stack', async () => {
    const c = await loadServe({ ros: { domain_id: 7 } });
    assert.equal(c.robot.backend, 'sim');
  });
});

describe('loadConfig: file references', () => {
  const refs: [string, string][] = [
    ['pkg://', 'pkg://armgate/config/joint_limits.yaml'],
    ['package://', 'package://armgate/config/joint_limits.yaml'],
  ];
  for (const [scheme, ref] of refs) {
    it(`resolves ${scheme}armgate/... to the bundled share/ folder`, async () => {
      const c = await loadServe({ web: { joint_limits: ref, endpoints: ref.replace('joint_limits', 'endpoints') } });
      assert.deepEqual(c.limits.maxVelRadS, [1.71, 1.71, 1.75, 2.27, 2.44, 3.14, 3.14]);
    });
  }

  it('searches AMENT_PREFIX_PATH prefixes before the bundled packages', async () => {
    await withTempDir('armgate-prefix-', async (prefix) => {
      const config = path.join(prefix, 'share', 'armgate', 'config');
      await mkdir(config, { recursive: true });
      await writeFile(path.join(config, 'joint_limits.yaml'), await limitsYamlWith('joint1', -1.25, 1.5));
      const c = await loadServe({}, {}, { env: { AMENT_PREFIX_PATH: `/nonexistent-armgate-prefix:${prefix}` } });
      assert.equal(c.limits.minRad[0], -1.25);
      assert.equal(c.limits.maxRad[0], 1.5);
      // Files the prefix lacks still come from the bundled packages.
      assert.deepEqual(
        c.groupStates?.map((g) => g.name),
        ['home', 'work', 'transport'],
      );
    });
  });

  it('takes the first AMENT_PREFIX_PATH prefix that has the file', async () => {
    await withTempDir('armgate-prefixes-', async (root) => {
      const prefixes = ['a', 'b'].map((name) => path.join(root, name));
      for (const [i, prefix] of prefixes.entries()) {
        const config = path.join(prefix, 'share', 'armgate', 'config');
        await mkdir(config, { recursive: true });
        await writeFile(path.join(config, 'joint_limits.yaml'), await limitsYamlWith('joint2', -1, 1 + i));
      }
      const c = await loadServe({}, {}, { env: { AMENT_PREFIX_PATH: prefixes.join(':') } });
      assert.equal(c.limits.maxRad[1], 1);
    });
  });

  it("resolves plain relative paths against the settings file's folder, not the working directory", async () => {
    const files = { 'my_limits.yaml': await limitsYamlWith('joint4', -0.5, 0.75) };
    for (const ref of ['my_limits.yaml', './my_limits.yaml', 'sub/../my_limits.yaml']) {
      const c = await loadServe({ web: { joint_limits: ref } }, files);
      assert.deepEqual([c.limits.minRad[3], c.limits.maxRad[3]], [-0.5, 0.75], ref);
    }
  });

  it("resolves references inside an endpoints file against that file's folder", async () => {
    // The bundled file leaves srdf to the backend's default; this one names a file beside it.
    const endpoints = `${await readFile(BUNDLED_ENDPOINTS, 'utf8')}\nsrdf:\n  file: ./cell.srdf\n`;
    const srdf = (await readFile(BUNDLED_SRDF, 'utf8')).replace('name="transport"', 'name="park"');
    const c = await loadServe(
      { web: { endpoints: './endpoints.yaml' }, sim: { initial_position: 'park' } },
      { 'endpoints.yaml': endpoints, 'cell.srdf': srdf },
    );
    assert.deepEqual(
      c.groupStates?.map((g) => g.name),
      ['home', 'work', 'park'],
    );
  });

  it('refuses pkg://armgate/../../etc/passwd as climbing out of the package, naming the key', async () => {
    const error = await loadError({ web: { joint_limits: 'pkg://armgate/../../etc/passwd' } });
    assert.match(error, /^web\.joint_limits: /);
    assert.match(error, /climbs out of package 'armgate'/);
  });
});

describe('loadConfig: invalid settings stop loading with a message naming the key', () => {
  const refused: { name: string; overrides: SettingsOverrides; files?: Files; message: RegExp }[] = [
    {
      name: 'rejects an unknown backend naming robot.backend',
      overrides: { robot: { backend: 'ros3' } },
      message: /^robot\.backend: expected 'sim' or 'ros2'/,
    },
    {
      name: 'rejects a web.tokens token shorter than 16 characters, naming it',
      overrides: { web: { tokens: [{ name: 'viewer', token: 'short-token', role: 'read' }] } },
      message: /^web\.tokens\.0\.token: expected at least 16 characters/,
    },
    {
      name: 'rejects an unknown role in web.tokens',
      overrides: { web: { tokens: [{ name: 'viewer', token: 'viewer-token-0123456789', role: 'root' }] } },
      message: /^web\.tokens\.0\.role: expected 'read', 'operate' or 'admin'/,
    },
    {
      name: 'rejects two web.tokens of the same name',
      overrides: {
        web: {
          tokens: [
            { name: 'viewer', token: 'viewer-token-0123456789', role: 'read' },
            { name: 'viewer', token: 'viewer-token-9876543210', role: 'operate' },
          ],
        },
      },
      message: /^web\.tokens\.1\.name: 'viewer' is used twice/,
    },
    {
      name: 'rejects the same token twice in web.tokens without printing it',
      overrides: {
        web: {
          tokens: [
            { name: 'viewer', token: 'same-token-0123456789', role: 'read' },
            { name: 'operator', token: 'same-token-0123456789', role: 'operate' },
          ],
        },
      },
      message: /^web\.tokens\.1\.token: the same token as another entry; every token must be different$/,
    },
    {
      name: 'rejects a safety.workspace whose min is not below its max',
      overrides: { safety: { workspace: { min: [0, 0, 0.5], max: [1, 1, 0.5] } } },
      message: /^safety\.workspace: expected min below max on every axis/,
    },
    {
      name: 'rejects an audit.max_bytes below 4096',
      overrides: { audit: { path: 'audit.jsonl', max_bytes: 100 } },
      message: /^audit\.max_bytes: expected at least 4096/,
    },
    {
      name: 'rejects web.port -1 naming web.port',
      overrides: { web: { port: -1 } },
      message: /^web\.port: expected 0\.\.65535/,
    },
    {
      name: 'rejects web.port 70000 naming web.port',
      overrides: { web: { port: 70000 } },
      message: /^web\.port: expected 0\.\.65535/,
    },
    {
      name: 'rejects web.limits.request_timeout_s shorter than headers_timeout_s, naming both',
      overrides: { web: { limits: { headers_timeout_s: 20, request_timeout_s: 10 } } },
      message: /^web\.limits\.request_timeout_s: 10 s is shorter than web\.limits\.headers_timeout_s \(20 s\)/,
    },
    {
      name: 'rejects web.port "abc" naming web.port',
      overrides: { web: { port: 'abc' } },
      message: /^web\.port: expected a port number/,
    },
    {
      name: 'rejects a fractional web.port naming web.port',
      overrides: { web: { port: 80.5 } },
      message: /^web\.port: expected an integer port/,
    },
    {
      name: 'rejects a missing endpoints file naming web.endpoints',
      overrides: { web: { endpoints: './missing-endpoints.yaml' } },
      message: /^web\.endpoints: cannot read '.*missing-endpoints\.yaml'/,
    },
    {
      name: 'rejects a missing joint limits file naming web.joint_limits',
      overrides: { web: { joint_limits: './missing-limits.yaml' } },
      message: /^web\.joint_limits: cannot read '.*missing-limits\.yaml'/,
    },
    {
      name: 'rejects a package reference that no prefix has, naming web.joint_limits',
      overrides: { web: { joint_limits: 'pkg://no_such_pkg/limits.yaml' } },
      message: /^web\.joint_limits: cannot find 'pkg:\/\/no_such_pkg\/limits\.yaml'/,
    },
    {
      name: 'rejects an unsupported scheme naming web.endpoints',
      overrides: { web: { endpoints: 'https://example.com/endpoints.yaml' } },
      message: /^web\.endpoints: unsupported scheme/,
    },
    {
      name: 'rejects a malformed joint limits file naming web.joint_limits and the file',
      overrides: { web: { joint_limits: './limits.yaml' } },
      files: { 'limits.yaml': 'joint_limits: [unclosed\n' },
      message: /^web\.joint_limits: malformed YAML in '.*limits\.yaml'/,
    },
    {
      name: 'rejects a malformed endpoints file naming web.endpoints and the file',
      overrides: { web: { endpoints: './endpoints.yaml' } },
      files: { 'endpoints.yaml': 'planning_group: {unclosed\n' },
      message: /^web\.endpoints: malformed YAML in '.*endpoints\.yaml'/,
    },
    {
      name: 'rejects an unknown key in the endpoints file naming it',
      overrides: { web: { endpoints: './endpoints.yaml' } },
      files: { 'endpoints.yaml': 'planing_group: iiwa_arm\n' },
      message: /^web\.endpoints\.planing_group: /,
    },
    {
      name: 'rejects a limits file missing a joint, naming the joint',
      overrides: { web: { joint_limits: './limits.yaml' } },
      files: {
        'limits.yaml':
          'joint_limits:\n  joint1: {min_position: -1, max_position: 1, max_velocity: 1, max_acceleration: 1}\n',
      },
      message: /^web\.joint_limits: joint_limits\.joint2: missing/,
    },
    {
      name: 'rejects an unknown key in the web block naming web.tokn',
      overrides: { web: { tokn: 'secret' } },
      message: /^web\.tokn: /,
    },
    {
      name: 'rejects an unknown key in the sim block naming sim.time_scal',
      overrides: { sim: { time_scal: 2 } },
      message: /^sim\.time_scal: /,
    },
    {
      name: 'rejects an unknown key in the sequences block naming sequences.bagroot',
      overrides: { sequences: { bagroot: './x' } },
      message: /^sequences\.bagroot: /,
    },
    {
      name: 'rejects an unknown sim.initial_position, listing the known names',
      overrides: { sim: { initial_position: 'nowhere' } },
      message: /^sim\.initial_position: unknown named position 'nowhere' \(known: home, work, transport\)/,
    },
    {
      name: 'rejects 6 initial joint angles naming sim.initial_position',
      overrides: { sim: { initial_position: [0, 0, 0, 0, 0, 0] } },
      message: /^sim\.initial_position: /,
    },
    {
      name: 'rejects initial joint angles outside the limits naming sim.initial_position',
      overrides: { sim: { initial_position: [0, 3, 0, 0, 0, 0, 0] } },
      message: /^sim\.initial_position: joint 2 value 3 is outside its limits/,
    },
    {
      name: 'rejects a time scale out of range naming sim.time_scale',
      overrides: { sim: { time_scale: 0 } },
      message: /^sim\.time_scale: /,
    },
    {
      name: 'rejects web.enabled that is not a boolean naming web.enabled',
      overrides: { web: { enabled: 'yes please' } },
      message: /^web\.enabled: expected true or false/,
    },
  ];
  for (const { name, overrides, files, message } of refused) {
    it(name, async () => {
      assert.match(await loadError(overrides, files), message);
    });
  }

  it('rejects a limits file with min > max, naming the joint and saying min_position is greater', async () => {
    const error = await loadError(
      { web: { joint_limits: './limits.yaml' } },
      { 'limits.yaml': await limitsYamlWith('joint3', 1, -1) },
    );
    assert.match(error, /^web\.joint_limits: joint_limits\.joint3: min_position 1 is greater than max_position -1/);
  });

  const malformedSettings: [string, string][] = [
    ['an unclosed flow sequence', 'web: [unclosed\n'],
    ['a duplicate key', 'web:\n  port: 1\n  port: 2\n'],
    ['a tab-indented block', 'web:\n\thost: 127.0.0.1\n'],
  ];
  for (const [what, text] of malformedSettings) {
    it(`rejects a settings file with ${what} as malformed YAML, naming the file`, async () => {
      const s = await writeSettings();
      try {
        await writeFile(s.file, text);
        const result = await loadConfig(s.file, { env: {} });
        if (result.ok) return assert.fail('expected malformed YAML to be refused');
        assert.ok(result.error.startsWith(`settings: malformed YAML in '${s.file}'`), result.error);
      } finally {
        await s.cleanup();
      }
    });
  }

  it('rejects a settings file that cannot be read, naming the file', async () => {
    await withTempDir('armgate-nofile-', async (dir) => {
      const file = path.join(dir, 'absent.yaml');
      const result = await loadConfig(file, { env: {} });
      if (result.ok) return assert.fail('expected a missing settings file to be refused');
      assert.equal(result.error, `settings: cannot read '${file}' (ENOENT)`);
    });
  });
});

describe('loadConfig: host and token', () => {
  it('rejects a non-loopback host without a token, naming web.token', async () => {
    for (const host of ['0.0.0.0', '192.168.10.5', '::', 'robot-cell.example']) {
      const error = await loadError({ web: { host } });
      assert.match(error, /^web\.token: required when web\.host is /, host);
      assert.ok(error.includes(`'${host}'`), error);
    }
  });

  for (const host of ['localhost', '127.0.0.1', '127.1.2.3', '::1']) {
    it(`allows loopback host ${host} without a token`, async () => {
      const c = await loadServe({ web: { host } });
      assert.equal(c.web.host, host);
      assert.equal(c.web.token, undefined);
    });
  }

  it('accepts a non-loopback host with web.token set', async () => {
    const c = await loadServe({ web: { host: '0.0.0.0', token: 'file-token-0123456789' } });
    assert.equal(c.web.token, 'file-token-0123456789');
  });

  const envCases: {
    name: string;
    fileToken: string;
    envToken: string | undefined;
    host: string;
    expect: string | undefined;
  }[] = [
    {
      name: 'ARMGATE_TOKEN overrides web.token',
      fileToken: 'file-token-0123456789',
      envToken: 'env-token-0123456789',
      host: '127.0.0.1',
      expect: 'env-token-0123456789',
    },
    {
      name: 'ARMGATE_TOKEN alone allows a non-loopback host',
      fileToken: '',
      envToken: 'env-token-0123456789',
      host: '0.0.0.0',
      expect: 'env-token-0123456789',
    },
    {
      name: 'an empty ARMGATE_TOKEN leaves web.token in force',
      fileToken: 'file-token-0123456789',
      envToken: '',
      host: '0.0.0.0',
      expect: 'file-token-0123456789',
    },
    {
      name: 'no ARMGATE_TOKEN and no web.token means no authentication on loopback',
      fileToken: '',
      envToken: undefined,
      host: '127.0.0.1',
      expect: undefined,
    },
  ];
  for (const { name, fileToken, envToken, host, expect } of envCases) {
    it(name, async () => {
      const env = envToken === undefined ? {} : { ARMGATE_TOKEN: envToken };
      const c = await loadServe({ web: { host, token: fileToken } }, {}, { env });
      assert.equal(c.web.token, expect);
    });
  }

  it('reads ARMGATE_TOKEN only from the env option, not from process.env, when env is given', async () => {
    const saved = process.env.ARMGATE_TOKEN;
    process.env.ARMGATE_TOKEN = 'from-process-env';
    try {
      const c = await loadServe({ web: { token: '' } }, {}, { env: {} });
      assert.equal(c.web.token, undefined);
    } finally {
      if (saved === undefined) delete process.env.ARMGATE_TOKEN;
      else process.env.ARMGATE_TOKEN = saved;
    }
  });

  const spaced: [string, SettingsOverrides, Record<string, string>][] = [
    ['an inner space in web.token', { web: { token: 'ab cd' } }, {}],
    ['a trailing newline in web.token', { web: { token: 'abcd\n' } }, {}],
    ['a tab in web.token', { web: { token: 'ab\tcd' } }, {}],
    ['a space in ARMGATE_TOKEN', { web: { token: '' } }, { ARMGATE_TOKEN: 'env token' }],
  ];
  for (const [what, overrides, env] of spaced) {
    it(`rejects ${what}, naming web.token without echoing the token`, async () => {
      const error = await loadError(overrides, {}, { env });
      assert.equal(error, 'web.token: must not contain whitespace');
    });
  }
});

describe('loadConfig: outcome and overrides', () => {
  it('reports web.enabled false as {kind: disabled}', async () => {
    const result = await load({ web: { enabled: false } });
    assert.deepEqual(result, { ok: true, value: { kind: 'disabled' } });
  });

  for (const portOverride of [0, 9123, 65535]) {
    it(`applies portOverride ${portOverride} over web.port`, async () => {
      const c = await loadServe({ web: { port: 8007 } }, {}, { env: {}, portOverride });
      assert.equal(c.web.port, portOverride);
    });
  }

  it('uses web.port when no portOverride is given', async () => {
    const c = await loadServe({ web: { port: 8123 } });
    assert.equal(c.web.port, 8123);
  });

  it("resolves sequences.bag_root against the settings file's folder", async () => {
    const s = await writeSettings({ sequences: { bag_root: './recordings' } });
    try {
      const result = await loadConfig(s.file, { env: {} });
      if (!result.ok || result.value.kind !== 'serve') return assert.fail('expected the settings to load');
      assert.equal(result.value.config.sequences.bagRoot, path.join(s.dir, 'recordings'));
    } finally {
      await s.cleanup();
    }
  });
});

describe('resolveFileRef', () => {
  const bundled: [string, string][] = [
    ['pkg://armgate/config/endpoints.yaml', BUNDLED_ENDPOINTS],
    ['package://armgate/config/joint_limits.yaml', BUNDLED_LIMITS],
    ['package://armgate/srdf/iiwa7.srdf', BUNDLED_SRDF],
    ['pkg://armgate/config/../urdf/iiwa7.urdf', path.join(SHARE, 'urdf', 'iiwa7.urdf')],
  ];
  for (const [ref, expected] of bundled) {
    it(`resolves ${ref} to the bundled share/ folder`, async () => {
      assert.deepEqual(await resolveFileRef(ref, '/', ''), { ok: true, value: expected });
    });
  }

  it('searches AMENT_PREFIX_PATH prefixes in order, skipping those without the file, before the bundled packages', async () => {
    await withTempDir('armgate-ament-', async (root) => {
      const [empty, first, second] = ['empty', 'first', 'second'].map((name) => path.join(root, name));
      for (const prefix of [first, second]) {
        if (prefix === undefined) continue;
        await mkdir(path.join(prefix, 'share', 'armgate', 'config'), { recursive: true });
        await writeFile(path.join(prefix, 'share', 'armgate', 'config', 'joint_limits.yaml'), 'joint_limits: {}\n');
      }
      const ament = [empty, first, second].join(':');
      assert.deepEqual(await resolveFileRef('pkg://armgate/config/joint_limits.yaml', '/', ament), {
        ok: true,
        value: path.join(root, 'first', 'share', 'armgate', 'config', 'joint_limits.yaml'),
      });
      assert.deepEqual(await resolveFileRef('pkg://armgate/config/endpoints.yaml', '/', ament), {
        ok: true,
        value: BUNDLED_ENDPOINTS,
      });
    });
  });

  it('resolves plain relative paths against the given folder', async () => {
    assert.deepEqual(await resolveFileRef('config/endpoints.yaml', SHARE, ''), { ok: true, value: BUNDLED_ENDPOINTS });
    assert.deepEqual(await resolveFileRef('../armgate/srdf/iiwa7.srdf', path.join(SHARE, 'config', '..'), ''), {
      ok: true,
      value: BUNDLED_SRDF,
    });
    assert.deepEqual(await resolveFileRef(BUNDLED_SRDF, '/somewhere/else', ''), { ok: true, value: BUNDLED_SRDF });
  });

  const refusedRefs: [string, RegExp][] = [
    ['pkg://armgate/../../etc/passwd', /climbs out of package 'armgate'/],
    ['package://armgate/config/../../../etc/passwd', /climbs out of package 'armgate'/],
    ['pkg://armgate//etc/passwd', /climbs out of package 'armgate'/],
    ['pkg://armgate/config/missing.yaml', /^cannot find 'pkg:\/\/armgate\/config\/missing\.yaml' \(looked in /],
    ['http://example.com/endpoints.yaml', /^unsupported scheme in 'http:\/\/example\.com\/endpoints\.yaml'/],
    ['file:///etc/passwd', /^unsupported scheme/],
    ['config/missing.yaml', /^cannot read '.*config\/missing\.yaml'/],
    ['config/endpoints.yaml\0.txt', /NUL byte/],
  ];
  for (const [ref, message] of refusedRefs) {
    it(`refuses ${JSON.stringify(ref)}`, async () => {
      const result = await resolveFileRef(ref, SHARE, '');
      if (result.ok) return assert.fail(`expected ${ref} to be refused, got ${result.value}`);
      assert.match(result.error, message);
    });
  }
});

describe('confineUnder', () => {
  const inside: [string, string][] = [
    ['run1.mcap', '/data/bags/run1.mcap'],
    ['cell/a/run2', '/data/bags/cell/a/run2'],
    ['./x/../y', '/data/bags/y'],
    ['/data/bags/abs', '/data/bags/abs'],
  ];
  for (const [requested, expected] of inside) {
    it(`keeps ${JSON.stringify(requested)} under the root`, () => {
      assert.deepEqual(confineUnder('/data/bags', requested), { ok: true, value: expected });
    });
  }

  const outside = ['../x', '/etc/passwd', 'a/../../x', '', '.', '/data/bagsX/y', '/data', 'a\0b'];
  for (const requested of outside) {
    it(`refuses ${JSON.stringify(requested)} as outside the root`, () => {
      assert.equal(confineUnder('/data/bags', requested).ok, false);
    });
  }
});

describe('isLoopbackHost', () => {
  const table: [string, boolean][] = [
    ['localhost', true],
    ['LOCALHOST', true],
    ['127.0.0.1', true],
    ['127.1.2.3', true],
    ['127.255.255.254', true],
    ['::1', true],
    ['[::1]', true],
    ['0:0:0:0:0:0:0:1', true],
    ['0.0.0.0', false],
    ['::', false],
    ['192.168.1.2', false],
    ['128.0.0.1', false],
    ['10.127.0.1', false],
    ['localhost.example.com', false],
    ['127.0.0.1.nip.io', false],
    ['example.com', false],
    ['', false],
  ];
  for (const [host, expected] of table) {
    it(`says ${JSON.stringify(host)} is ${expected ? '' : 'not '}loopback`, () => {
      assert.equal(isLoopbackHost(host), expected);
    });
  }
});

describe('parseJointLimits', () => {
  const entry = (min: number, max: number) => ({
    min_position: min,
    max_position: max,
    max_velocity: 1,
    max_acceleration: 2,
  });
  const allJoints = (patch: Record<string, unknown> = {}) => ({
    joint_limits: { ...Object.fromEntries(JOINTS.map((j) => [j, entry(-1, 1)])), ...patch },
  });

  it('reads the bundled file in the given joint order', async () => {
    const doc = await bundledLimitsDoc();
    const order = ['joint7', 'joint1', 'joint2', 'joint3', 'joint4', 'joint5', 'joint6'];
    const result = parseJointLimits(doc, order);
    if (!result.ok) return assert.fail(result.error);
    assert.deepEqual(result.value.jointNames, order);
    assert.deepEqual(result.value.maxRad, [3.05, 2.97, 2.1, 2.97, 2.1, 2.97, 2.1]);
    assert.deepEqual(result.value.maxVelRadS, [3.14, 1.71, 1.71, 1.75, 2.27, 2.44, 3.14]);
  });

  it('defaults jerk to 10 x acceleration and the Cartesian limits to the Pilz defaults', () => {
    const result = parseJointLimits(allJoints(), JOINTS);
    if (!result.ok) return assert.fail(result.error);
    assert.deepEqual(result.value.maxJerkRadS3, Array(7).fill(20));
    assert.deepEqual(result.value.cartesian, {
      maxTransVelMS: 1,
      maxTransAccMS2: 2.25,
      maxTransDecMS2: 5,
      maxRotVelRadS: 1.57,
    });
  });

  it('accepts min == max (a locked joint)', () => {
    const result = parseJointLimits(allJoints({ joint5: entry(0.5, 0.5) }), JOINTS);
    assert.equal(result.ok, true);
  });

  const refused: [string, unknown, RegExp][] = [
    [
      'min > max, naming the joint',
      allJoints({ joint3: entry(1, -1) }),
      /^joint_limits\.joint3: min_position 1 is greater than max_position -1$/,
    ],
    [
      'a missing joint, naming it and the joints the file has',
      { joint_limits: { joint1: entry(-1, 1) } },
      /^joint_limits\.joint2: missing \(the file names joint1\)/,
    ],
    ['a file with no joint_limits map', { cartesian_limits: {} }, /^joint_limits: /],
    [
      'a non-numeric max_velocity',
      allJoints({ joint6: { ...entry(-1, 1), max_velocity: 'fast' } }),
      /^joint_limits\.joint6\.max_velocity: expected a number/,
    ],
    [
      'a zero max_acceleration',
      allJoints({ joint1: { ...entry(-1, 1), max_acceleration: 0 } }),
      /^joint_limits\.joint1\.max_acceleration: must be > 0/,
    ],
    [
      'a missing min_position',
      allJoints({ joint2: { max_position: 1, max_velocity: 1, max_acceleration: 1 } }),
      /^joint_limits\.joint2\.min_position: /,
    ],
    [
      'a non-positive max_trans_vel',
      { ...allJoints(), cartesian_limits: { max_trans_vel: -1 } },
      /^cartesian_limits\.max_trans_vel: must be > 0/,
    ],
  ];
  for (const [what, doc, message] of refused) {
    it(`rejects ${what}`, () => {
      const result = parseJointLimits(doc, JOINTS);
      if (result.ok) return assert.fail('expected the limits to be refused');
      assert.match(result.error, message);
    });
  }
});

describe('parseGroupStates', () => {
  const srdf = (body: string) =>
    `<?xml version="1.0"?>\n<robot name="r">\n<group name="iiwa_arm"/>\n<group name="tool"/>\n${body}\n</robot>\n`;
  const state = (name: string, group: string, values: (number | string)[]) =>
    `<group_state name="${name}" group="${group}">${values.map((v, i) => `<joint name="joint${i + 1}" value="${v}"/>`).join('')}</group_state>`;

  it('reads the bundled SRDF: home, work and transport of iiwa_arm', async () => {
    const result = parseGroupStates(await readFile(BUNDLED_SRDF, 'utf8'), 'iiwa_arm', JOINTS);
    if (!result.ok) return assert.fail(result.error);
    assert.deepEqual(
      result.value.map((g) => [g.name, g.jointsRad]),
      [
        ['home', [0, 0, 0, 0, 0, 0, 0]],
        ['work', [0, 0, 0, -1.57, 0, 1.57, 0]],
        ['transport', [0, -0.35, 0, 2, 0, -1.2, 0]],
      ],
    );
  });

  it("orders joints by the given names and ignores other groups' states and extra joints", () => {
    const xml = srdf(
      `${state('a', 'iiwa_arm', [1, 2, 3, 4, 5, 6, 7])}${state('b', 'tool', [0, 0, 0, 0, 0, 0, 0])}` +
        '<group_state name="c" group="iiwa_arm"><joint name="gripper" value="9"/>' +
        `${[7, 6, 5, 4, 3, 2, 1].map((v, i) => `<joint name="joint${i + 1}" value="${v}"/>`).join('')}</group_state>`,
    );
    const reversed = [...JOINTS].reverse();
    const result = parseGroupStates(xml, 'iiwa_arm', reversed);
    if (!result.ok) return assert.fail(result.error);
    assert.deepEqual(result.value, [
      { name: 'a', group: 'iiwa_arm', jointsRad: [7, 6, 5, 4, 3, 2, 1] },
      { name: 'c', group: 'iiwa_arm', jointsRad: [1, 2, 3, 4, 5, 6, 7] },
    ]);
  });

  it('returns no states when the group has none', () => {
    assert.deepEqual(parseGroupStates(srdf(''), 'iiwa_arm', JOINTS), { ok: true, value: [] });
  });

  const refused: [string, string, RegExp][] = [
    ['malformed XML', '<robot><group name="iiwa_arm"></robot>', /^malformed SRDF: /],
    ['a document without <robot>', '<?xml version="1.0"?><other/>', /^malformed SRDF: no <robot> element/],
    [
      'a missing planning group, listing the groups',
      srdf('').replace('"iiwa_arm"', '"arm"'),
      /^SRDF has no group 'iiwa_arm' \(groups: arm, tool\)/,
    ],
    [
      'a state missing a joint',
      srdf(state('short', 'iiwa_arm', [0, 0, 0, 0, 0, 0])),
      /^SRDF group_state 'short' has no finite value for joint7/,
    ],
    [
      'a state with a non-numeric value',
      srdf(state('odd', 'iiwa_arm', [0, 0, 'x', 0, 0, 0, 0])),
      /^SRDF group_state 'odd' has no finite value for joint3/,
    ],
  ];
  for (const [what, xml, message] of refused) {
    it(`rejects ${what}`, () => {
      const result = parseGroupStates(xml, 'iiwa_arm', JOINTS);
      if (result.ok) return assert.fail('expected the SRDF to be refused');
      assert.match(result.error, message);
    });
  }
});
