/**
 * A fault nothing in armgate handles (an uncaught exception, an unhandled rejection) ends the process non-zero after
 * the arm is brought to rest, the runners ended, the bags closed and the log lines written (lib/server/fatal.ts). The
 * fault is injected from outside: the server runs as `npm start` runs it, with tests/support/fault-hook.mjs preloaded
 * (NODE_OPTIONS), which throws or rejects when the process gets SIGUSR2; nothing in armgate's code is there for it.
 */
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from 'node:test';
import { setTimeout as setTimeoutPromise } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { readBag } from '../support/bag.ts';
import { type CliRun, listeningUrl, runServerCli } from '../support/cli.ts';
import { assertProcessGone, sleep, waitFor, WORK } from '../support/live.ts';
import { sequenceForm } from '../support/multipart.ts';
import { PROJECT_ROOT, writeSettings } from '../support/settings-file.ts';

const HOOK = pathToFileURL(path.join(PROJECT_ROOT, 'tests/support/fault-hook.mjs')).href;
const TOKEN = 'fatal-test-token-6b1d93e07c4a5f28';
const OTHER = [0.4, 0.2, 0, -1.3, 0, 1.4, 0.2];

/** The JSON log lines of stdout. */
function logLines(out: string): Record<string, unknown>[] {
  return out
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

interface Faulted {
  readonly code: number | null;
  readonly cli: CliRun;
  readonly lines: Record<string, unknown>[];
}

/**
 * Starts the CLI server with the fault hook (`mode`) and the admin token; `run` gets its URL, then SIGUSR2 goes out;
 * `check` gets the exit once it came (before the settings' folder, bags included, is removed).
 */
async function faultedRun(
  mode: 'throw' | 'reject' | 'twice',
  check: (faulted: Faulted) => Promise<void> | void,
  run: (url: string, bagRoot: string) => Promise<void> = async () => undefined,
): Promise<void> {
  const settings = await writeSettings({ sim: { time_scale: 1 } });
  const cli = runServerCli(['--settings', settings.file, '--port', '0'], {
    ARMGATE_TOKEN: TOKEN,
    ARMGATE_TEST_FAULT: mode,
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${HOOK}`.trim(),
  });
  try {
    const url = await listeningUrl(cli);
    await run(url, path.join(settings.dir, 'bags'));
    cli.child.kill('SIGUSR2');
    // Generous: the way out is bounded by its deadlines (2 s stop, 5 s close), the machine may be loaded.
    const hung = new AbortController();
    const code = await Promise.race([
      cli.exited.finally(() => hung.abort()),
      setTimeoutPromise(60_000, 'hung' as const, { signal: hung.signal }).catch(() => 'hung' as const),
    ]);
    assert.notEqual(code, 'hung', `no exit within 60 s after the fault; stdout: ${cli.out()}`);
    await check({ code: code as number | null, cli, lines: logLines(cli.out()) });
  } finally {
    if (cli.child.exitCode === null) cli.child.kill('SIGKILL');
    await settings.cleanup();
  }
}

const auth = { authorization: `Bearer ${TOKEN}` };

describe('a fault nothing handled ends the process after the way out (lib/server/fatal.ts)', () => {
  it('an uncaught exception: one fatal line with the stack and no token, the runner gone, its bag readable, exit 70', async () => {
    let pid = 0;
    let bagFolder = '';
    await faultedRun('throw', check, async (url, bagRoot) => {
      // A long run (100 iterations between two poses) recording /joint_states: still moving at the fault.
      const form = sequenceForm(
        { home: { joints: WORK, speed: 0.3 }, waypoints: [{ joints: OTHER, speed: 0.3 }] },
        { n_iterations: '100', delay_between_iterations: '0', bag_path: 'fault-bag', topics: '/joint_states' },
      );
      const started = await fetch(`${url}/sequences/start`, { method: 'POST', body: form, headers: auth });
      const body = (await started.json()) as { pid: number };
      assert.equal(started.status, 200, JSON.stringify(body));
      pid = body.pid;
      bagFolder = path.join(bagRoot, 'fault-bag');
      // The bag holds some joint states before the fault (the recorder has opened its file).
      await waitFor(
        'the bag file',
        () => readdir(bagFolder).catch(() => [] as string[]),
        (files) => files.some((f) => f.endsWith('.mcap')),
        30_000,
      );
      await sleep(500);
    });
    async function check({ code, cli, lines }: Faulted) {
      assert.equal(code, 70, `exit code; stderr: ${cli.err()}`);
      const fatal = lines.filter((line) => line.level === 'fatal');
      assert.equal(fatal.length, 1, JSON.stringify(fatal));
      assert.match(String(fatal[0]?.msg), /^uncaught exception: stopping the arm and exiting$/);
      assert.match(
        String(fatal[0]?.stack),
        /injected fault \(tests\/support\/fault-hook\.mjs\) with the token \[redacted\]/,
      );
      assert.match(String(fatal[0]?.stack), /\n {4}at /, 'the stack, not the message alone');
      assert.ok(!cli.out().includes(TOKEN) && !cli.err().includes(TOKEN), 'the token is never written');
      const exit = lines.find((line) => line.msg === 'exiting after a fault');
      assert.deepEqual(
        { stop: exit?.stop, close: exit?.close, code: exit?.code },
        { stop: 'done', close: 'done', code: 70 },
        JSON.stringify(exit),
      );
      // The fatal line comes after the lines logged before it, the exit line after it: the buffered lines were written.
      assert.ok(lines.indexOf(fatal[0] as Record<string, unknown>) < lines.indexOf(exit as Record<string, unknown>));
      assertProcessGone(pid);
      const bag = await readBag(bagFolder);
      assert.ok(bag.messages.length > 0, 'the bag holds the joint states recorded before the fault');
      assert.ok(
        bag.messages.every((m) => m.topic === '/joint_states'),
        `topics: ${[...new Set(bag.messages.map((m) => m.topic))]}`,
      );
    }
  });

  it('an unhandled rejection: the same way out, its own fatal line, exit 70', async () => {
    await faultedRun('reject', ({ code, cli, lines }) => {
      assert.equal(code, 70, `exit code; stderr: ${cli.err()}`);
      const fatal = lines.filter((line) => line.level === 'fatal');
      assert.equal(fatal.length, 1, JSON.stringify(fatal));
      assert.equal(fatal[0]?.msg, 'unhandled rejection: stopping the arm and exiting');
      assert.match(String(fatal[0]?.stack), /injected rejection/);
      assert.equal(lines.find((line) => line.msg === 'exiting after a fault')?.code, 70);
    });
  });

  it('a second fault on the way out exits at once, with a line of its own, still 70', async () => {
    await faultedRun('twice', ({ code, cli, lines }) => {
      assert.equal(code, 70, `exit code; stderr: ${cli.err()}`);
      const fatal = lines.filter((line) => line.level === 'fatal').map((line) => line.msg);
      assert.deepEqual(fatal, [
        'uncaught exception: stopping the arm and exiting',
        'uncaught exception while exiting after a fault: exiting at once',
      ]);
      assert.equal(
        lines.find((line) => line.msg === 'exiting after a fault'),
        undefined,
        'the first way out did not finish',
      );
    });
  });
});
