import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { type Config, loadConfig } from '../../lib/settings/load.ts';
import { PROJECT_ROOT } from '../../lib/settings/resolve.ts';
import {
  type Armgate,
  createArmgate,
  type RunningServer,
  type StartOptions,
  startServer,
} from '../../lib/server/start.ts';
import { catalog } from '../../handlers/index.ts';

/** Nested settings overrides, merged over the bundled settings.yaml. */
export type SettingsOverrides = Record<string, Record<string, unknown>>;

/** The bundled settings with `overrides` merged block by block, as a YAML document. */
export function settingsYaml(overrides: SettingsOverrides = {}): string {
  const base: SettingsOverrides = {
    web: {
      enabled: true,
      host: '127.0.0.1',
      port: 0,
      token: '',
      endpoints: 'pkg://armgate/config/endpoints.yaml',
      joint_limits: 'pkg://armgate/config/joint_limits.yaml',
    },
    robot: { backend: 'sim' },
    sim: { time_scale: 1, joint_state_rate_hz: 100, publish_joint_states: true, initial_position: 'work' },
    sequences: { bag_root: './bags' },
  };
  const merged: SettingsOverrides = {};
  for (const key of new Set([...Object.keys(base), ...Object.keys(overrides)])) {
    merged[key] = { ...(base[key] ?? {}), ...(overrides[key] ?? {}) };
  }
  return stringify(merged);
}

/** Writes a settings file into a fresh temporary folder; returns its path and a cleanup. */
export async function writeSettings(
  overrides: SettingsOverrides = {},
  extraFiles: Record<string, string> = {},
): Promise<{ file: string; dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'armgate-test-'));
  const file = path.join(dir, 'settings.yaml');
  await writeFile(file, settingsYaml(overrides));
  for (const [name, text] of Object.entries(extraFiles)) await writeFile(path.join(dir, name), text);
  return { file, dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** Loads a config through the real loader (settings file in a temp folder); throws on errors. */
export async function testConfig(overrides: SettingsOverrides = {}): Promise<Config> {
  const settings = await writeSettings(overrides);
  try {
    const loaded = await loadConfig(settings.file, { env: {} });
    if (!loaded.ok) throw new Error(loaded.error);
    if (loaded.value.kind !== 'serve') throw new Error('web disabled');
    return loaded.value.config;
  } finally {
    await settings.cleanup();
  }
}

/** A live server on an ephemeral port with request logging captured instead of printed. */
export interface TestServer extends RunningServer {
  readonly logs: Record<string, string | number>[];
}

/** Starts armgate on 127.0.0.1:0 with `overrides` (and start options other than the log); close it with `server.close()`. */
export async function startTestServer(
  overrides: SettingsOverrides = {},
  options: Omit<StartOptions, 'log'> = {},
): Promise<TestServer> {
  const config = await testConfig(overrides);
  const logs: Record<string, string | number>[] = [];
  const running = await startServer(config, catalog, { ...options, log: (fields) => logs.push(fields) });
  return Object.assign(running, { logs });
}

/** An app in memory (no socket) with request logging captured: `app.request(path, init)`. */
export interface TestApp extends Armgate {
  readonly logs: Record<string, string | number>[];
}

/**
 * Builds armgate with `overrides` without listening: requests go through `app.request(path, init)`, the same
 * admission, authentication, routes and scheduling as the server's, in memory. Close it with `app.close()`.
 */
export async function createTestApp(
  overrides: SettingsOverrides = {},
  options: Omit<StartOptions, 'log'> = {},
): Promise<TestApp> {
  const config = await testConfig(overrides);
  const logs: Record<string, string | number>[] = [];
  const app = await createArmgate(config, catalog, { ...options, log: (fields) => logs.push(fields) });
  return Object.assign(app, { logs });
}

export { PROJECT_ROOT };
