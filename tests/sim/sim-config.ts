/** The simulator's configuration from the bundled settings with overrides, without a server (tests of lib/sim). */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { type Config, loadConfig } from '../../lib/settings/load.ts';

/** Loads the bundled settings with `sim` overrides (and the bundled endpoints with `timeouts` overrides). */
export async function simConfig(
  sim: Record<string, unknown> = {},
  timeouts: Record<string, number> = {},
): Promise<Config> {
  const dir = await mkdtemp(path.join(tmpdir(), 'armgate-sim-'));
  try {
    const file = path.join(dir, 'settings.yaml');
    await writeFile(file, stringify({ robot: { backend: 'sim' }, sim }));
    const loaded = await loadConfig(file, { env: {} });
    if (!loaded.ok) throw new Error(loaded.error);
    if (loaded.value.kind !== 'serve') throw new Error('the web block is disabled');
    const config = loaded.value.config;
    return { ...config, endpoints: { ...config.endpoints, timeouts: { ...config.endpoints.timeouts, ...timeouts } } };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
