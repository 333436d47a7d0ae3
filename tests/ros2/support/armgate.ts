/**
 * armgate on `robot.backend: ros2` as its users start it: `server.ts` in its own process (the CLI),
 * with settings written for the test, on this suite's ROS domain (inherited from process.env).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type CliRun, listeningUrl, runServerCli } from '../../support/cli.ts';
import { type SettingsOverrides, writeSettings } from '../../support/server.ts';

export interface Ros2Armgate {
  readonly url: string;
  readonly run: CliRun;
  /** The folder of its sequences' bags: removed by {@link close} unless kept (then by {@link removeBags}). */
  readonly bagRoot: string;
  /**
   * SIGTERM (or `signal`), then waits for the exit; removes the settings and the bags (`keepBags`: the bags stay for
   * the test to read after the exit, and it removes them with {@link removeBags}).
   */
  close(signal?: NodeJS.Signals, options?: { readonly keepBags?: boolean }): Promise<number | null>;
  removeBags(): Promise<void>;
}

/** Removes a folder of bags (a sequence runner still closing its bag as armgate exits: a few tries). */
const removeFolder = (dir: string) => rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });

/**
 * Starts armgate on ros2 with `overrides` merged over the bundled settings (`env`: added to its environment); resolves
 * once it listens.
 */
export async function startRos2Armgate(
  overrides: SettingsOverrides = {},
  env: Record<string, string> = {},
): Promise<Ros2Armgate> {
  const bagRoot = await mkdtemp(path.join(tmpdir(), 'armgate-ros2-bags-'));
  const removeBags = () => removeFolder(bagRoot);
  const settings = await writeSettings({
    ...overrides,
    robot: { backend: 'ros2', ...(overrides.robot ?? {}) },
    sequences: { bag_root: bagRoot, ...(overrides.sequences ?? {}) },
  });
  const run = runServerCli(['--settings', settings.file, '--port', '0'], env);
  let url: string;
  try {
    url = await listeningUrl(run, 60_000);
  } catch (e) {
    run.child.kill('SIGKILL');
    await run.exited;
    await settings.cleanup();
    await removeBags();
    throw new Error(`armgate on ros2 did not start: ${(e as Error).message}\n${run.err()}`);
  }
  return {
    url,
    run,
    bagRoot,
    async close(signal: NodeJS.Signals = 'SIGTERM', options: { readonly keepBags?: boolean } = {}) {
      if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill(signal);
      const code = await run.exited;
      await settings.cleanup();
      if (!options.keepBags) await removeBags();
      return code;
    },
    removeBags,
  };
}
