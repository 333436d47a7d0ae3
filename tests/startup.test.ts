import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { listeningUrl, runServerCli } from './support/cli.ts';
import { writeSettings } from './support/settings-file.ts';

const TOKEN = 'cli-secret-5c1f-0a9e';

describe('command line start-up', { concurrency: true }, () => {
  it('prints one listening line for --port 0, serves, and exits 0 on SIGTERM', async () => {
    const s = await writeSettings();
    const r = runServerCli(['--settings', s.file, '--port', '0']);
    try {
      const url = await listeningUrl(r);
      assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
      assert.equal(
        r
          .out()
          .split('\n')
          .filter((l) => l.startsWith('listening on')).length,
        1,
      );
      const res = await fetch(`${url}/robot/joint_states`);
      assert.equal(res.status, 200);
      await res.body?.cancel();
      r.child.kill('SIGTERM');
      assert.equal(await r.exited, 0);
    } finally {
      r.child.kill('SIGKILL');
      await s.cleanup();
    }
  });

  it('exits non-zero at once on a non-loopback host without a token, naming web.token', async () => {
    const s = await writeSettings({ web: { host: '0.0.0.0' } });
    const r = runServerCli(['--settings', s.file]);
    try {
      assert.notEqual(await r.exited, 0);
      const lines = r.err().trim().split('\n');
      assert.equal(lines.length, 1, r.err());
      assert.match(lines[0] ?? '', /web\.token/);
      assert.doesNotMatch(r.out(), /listening/);
    } finally {
      await s.cleanup();
    }
  });

  it('starts on 0.0.0.0 with ARMGATE_TOKEN, requires the Bearer token, and never prints it', async () => {
    const s = await writeSettings({ web: { host: '0.0.0.0' } });
    const r = runServerCli(['--settings', s.file, '--port', '0'], { ARMGATE_TOKEN: TOKEN });
    try {
      const url = (await listeningUrl(r)).replace('0.0.0.0', '127.0.0.1');
      const denied = await fetch(`${url}/robot/positions`);
      assert.equal(denied.status, 401);
      assert.equal(denied.headers.get('www-authenticate'), 'Bearer');
      await denied.body?.cancel();
      const wrong = await fetch(`${url}/robot/positions`, { headers: { authorization: `Bearer ${TOKEN}x` } });
      assert.equal(wrong.status, 401);
      await wrong.body?.cancel();
      const allowed = await fetch(`${url}/robot/positions`, { headers: { authorization: `Bearer ${TOKEN}` } });
      assert.equal(allowed.status, 200);
      await allowed.body?.cancel();
      r.child.kill('SIGTERM');
      await r.exited;
      assert.ok(!r.out().includes(TOKEN) && !r.err().includes(TOKEN), 'the token never appears in the output');
    } finally {
      r.child.kill('SIGKILL');
      await s.cleanup();
    }
  });

  it('says the web server is disabled and exits 0 with web.enabled false', async () => {
    const s = await writeSettings({ web: { enabled: false } });
    const r = runServerCli(['--settings', s.file]);
    try {
      assert.equal(await r.exited, 0);
      assert.match(r.out(), /disabled/);
    } finally {
      await s.cleanup();
    }
  });

  for (const [name, overrides, key] of [
    ['an unknown backend', { robot: { backend: 'ros3' } }, 'robot.backend'],
    ['a bad port', { web: { port: 70000 } }, 'web.port'],
    ['an unreadable joint limits file', { web: { joint_limits: './missing.yaml' } }, 'web.joint_limits'],
    ['an unknown initial position', { sim: { initial_position: 'nowhere' } }, 'sim.initial_position'],
  ] as const) {
    it(`stops start-up on ${name}, naming ${key}`, async () => {
      const s = await writeSettings(overrides);
      const r = runServerCli(['--settings', s.file]);
      try {
        assert.equal(await r.exited, 1);
        assert.ok(r.err().includes(key), r.err());
      } finally {
        await s.cleanup();
      }
    });
  }

  it('stops start-up on malformed YAML, naming the file', async () => {
    const s = await writeSettings();
    const { writeFile } = await import('node:fs/promises');
    await writeFile(s.file, 'web: [unclosed\n');
    const r = runServerCli(['--settings', s.file]);
    try {
      assert.equal(await r.exited, 1);
      assert.ok(r.err().includes(s.file) && /malformed YAML/.test(r.err()), r.err());
    } finally {
      await s.cleanup();
    }
  });

  it('refuses --port abc with exit code 2', async () => {
    const r = runServerCli(['--port', 'abc']);
    assert.equal(await r.exited, 2);
    assert.match(r.err(), /--port/);
  });
});
