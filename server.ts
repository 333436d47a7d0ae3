import path from 'node:path';
import { parseArgs } from 'node:util';
import { PROJECT_ROOT } from './lib/settings/resolve.ts';
import { flushLogLines, logLine, surviveOutputErrors } from './lib/logs/line.ts';
import { loadConfig } from './lib/settings/load.ts';
import { startServer } from './lib/server/start.ts';
import { FATAL_EXIT_CODE, installFatalPolicy } from './lib/server/fatal.ts';
import { catalog } from './handlers/index.ts';

const USAGE = 'usage: npm start -- [--settings FILE] [--port N] [--backend sim|ros2]';

/** Command line: npm start [-- --settings FILE] [--port N] [--backend sim|ros2] */
async function main(): Promise<number> {
  surviveOutputErrors();
  let args: { settings?: string | undefined; port?: string | undefined; backend?: string | undefined };
  try {
    ({ values: args } = parseArgs({
      options: { settings: { type: 'string' }, port: { type: 'string' }, backend: { type: 'string' } },
      strict: true,
    }));
  } catch (e) {
    process.stderr.write(`armgate: ${(e as Error).message}\n${USAGE}\n`);
    return 2;
  }
  const backendOverride = args.backend;
  if (backendOverride !== undefined && backendOverride !== 'sim' && backendOverride !== 'ros2') {
    process.stderr.write(`armgate: --backend: expected sim or ros2, got '${backendOverride.slice(0, 40)}'\n${USAGE}\n`);
    return 2;
  }
  let portOverride: number | undefined;
  if (args.port !== undefined) {
    portOverride = Number(args.port);
    if (!/^\d{1,5}$/.test(args.port) || portOverride > 65535) {
      process.stderr.write(`armgate: --port: expected 0..65535, got '${args.port}'\n`);
      return 2;
    }
  }
  const settingsFile = args.settings ?? path.join(PROJECT_ROOT, 'settings.yaml');
  const loaded = await loadConfig(settingsFile, {
    ...(portOverride === undefined ? {} : { portOverride }),
    ...(backendOverride === undefined ? {} : { backendOverride }),
  });
  if (!loaded.ok) {
    process.stderr.write(`armgate: invalid settings (${settingsFile}): ${loaded.error}\n`);
    return 1;
  }
  if (loaded.value.kind === 'disabled') {
    process.stdout.write('armgate: the web server is disabled (web.enabled: false); exiting\n');
    return 0;
  }
  const config = loaded.value.config;
  for (const notice of config.notices) process.stderr.write(`armgate: ${notice}\n`);
  let running: Awaited<ReturnType<typeof startServer>>;
  try {
    running = await startServer(config, catalog);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'EADDRINUSE' && code !== 'EADDRNOTAVAIL') throw e;
    const where = `${config.web.host}:${config.web.port}`;
    process.stderr.write(
      code === 'EADDRINUSE'
        ? `armgate: ${where} is in use (another armgate, or another server); stop it, or start on another port: npm start -- --port 8008 (web.port in the settings; --port 0 picks a free one)\n`
        : `armgate: cannot listen on ${where}: this machine has no such address (web.host in the settings)\n`,
    );
    return 1;
  }
  // A fault nothing handled: the arm brought to rest as by POST /stop, the shutdown below, exit 70 (lib/server/fatal.ts).
  const fatal = installFatalPolicy({
    stop: (reason) => running.services.control.stop(reason),
    close: () => running.close(),
    secrets: config.web.tokens.map((entry) => entry.token),
    log: logLine,
    flush: flushLogLines,
    exit: (code) => process.exit(code),
  });
  // Handlers first, then the announcement: a parent may signal the moment it reads the line.
  const stopped = new Promise<void>((resolve) => {
    const shutdown = (signal: string) => {
      flushLogLines(); // the request lines logged so far come before this one
      process.stdout.write(`armgate: ${signal}, shutting down\n`);
      resolve();
    };
    process.once('SIGINT', () => shutdown('SIGINT'));
    process.once('SIGTERM', () => shutdown('SIGTERM'));
  });
  flushLogLines(); // start-up's lines come before the announcement
  process.stdout.write(`listening on ${running.url}\n`);
  if (running.foxglove) process.stdout.write(`foxglove on ${running.foxglove.url}\n`);
  await stopped;
  await running.close();
  return fatal.faulted ? FATAL_EXIT_CODE : 0;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`armgate: start-up failed: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  },
);
