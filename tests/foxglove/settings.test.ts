/**
 * The robot stack's `foxglove` block as armgate reads it: off unless enabled, whitelists and TLS checked at start-up
 * with the key named, a non-loopback address only with a token; and `npm start` with the block on: the start-up
 * line, TLS (wss) with the given certificate, the topic, service and capability lists honoured.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import https from 'node:https';
import path from 'node:path';
import { describe, it } from 'node:test';
import { parse, stringify } from 'yaml';
import { loadTestSettings, PROJECT_ROOT, settingsYaml, writeSettings } from '../support/server.ts';
import { runServerCli } from '../support/cli.ts';
import { connect, until } from './support.ts';

const TOKEN = 'foxglove-cli-token-7f3a9c';

/** The test settings with a foxglove block (and a token when given). */
const withFoxglove = (foxglove: Record<string, unknown>, web: Record<string, unknown> = {}) =>
  loadTestSettings(settingsYaml({ foxglove, web }));

describe("the stack's foxglove block", () => {
  it('is off when absent or enabled: false, as in the stack file', async () => {
    assert.equal((await loadTestSettings(settingsYaml())).foxglove, undefined);
    assert.equal((await withFoxglove({ enabled: false, port: 8765 })).foxglove, undefined);
    const stack = parse(await readFile(path.join(PROJECT_ROOT, 'tests/fixtures/stack/cobot-setting.yaml'), 'utf8'));
    assert.equal(stack.foxglove.enabled, false, "the stack's file leaves it off");
  });

  it('reads address, port, whitelists, capabilities and the send buffer, with foxglove_bridge defaults', async () => {
    const config = await withFoxglove({ enabled: true });
    assert.equal(config.foxglove?.host, '127.0.0.1');
    assert.equal(config.foxglove?.port, 8765);
    assert.equal(config.foxglove?.sendBufferLimit, 1_048_576, "armgate's default, not foxglove_bridge's 10 MB");
    assert.equal(config.foxglove?.maxConnections, 100);
    assert.equal(config.foxglove?.tls, undefined);
    const custom = await withFoxglove({
      enabled: true,
      port: 0,
      topic_whitelist: ['/joint_states', '/tf.*'],
      capabilities: ['services', 'clientPublish'],
      use_sim_time: false,
    });
    assert.deepEqual(
      ['/joint_states', '/tf', '/tf_static', '/robot_description', '/joint_states_x'].filter((t) =>
        custom.foxglove?.topicWhitelist.some((re) => re.test(t)),
      ),
      ['/joint_states', '/tf', '/tf_static'],
      'a pattern matches a whole name, as foxglove_bridge matches',
    );
    assert.deepEqual([...(custom.foxglove?.capabilities ?? [])], ['services', 'clientPublish']);
    assert.ok(
      custom.notices.some((n) => /foxglove: use_sim_time/.test(n)),
      custom.notices.join(' | '),
    );
    assert.ok(custom.notices.some((n) => /clientPublish is not served/.test(n)));
  });

  it('refuses a bad pattern, TLS without its files, and a non-loopback address without a token, naming the key', async () => {
    await assert.rejects(
      withFoxglove({ enabled: true, topic_whitelist: ['(unclosed'] }),
      /foxglove\.topic_whitelist\.0: not a regular expression/,
    );
    await assert.rejects(
      withFoxglove({ enabled: true, tls: true, certfile: 'cert.pem' }),
      /foxglove\.keyfile: required when foxglove\.tls/,
    );
    await assert.rejects(withFoxglove({ enabled: true, port: 70000 }), /foxglove\.port: expected 0\.\.65535/);
    await assert.rejects(withFoxglove({ enabled: true, capabilities: ['teleport'] }), /foxglove\.capabilities\.0/);
    await assert.rejects(
      withFoxglove({ enabled: true, address: '0.0.0.0' }),
      /foxglove\.address: '0\.0\.0\.0' is not a loopback address; set web\.token/,
    );
    const tokened = await withFoxglove({ enabled: true, address: '0.0.0.0' }, { token: TOKEN });
    assert.equal(tokened.foxglove?.host, '0.0.0.0');
  });

  it("takes armgate.foxglove's enabled and port over the block's (beside the stack's own bridge)", async () => {
    const beside = await loadTestSettings(
      stringify({
        web: { port: 0, endpoints: 'pkg://armgate/config/endpoints.yaml' },
        foxglove: { enabled: true, port: 8765, topic_whitelist: ['/joint_states'] },
        armgate: { foxglove: { port: 8766, max_connections: 8 } },
      }),
    );
    assert.equal(beside.foxglove?.port, 8766, "armgate's port; the stack's bridge keeps 8765");
    assert.equal(beside.foxglove?.maxConnections, 8);
    assert.equal(beside.foxglove?.topicWhitelist.length, 1, "the block's other keys still apply");
    const own = await loadTestSettings(stringify({ armgate: { foxglove: { enabled: true, port: 0 } } }));
    assert.equal(own.foxglove?.port, 0, 'on without the block');
    const off = await loadTestSettings(
      stringify({ foxglove: { enabled: true }, armgate: { foxglove: { enabled: false } } }),
    );
    assert.equal(off.foxglove, undefined, "off for armgate while the stack's bridge runs");
  });
});

describe('npm start with foxglove.enabled', () => {
  it('prints the wss line, serves with the certificate, and honours the topic, service and capability lists', async () => {
    const s = await writeSettings();
    const cert = path.join(s.dir, 'cert.pem');
    const key = path.join(s.dir, 'key.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        key,
        '-out',
        cert,
      ],
      { stdio: 'ignore' },
    );
    const settings = parse(await readFile(s.file, 'utf8'));
    settings.web.token = TOKEN;
    // armgate's own block (its caps): the earlier top-level places of its settings move into it.
    settings.armgate = {
      backend: settings.robot.backend,
      sim: settings.sim,
      sequences: settings.sequences,
      foxglove: { max_connections: 1 },
    };
    delete settings.robot;
    delete settings.sim;
    delete settings.sequences;
    settings.foxglove = {
      enabled: true,
      port: 0,
      address: '127.0.0.1',
      tls: true,
      certfile: 'cert.pem',
      keyfile: 'key.pem',
      topic_whitelist: ['/joint_states', '/tf.*', '/robot_description'],
      service_whitelist: ['/armgate/stop'],
      capabilities: ['services'],
    };
    await writeFile(s.file, stringify(settings));
    const r = runServerCli(['--settings', s.file, '--port', '0']);
    try {
      await until(() => /^foxglove on /m.test(r.out()) || r.child.exitCode !== null, 120_000, 'the foxglove line');
      const url = /^foxglove on (wss:\/\/127\.0\.0\.1:\d+)$/m.exec(r.out())?.[1];
      assert.ok(url, r.out() + r.err());
      assert.ok(r.out().indexOf('listening on') < r.out().indexOf('foxglove on'), 'after the listening line');
      // A handshake that ws refuses (a bad Sec-WebSocket-Key) is answered 400 and does not hold a place of the cap.
      const refused = await new Promise<number>((resolve, reject) => {
        const request = https.request(`${url.replace('wss:', 'https:')}/`, {
          ca: cert.length > 0 ? readFileSync(cert) : undefined,
          headers: {
            connection: 'Upgrade',
            upgrade: 'websocket',
            'sec-websocket-version': '13',
            'sec-websocket-key': 'not-a-key',
            'sec-websocket-protocol': 'foxglove.websocket.v1',
            authorization: `Bearer ${TOKEN}`,
          },
        });
        request.on('response', (res) => resolve(res.statusCode ?? 0));
        request.on('upgrade', () => reject(new Error('upgraded with a bad key')));
        request.on('error', reject);
        request.end();
      });
      assert.equal(refused, 400);
      const c = await connect(`${url}/?token=${TOKEN}`, {}, { ca: await readFile(cert) });
      assert.deepEqual(
        c.channels.map((ch) => ch.topic),
        ['/joint_states', '/tf', '/tf_static', '/robot_description'],
      );
      assert.deepEqual(
        c.services.map((sv) => sv.name),
        ['/armgate/stop'],
      );
      assert.deepEqual(c.info.capabilities, ['services'], 'no assets, no parameters: the capabilities list says so');
      const asset = await c.fetch('package://armgate/urdf/iiwa7.urdf');
      assert.equal(asset.status, 1);
      const [state] = (await c.take('/joint_states')) as { name: string[] }[];
      assert.equal(state?.name.length, 7);
      // armgate.foxglove.max_connections: 1; a second connection is refused at the upgrade until the first goes.
      await assert.rejects(
        connect(`${url}/?token=${TOKEN}`, {}, { ca: await readFile(cert) }),
        (e) => (e as { status?: number }).status === 503,
      );
      c.close();
      await c.closed;
      for (let i = 0; ; i++) {
        const again = await connect(`${url}/?token=${TOKEN}`, {}, { ca: await readFile(cert) }).catch(() => undefined);
        if (again) {
          again.close();
          break;
        }
        assert.ok(i < 50, 'a connection is served again once the first has gone');
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.ok(!(r.out() + r.err()).includes(TOKEN), 'the token is never printed');
    } finally {
      r.child.kill('SIGTERM');
      await r.exited;
      await s.cleanup();
    }
  });
});
