import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Config, loadConfig } from '../../lib/settings/load.ts';
import { PROJECT_ROOT, type SettingsOverrides, settingsYaml, writeSettings } from './settings-file.ts';
import {
  type Armgate,
  createArmgate,
  type RunningServer,
  type StartOptions,
  startServer,
} from '../../lib/server/start.ts';
import { catalog } from '../../handlers/index.ts';
import type { Catalog } from '../../lib/core/operation.ts';

/** Loads a settings document (YAML) through the real loader, from a file in a temp folder; throws on errors. */
export async function loadTestSettings(yamlText: string): Promise<Config> {
  const dir = await mkdtemp(path.join(tmpdir(), 'armgate-test-'));
  try {
    const file = path.join(dir, 'settings.yaml');
    await writeFile(file, yamlText);
    const loaded = await loadConfig(file, { env: {} });
    if (!loaded.ok) throw new Error(loaded.error);
    if (loaded.value.kind !== 'serve') throw new Error('web disabled');
    return loaded.value.config;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * `config` with its taught positions in a folder of their own (the settings' folder of {@link testConfig} is gone once
 * they are loaded), and the cleanup that removes the folder (call it when the app is closed).
 */
export async function withOwnPositionsFile(config: Config): Promise<{ config: Config; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'armgate-test-positions-'));
  return {
    config: { ...config, positions: { file: path.join(dir, 'positions.yaml'), taught: [] } },
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}

/** The test settings (the bundled ones with `overrides`: {@link settingsYaml}) through the real loader. */
export function testConfig(overrides: SettingsOverrides = {}): Promise<Config> {
  return loadTestSettings(settingsYaml(overrides));
}

/** The request log lines an app wrote (captured instead of printed). */
type Logs = Record<string, string | number>[];

/** A live server on an ephemeral port with request logging captured instead of printed. */
export interface TestServer extends RunningServer {
  readonly logs: Logs;
}

/** An app in memory (no socket) with request logging captured: `app.request(path, init)`. */
export interface TestApp extends Armgate {
  readonly logs: Logs;
}

/** The one test-app builder: armgate with the test settings and `overrides`, built by `build`, its log captured. */
async function buildTestApp<A extends Armgate>(
  build: (config: Config, served: Catalog, options: StartOptions) => Promise<A>,
  overrides: SettingsOverrides,
  options: Omit<StartOptions, 'log'>,
): Promise<A & { readonly logs: Logs }> {
  const own = await withOwnPositionsFile(await testConfig(overrides));
  const config = own.config;
  const logs: Logs = [];
  let app: A;
  try {
    app = await build(config, catalog, { ...options, log: (fields) => logs.push(fields) });
  } catch (e) {
    await own.cleanup();
    throw e;
  }
  const close = app.close.bind(app);
  return Object.assign(app, {
    logs,
    close: () => close().finally(own.cleanup),
  });
}

/** Starts armgate on 127.0.0.1:0 with `overrides` (and start options other than the log); close it with `server.close()`. */
export function startTestServer(
  overrides: SettingsOverrides = {},
  options: Omit<StartOptions, 'log'> = {},
): Promise<TestServer> {
  return buildTestApp(startServer, overrides, options);
}

/**
 * Builds armgate with `overrides` without listening: requests go through `app.request(path, init)`, the same
 * admission, authentication, routes and scheduling as the server's, in memory. Close it with `app.close()`.
 */
export function createTestApp(
  overrides: SettingsOverrides = {},
  options: Omit<StartOptions, 'log'> = {},
): Promise<TestApp> {
  return buildTestApp(createArmgate, overrides, options);
}

export { PROJECT_ROOT, type SettingsOverrides, settingsYaml, writeSettings };
