/**
 * A settings file for a test, without the app: what tests of the command line, of start-up and of the settings need
 * (importing tests/support/server.ts loads the whole app through tsx, ~1.2 s of CPU per test process).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { PROJECT_ROOT } from '../../lib/settings/resolve.ts';

export { PROJECT_ROOT };

/** Nested settings overrides, merged over the bundled settings.yaml. */
export type SettingsOverrides = Record<string, Record<string, unknown>>;

/** The web block of the test settings: loopback, an ephemeral port, no token, the bundled endpoints and limits. */
export const TEST_WEB = {
  enabled: true,
  host: '127.0.0.1',
  port: 0,
  token: '',
  endpoints: 'pkg://armgate/config/endpoints.yaml',
  joint_limits: 'pkg://armgate/config/joint_limits.yaml',
} as const;

/** The bundled settings with `overrides` merged block by block, as a YAML document. */
export function settingsYaml(overrides: SettingsOverrides = {}): string {
  const base: SettingsOverrides = {
    web: { ...TEST_WEB },
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
