import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type SettingsOverrides, writeSettings } from './support/settings-file.ts';

/** The repository root: server.ts is run from here, as `npm start` does. */
const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Per-test budget: a start-up takes about 1 s alone, several run at once (4 at a time). */
const TEST_TIMEOUT_MS = 40_000;
/** How long start-up may take before the listening line must be there. */
const START_TIMEOUT_MS = 25_000;
/** How long a refusal or a signalled shutdown may take. */
const EXIT_TIMEOUT_MS = 25_000;

/** A distinctive token, so that finding it in the output cannot be a coincidence. */
const TOKEN = 'cli-test-token-7f3a9c2e51d8';

interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

interface Cli {
  readonly child: ChildProcess;
  readonly stdout: () => string;
  readonly stderr: () => string;
  readonly exited: Promise<Exit>;
}

/** Starts the real command line as `npm start` runs it, `node scripts/start.mjs ...args`, with a clean environment. */
function startCli(args: readonly string[], env: Readonly<Record<string, string>> = {}): Cli {
  const childEnv: NodeJS.ProcessEnv = { ...process.env };
  // Nothing from the test runner's own environment may steer the child.
  for (const key of ['ARMGATE_TOKEN', 'AMENT_PREFIX_PATH', 'NODE_TEST_CONTEXT']) delete childEnv[key];
  const child = spawn(process.execPath, ['scripts/start.mjs', ...args], {
    cwd: REPO_ROOT,
    env: { ...childEnv, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8');
  child.stderr?.setEncoding('utf8');
  child.stdout?.on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr?.on('data', (chunk: string) => {
    stderr += chunk;
  });
  // 'close' comes after the exit and after both pipes are drained, so the output is complete.
  const exited = new Promise<Exit>((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

/** Kills the child if it still runs and waits for it; used in every finally. */
async function stopCli(cli: Cli): Promise<void> {
  if (cli.child.exitCode === null && cli.child.signalCode === null) cli.child.kill('SIGKILL');
  await cli.exited;
}

/** Resolves with `promise`, or rejects after `ms` with a message that includes the child's output. */
async function within<T>(promise: Promise<T>, ms: number, what: string, cli: Cli): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what}: nothing after ${ms} ms\nstdout: ${cli.stdout()}\nstderr: ${cli.stderr()}`)),
      ms,
    );
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const LISTENING = /^listening on (http:\/\/(\S+):(\d+))$/m;

/** Waits for the listening line; returns the URL and port it names. */
async function waitListening(cli: Cli): Promise<{ url: string; host: string; port: number }> {
  const seen = new Promise<{ url: string; host: string; port: number }>((resolve, reject) => {
    const check = () => {
      const m = LISTENING.exec(cli.stdout());
      if (m?.[1] && m[2] && m[3]) {
        cli.child.stdout?.off('data', check);
        resolve({ url: m[1], host: m[2], port: Number(m[3]) });
      }
    };
    cli.child.stdout?.on('data', check);
    check();
    void cli.exited.then((exit) =>
      reject(
        new Error(
          `exited (${exit.code ?? exit.signal}) before listening\nstdout: ${cli.stdout()}\nstderr: ${cli.stderr()}`,
        ),
      ),
    );
  });
  return within(seen, START_TIMEOUT_MS, 'waiting for the listening line', cli);
}

/** Runs the command line to its end (it must exit by itself) and returns its exit and output. */
async function runToExit(
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
): Promise<Exit & { stdout: string; stderr: string; ms: number }> {
  const started = performance.now();
  const cli = startCli(args, env);
  try {
    const exit = await within(cli.exited, EXIT_TIMEOUT_MS, `waiting for exit of ${args.join(' ')}`, cli);
    return { ...exit, stdout: cli.stdout(), stderr: cli.stderr(), ms: performance.now() - started };
  } finally {
    await stopCli(cli);
  }
}

/** A settings file in a temp folder for the length of `body`. */
async function withSettings<T>(overrides: SettingsOverrides, body: (file: string) => Promise<T>): Promise<T> {
  const s = await writeSettings(overrides);
  try {
    return await body(s.file);
  } finally {
    await s.cleanup();
  }
}

function lines(text: string): string[] {
  return text.split('\n').filter((line) => line.length > 0);
}

describe('command line (npm start: node scripts/start.mjs)', { concurrency: 4, timeout: 90_000 }, () => {
  it('prints exactly one listening line for --settings FILE --port 0 and answers GET /robot/joint_states with 200', {
    timeout: TEST_TIMEOUT_MS,
  }, async () => {
    await withSettings({}, async (file) => {
      const cli = startCli(['--settings', file, '--port', '0']);
      try {
        const { url, host, port } = await waitListening(cli);
        assert.equal(host, '127.0.0.1');
        assert.ok(port > 0 && port <= 65535, `an ephemeral port, got ${port}`);
        assert.equal(url, `http://127.0.0.1:${port}`);
        assert.deepEqual(lines(cli.stdout()), [`listening on http://127.0.0.1:${port}`]);

        const res = await fetch(`${url}/robot/joint_states`);
        assert.equal(res.status, 200);
        const body = (await res.json()) as { name?: unknown; position?: unknown };
        assert.deepEqual(body.name, ['joint1', 'joint2', 'joint3', 'joint4', 'joint5', 'joint6', 'joint7']);
        assert.ok(Array.isArray(body.position) && body.position.length === 7);

        assert.equal(lines(cli.stdout()).filter((line) => LISTENING.test(line)).length, 1, cli.stdout());
        assert.equal(cli.stderr(), '');
      } finally {
        await stopCli(cli);
      }
    });
  });

  // SIGTERM goes out the moment the listening line is seen: from then on the server must shut
  // down cleanly. SIGINT goes out after a served request, which also covers a server in use.
  const signals: { signal: NodeJS.Signals; afterRequest: boolean; name: string }[] = [
    {
      signal: 'SIGTERM',
      afterRequest: false,
      name: 'exits 0 promptly on SIGTERM sent as soon as the listening line appears, and stops listening',
    },
    {
      signal: 'SIGINT',
      afterRequest: true,
      name: 'exits 0 promptly on SIGINT after serving a request, and stops listening',
    },
  ];
  for (const { signal, afterRequest, name } of signals) {
    it(name, { timeout: TEST_TIMEOUT_MS }, async () => {
      await withSettings({}, async (file) => {
        const cli = startCli(['--settings', file, '--port', '0']);
        try {
          const { url } = await waitListening(cli);
          if (afterRequest) {
            const res = await fetch(`${url}/robot/joint_states`);
            assert.equal(res.status, 200);
            await res.body?.cancel();
          }
          const sent = performance.now();
          cli.child.kill(signal);
          const exit = await within(cli.exited, 5_000, `waiting for exit after ${signal}`, cli);
          assert.deepEqual(exit, { code: 0, signal: null }, `exit after ${signal}; stderr: ${cli.stderr()}`);
          assert.ok(performance.now() - sent < 5_000);
          assert.match(cli.stdout(), new RegExp(`^armgate: ${signal}, shutting down$`, 'm'));
          await assert.rejects(fetch(`${url}/robot/joint_states`), 'nothing listens after the exit');
        } finally {
          await stopCli(cli);
        }
      });
    });
  }

  it('keeps serving when the reader of its stdout goes away (EPIPE): reads and /stop answered, one stderr line, SIGTERM exits 0', {
    timeout: TEST_TIMEOUT_MS,
  }, async () => {
    await withSettings({}, async (file) => {
      const cli = startCli(['--settings', file, '--port', '0']);
      try {
        const { url } = await waitListening(cli);
        // The reader closes its end of the pipe, as `npm start | head -1` or a log shipper that died does.
        cli.child.stdout?.destroy();
        for (const [method, route] of [
          ['GET', '/robot/joint_states'],
          ['POST', '/stop'],
          ['GET', '/robot/joint_states'],
        ] as const) {
          const res = await fetch(`${url}${route}`, { method });
          assert.equal(res.status, 200, `${method} ${route}; stderr: ${cli.stderr()}`);
          await res.body?.cancel();
          // Past the log lines' flush delay (10 ms): each request's line has met the closed pipe.
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        assert.equal(cli.child.exitCode, null, `still running; stderr: ${cli.stderr()}`);
        assert.match(cli.stderr(), /^armgate: stdout .*closed.*$/m);
        cli.child.kill('SIGTERM');
        const exit = await within(cli.exited, 5_000, 'waiting for exit after SIGTERM', cli);
        assert.deepEqual(exit, { code: 0, signal: null }, `exit after SIGTERM; stderr: ${cli.stderr()}`);
      } finally {
        await stopCli(cli);
      }
    });
  });

  it('exits non-zero at once on web.host 0.0.0.0 without a token, with one stderr line naming web.token', {
    timeout: TEST_TIMEOUT_MS,
  }, async () => {
    await withSettings({ web: { host: '0.0.0.0' } }, async (file) => {
      const r = await runToExit(['--settings', file, '--port', '0']);
      assert.notEqual(r.code, 0);
      assert.equal(r.code, 1);
      const errLines = lines(r.stderr);
      assert.equal(errLines.length, 1, r.stderr);
      assert.match(errLines[0] ?? '', /web\.token/);
      assert.ok(errLines[0]?.includes(file), 'the message names the settings file');
      assert.doesNotMatch(r.stdout, /listening/);
      assert.ok(r.ms < EXIT_TIMEOUT_MS);
    });
  });

  it('starts on web.host 0.0.0.0 with ARMGATE_TOKEN, answers 401 with www-authenticate Bearer without it, and never prints the token', {
    timeout: TEST_TIMEOUT_MS,
  }, async () => {
    await withSettings({ web: { host: '0.0.0.0' } }, async (file) => {
      const cli = startCli(['--settings', file, '--port', '0'], { ARMGATE_TOKEN: TOKEN });
      try {
        const { host, port } = await waitListening(cli);
        assert.equal(host, '0.0.0.0');
        const url = `http://127.0.0.1:${port}/robot/joint_states`;

        const missing = await fetch(url);
        assert.equal(missing.status, 401);
        assert.equal(missing.headers.get('www-authenticate'), 'Bearer');
        assert.ok(!(await missing.text()).includes(TOKEN));

        const wrong = await fetch(url, { headers: { authorization: `Bearer ${TOKEN}x` } });
        assert.equal(wrong.status, 401);
        assert.equal(wrong.headers.get('www-authenticate'), 'Bearer');
        await wrong.body?.cancel();

        const allowed = await fetch(url, { headers: { authorization: `Bearer ${TOKEN}` } });
        assert.equal(allowed.status, 200);
        await allowed.body?.cancel();

        cli.child.kill('SIGTERM');
        const exit = await within(cli.exited, 5_000, 'waiting for exit after SIGTERM', cli);
        assert.equal(exit.code, 0);
        assert.ok(!cli.stdout().includes(TOKEN), 'the token is not on stdout');
        assert.ok(!cli.stderr().includes(TOKEN), 'the token is not on stderr');
      } finally {
        await stopCli(cli);
      }
    });
  });

  it('refuses a whitespace ARMGATE_TOKEN naming web.token without printing it', {
    timeout: TEST_TIMEOUT_MS,
  }, async () => {
    await withSettings({}, async (file) => {
      const spaced = `${TOKEN} tail`;
      const r = await runToExit(['--settings', file, '--port', '0'], { ARMGATE_TOKEN: spaced });
      assert.equal(r.code, 1);
      assert.match(r.stderr, /web\.token: must not contain whitespace/);
      assert.ok(!r.stdout.includes(TOKEN) && !r.stderr.includes(TOKEN), 'the token is never printed');
    });
  });

  it('exits 0 saying the web server is disabled when web.enabled is false', { timeout: TEST_TIMEOUT_MS }, async () => {
    await withSettings({ web: { enabled: false } }, async (file) => {
      const r = await runToExit(['--settings', file]);
      assert.deepEqual({ code: r.code, signal: r.signal }, { code: 0, signal: null });
      assert.match(r.stdout, /web server is disabled/);
      assert.doesNotMatch(r.stdout, /listening/);
      assert.equal(r.stderr, '');
    });
  });

  it('exits non-zero on malformed settings YAML with a message naming the file', {
    timeout: TEST_TIMEOUT_MS,
  }, async () => {
    await withSettings({}, async (file) => {
      await writeFile(file, 'web:\n  host: [127.0.0.1\n');
      const r = await runToExit(['--settings', file]);
      assert.equal(r.code, 1);
      const errLines = lines(r.stderr);
      assert.equal(errLines.length, 1, r.stderr);
      assert.ok(errLines[0]?.includes(file), r.stderr);
      assert.match(errLines[0] ?? '', /malformed YAML/);
      assert.doesNotMatch(r.stdout, /listening/);
    });
  });

  const usageErrors: [string, string[], RegExp][] = [
    ['--port abc', ['--port', 'abc'], /--port: expected 0\.\.65535, got 'abc'/],
    ['--port 70000', ['--port', '70000'], /--port: expected 0\.\.65535, got '70000'/],
    ['an unknown option', ['--frobnicate'], /usage: npm start/],
    [
      '--backend moveit',
      ['--backend', 'moveit'],
      /--backend: expected sim or ros2, got 'moveit'\n.*\[--backend sim\|ros2\]/,
    ],
  ];
  it('--backend ros2 overrides the settings: without a sourced ROS 2 it stops saying what is missing', {
    timeout: TEST_TIMEOUT_MS,
  }, async () => {
    const { file, cleanup } = await writeSettings({ robot: { backend: 'sim' } });
    try {
      const r = await runToExit(['--settings', file, '--port', '0', '--backend', 'ros2'], {
        ROS_DISTRO: '',
        AMENT_PREFIX_PATH: '',
      });
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /robot\.backend 'ros2' needs a sourced ROS 2 and the rclnodejs package/);
      assert.match(
        r.stderr,
        /run `npm run ros2:build` in .*, then `\. scripts\/ros2\/env\.sh` in this shell/,
        'what to do here',
      );
      assert.doesNotMatch(r.stdout, /listening/);
    } finally {
      await cleanup();
    }
  });

  it('a port in use: exits 1 with one line saying so and how to pick another (--port)', {
    timeout: TEST_TIMEOUT_MS,
  }, async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as net.AddressInfo).port;
    const { file, cleanup } = await writeSettings();
    try {
      const r = await runToExit(['--settings', file, '--port', String(port)]);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, new RegExp(`^armgate: 127\\.0\\.0\\.1:${port} is in use .*npm start -- --port 8008`, 'm'));
      assert.doesNotMatch(r.stderr, /start-up failed/);
    } finally {
      taken.close();
      await cleanup();
    }
  });

  for (const [what, args, message] of usageErrors) {
    it(`exits 2 on ${what}`, { timeout: TEST_TIMEOUT_MS }, async () => {
      const r = await runToExit(args);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, message);
      assert.doesNotMatch(r.stdout, /listening/);
    });
  }
});
