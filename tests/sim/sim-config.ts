/** The simulator's configuration from the bundled settings with overrides, without a server (tests of lib/sim). */
import { stringify } from 'yaml';
import type { Config } from '../../lib/settings/load.ts';
import { loadTestSettings } from '../support/server.ts';

/** Loads the bundled settings with `sim` overrides (and the bundled endpoints with `timeouts` overrides). */
export async function simConfig(
  sim: Record<string, unknown> = {},
  timeouts: Record<string, number> = {},
): Promise<Config> {
  const config = await loadTestSettings(stringify({ robot: { backend: 'sim' }, sim }));
  return { ...config, endpoints: { ...config.endpoints, timeouts: { ...config.endpoints.timeouts, ...timeouts } } };
}
