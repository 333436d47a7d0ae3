/**
 * Browsers cannot be turned against the arm (issue 11, part 4), on a live server over the
 * simulated arm: a text/plain JSON body is a 415, a foreign Host is a 403 everywhere (REST, docs,
 * MCP), a state-changing request from a foreign origin is a 403 (JSON, multipart), and in every
 * refused case the arm stays where it was and no runner starts. Same-origin pages, web.allowed_hosts
 * names and web.cors_origins front ends are admitted; preflights are answered for the latter only.
 * The simulator runs on a clock the test steps (tests/support/stepped.ts): "the arm stays" is checked after 250 ms of
 * that clock, in which a motion wrongly let through would have moved whatever the machine's load.
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { admissionPolicy } from '../../lib/admission/front-door.ts';
import { createMcpEndpoint } from '../../lib/mcp/server.ts';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { getJson, type JointStates, jointStates, maxDiff, WORK } from '../support/live.ts';
import { initializeRequest } from '../support/mcp.ts';
import type { SteppedClock } from '../../lib/clock.ts';
import { atRestOnClock, startSteppedServer, steppedUntilSettled } from '../support/stepped.ts';
import { csvForm, sequenceForm } from '../support/multipart.ts';
import type { TestServer } from '../support/server.ts';
import { TEST_ARRIVAL } from '../support/services.ts';

const UI = 'http://cell-ui.local:3000';
const EVIL = 'http://evil.example';
const JSON_TYPE = 'application/json';
const TARGET = [0.3, 0.1, 0, -1.4, 0, 1.5, 0.2];
const MOVE = JSON.stringify({ joints: TARGET, speed: 1 });
const INITIALIZE = JSON.stringify(initializeRequest('admission-test', { id: 1 }));
const MCP_HEADERS = { 'content-type': JSON_TYPE, accept: 'application/json, text/event-stream' };

interface RawReply {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
}

/** One request through node:http, which sends any Host header as given (fetch replaces it). */
function raw(
  url: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<RawReply> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ hostname, port, method, path, headers, setHost: !('host' in headers) }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

const detailOf = (text: string) => String((JSON.parse(text) as { detail?: unknown }).detail);

describe('browsers cannot be turned against the arm', () => {
  let server: TestServer;
  let url: string;
  let hostPort: string;
  let port: string;
  /** The simulator's clock, stepped by the test: a refused motion would have moved in the time it waits. */
  let clock: SteppedClock;
  const atRest = (target: string) => atRestOnClock({ request: (path, init) => fetch(`${target}${path}`, init) }, clock);

  before(async () => {
    ({ server, clock } = await startSteppedServer({
      web: { allowed_hosts: ['cell.example', 'pinned.example:9999'], cors_origins: [UI] },
      sim: { time_scale: 5 },
    }));
    url = server.url;
    hostPort = new URL(url).host;
    port = new URL(url).port;
  });
  after(async () => {
    await server?.close();
  });

  /** Runs `act`, waits, and asserts the arm has not moved and is at rest. */
  async function assertArmStill(what: string, act: () => Promise<void>): Promise<void> {
    const before = await atRest(url);
    await act();
    await clock.advance(250);
    const now: JointStates = await jointStates(url);
    assert.ok(
      maxDiff(before.position, now.position) < 1e-9,
      `${what}: the arm moved from ${before.position} to ${now.position}`,
    );
    assert.ok(
      now.velocity.every((v) => v === 0),
      `${what}: the arm is moving: ${now.velocity}`,
    );
  }

  describe('JSON bodies must be application/json', () => {
    it('answers a text/plain JSON move with 415 and the arm does not move', async () => {
      await assertArmStill('text/plain move', async () => {
        const res = await fetch(`${url}/robot/move/joints`, {
          method: 'POST',
          headers: { 'content-type': 'text/plain' },
          body: MOVE,
        });
        assert.equal(res.status, 415);
        assert.match(detailOf(await res.text()), /Content-Type: application\/json .*got Content-Type 'text\/plain'/);
      });
    });

    const cases: [type: string | undefined, status: number][] = [
      [undefined, 415],
      ['text/plain;charset=UTF-8', 415],
      ['application/x-www-form-urlencoded', 415],
      ['multipart/form-data; boundary=x', 415],
      ['application/json', 422],
      ['application/json; charset=utf-8', 422],
      ['application/json; charset="UTF-8"', 422],
      ['application/vnd.armgate+json', 422],
      // JSON is UTF-8 (RFC 8259): a body declared in another charset is refused, not read as UTF-8.
      ['application/json; charset=utf-16', 415],
      ['application/json; charset=iso-8859-1', 415],
    ];
    for (const path of ['/robot/move/joints', '/robot/move/named', '/robot/move/pose', '/trajectory/send']) {
      it(`answers ${path} by Content-Type: 415 unless JSON (then the body is read: 422 for {"bogus": 1})`, async () => {
        await assertArmStill(path, async () => {
          for (const [type, status] of cases) {
            const res = await raw(url, 'POST', path, type ? { 'content-type': type } : {}, '{"bogus": 1}');
            assert.equal(res.status, status, `${path} with ${type ?? 'no Content-Type'}: ${res.text}`);
          }
        });
      });
    }
  });

  it('answers a JSON body declared in a charset other than UTF-8 with 415 saying so, on both faces', async () => {
    const rest = await raw(
      url,
      'POST',
      '/robot/move/joints',
      { 'content-type': 'application/json; charset=utf-16' },
      MOVE,
    );
    assert.equal(rest.status, 415);
    assert.match(detailOf(rest.text), /read as UTF-8 only \(got charset=utf-16\)/);
    const mcp = await raw(
      url,
      'POST',
      '/mcp/mcp',
      { ...MCP_HEADERS, 'content-type': 'application/json; charset=utf-16' },
      INITIALIZE,
    );
    assert.equal(mcp.status, 415, mcp.text);
    assert.match(mcp.text, /read as UTF-8 only \(got charset=utf-16\)/);
  });

  describe('the Host header', () => {
    const foreign = [
      'evil.example',
      'evil.example:8007',
      'localhost.evil.example',
      'pinned.example:9998',
      '10.11.12.13',
    ];
    const targets: [method: string, path: string, headers: Record<string, string>, body?: string][] = [
      ['GET', '/robot/joint_states', {}],
      ['GET', '/docs', {}],
      ['GET', '/openapi.json', {}],
      ['POST', '/robot/move/joints', { 'content-type': JSON_TYPE }, MOVE],
      ['POST', '/stop', {}],
      ['POST', '/mcp/mcp', MCP_HEADERS, INITIALIZE],
      ['GET', '/mcp/mcp', { accept: 'text/event-stream' }],
    ];
    for (const [method, path, headers, body] of targets) {
      it(`refuses a foreign Host on ${method} ${path} with 403 naming web.allowed_hosts`, async () => {
        await assertArmStill(`${method} ${path}`, async () => {
          for (const host of foreign) {
            const res = await raw(url, method, path, { ...headers, host }, body);
            assert.equal(res.status, 403, `${host}: ${res.text}`);
            assert.match(
              detailOf(res.text),
              new RegExp(`Host '${host.replace(/\./g, '\\.')}' is not served here .*web\\.allowed_hosts`),
            );
          }
        });
      });
    }

    it('admits loopback names on any port and the web.allowed_hosts names', async () => {
      for (const host of [
        hostPort,
        `localhost:${port}`,
        'localhost',
        `[::1]:${port}`,
        '127.0.0.1:1',
        'cell.example',
        `cell.example:${port}`,
        'pinned.example:9999',
      ]) {
        const res = await raw(url, 'GET', '/robot/joint_states', { host });
        assert.equal(res.status, 200, `${host}: ${res.text}`);
      }
    });

    it('opens an MCP session through a web.allowed_hosts name', async () => {
      const res = await raw(url, 'POST', '/mcp/mcp', { ...MCP_HEADERS, host: `cell.example:${port}` }, INITIALIZE);
      assert.equal(res.status, 200, res.text);
      assert.ok(res.headers['mcp-session-id']);
    });
  });

  describe('the Origin of state-changing requests', () => {
    it('refuses a JSON move from a foreign origin with 403 and the arm does not move', async () => {
      await assertArmStill('foreign-origin move', async () => {
        for (const origin of [EVIL, 'null', `http://localhost:${port}`, 'http://127.0.0.1:1']) {
          const res = await fetch(`${url}/robot/move/joints`, {
            method: 'POST',
            headers: { 'content-type': JSON_TYPE, origin },
            body: MOVE,
          });
          assert.equal(res.status, 403, origin);
          assert.match(detailOf(await res.text()), /may not send POST requests here .*web\.cors_origins/);
          assert.equal(res.headers.get('access-control-allow-origin'), null);
        }
      });
    });

    it('refuses a cross-site POST without Origin (Sec-Fetch-Site) with 403', async () => {
      await assertArmStill('cross-site move', async () => {
        const res = await raw(
          url,
          'POST',
          '/robot/move/joints',
          { 'content-type': JSON_TYPE, 'sec-fetch-site': 'cross-site' },
          MOVE,
        );
        assert.equal(res.status, 403, res.text);
        assert.match(detailOf(res.text), /Sec-Fetch-Site: cross-site/);
      });
    });

    it('refuses a multipart /sequences/start from a foreign origin: no runner starts', async () => {
      const idle = await getJson<{ status: string; pid?: number }>(url, '/sequences/status');
      await assertArmStill('foreign-origin sequence', async () => {
        const form = sequenceForm(
          { home: { joints: [...WORK], speed: 1 }, waypoints: [{ joints: TARGET, speed: 1 }] },
          { n_iterations: '1' },
        );
        const res = await fetch(`${url}/sequences/start`, { method: 'POST', headers: { origin: EVIL }, body: form });
        assert.equal(res.status, 403, await res.clone().text());
        await res.body?.cancel();
      });
      assert.deepEqual(await getJson(url, '/sequences/status'), idle);
    });

    it('refuses a multipart /trajectory/send_csv from a foreign origin and the arm does not move', async () => {
      const logsBefore = await getJson<{ lines: string[] }>(url, '/trajectory/logs?n=300');
      await assertArmStill('foreign-origin CSV', async () => {
        const csv = `t,joint1,joint2,joint3,joint4,joint5,joint6,joint7\n1,${TARGET.join(',')}\n`;
        const res = await fetch(`${url}/trajectory/send_csv`, {
          method: 'POST',
          headers: { origin: EVIL },
          body: csvForm(csv),
        });
        assert.equal(res.status, 403);
        await res.body?.cancel();
      });
      assert.deepEqual(await getJson(url, '/trajectory/logs?n=300'), logsBefore);
    });

    it('refuses an MCP request and a session DELETE from a foreign origin', async () => {
      const res = await fetch(`${url}/mcp/mcp`, {
        method: 'POST',
        headers: { ...MCP_HEADERS, origin: EVIL },
        body: INITIALIZE,
      });
      assert.equal(res.status, 403);
      await res.body?.cancel();
      const del = await fetch(`${url}/mcp/mcp`, { method: 'DELETE', headers: { origin: EVIL, 'mcp-session-id': 'x' } });
      assert.equal(del.status, 403);
      await del.body?.cancel();
    });

    it('admits the same origin (the /docs page) and a web.cors_origins front end', async () => {
      for (const origin of [`http://${hostPort}`, UI]) {
        const res = await fetch(`${url}/robot/move/joints`, {
          method: 'POST',
          headers: { 'content-type': JSON_TYPE, origin },
          body: '{"bogus": 1}',
        });
        assert.equal(res.status, 422, `${origin}: past admission, the body is read`);
        assert.equal(res.headers.get('access-control-allow-origin'), origin === UI ? UI : null);
        await res.body?.cancel();
      }
    });

    it('serves a web.cors_origins front end with CORS headers, and it moves the arm', async () => {
      await atRest(url);
      const res = await steppedUntilSettled(
        clock,
        fetch(`${url}/robot/move/joints`, {
          method: 'POST',
          headers: { 'content-type': JSON_TYPE, origin: UI },
          body: MOVE,
        }),
        'the CORS front end move',
      );
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('access-control-allow-origin'), UI);
      assert.match(res.headers.get('access-control-expose-headers') ?? '', /Mcp-Session-Id/i);
      assert.match(res.headers.get('vary') ?? '', /Origin/);
      assert.equal(((await res.json()) as { success: boolean }).success, true);
      assert.ok(maxDiff((await atRest(url)).position, TARGET) < 1e-3);
      const back = await steppedUntilSettled(
        clock,
        fetch(`${url}/robot/move/joints`, {
          method: 'POST',
          headers: { 'content-type': JSON_TYPE },
          body: JSON.stringify({ joints: WORK, speed: 1 }),
        }),
        'the move back',
      );
      assert.equal(back.status, 200);
      await back.body?.cancel();
    });

    it('reads from a foreign origin are answered without CORS headers (the page cannot read them)', async () => {
      const res = await fetch(`${url}/robot/joint_states`, { headers: { origin: EVIL } });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('access-control-allow-origin'), null);
      await res.body?.cancel();
    });

    it('opens an MCP session for a web.cors_origins front end, its session id exposed', async () => {
      const res = await fetch(`${url}/mcp/mcp`, {
        method: 'POST',
        headers: { ...MCP_HEADERS, origin: UI },
        body: INITIALIZE,
      });
      assert.equal(res.status, 200);
      assert.ok(res.headers.get('mcp-session-id'));
      assert.equal(res.headers.get('access-control-allow-origin'), UI);
      assert.match(res.headers.get('access-control-expose-headers') ?? '', /Mcp-Session-Id/i);
      await res.body?.cancel();
    });
  });

  describe('CORS preflight', () => {
    const preflight = (path: string, origin: string) =>
      raw(url, 'OPTIONS', path, {
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type, authorization',
      });

    for (const path of ['/robot/move/joints', '/sequences/start', '/mcp/mcp']) {
      it(`answers a preflight to ${path} from a web.cors_origins front end with the CORS headers`, async () => {
        const res = await preflight(path, UI);
        assert.equal(res.status, 204);
        assert.equal(res.headers['access-control-allow-origin'], UI);
        assert.match(String(res.headers['access-control-allow-methods']), /POST/);
        const allowed = String(res.headers['access-control-allow-headers']);
        for (const h of ['authorization', 'content-type', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id'])
          assert.ok(allowed.includes(h), h);
      });

      it(`refuses a preflight to ${path} from a foreign origin without CORS headers`, async () => {
        for (const origin of [EVIL, 'null', 'http://cell-ui.local:3001']) {
          const res = await preflight(path, origin);
          assert.equal(res.status, 403, origin);
          assert.equal(res.headers['access-control-allow-origin'], undefined);
          assert.equal(res.headers['access-control-allow-headers'], undefined);
        }
      });
    }
  });
});

describe('the MCP SDK checks Host and Origin too (in addition to the app)', () => {
  // Only sessions are opened here: a bare server is enough.
  const endpoint = createMcpEndpoint(
    admissionPolicy({ host: '127.0.0.1', allowedHosts: ['cell.example'], corsOrigins: [UI] }),
    { createServer: () => new Server({ name: 'probe', version: '1' }, { capabilities: { tools: {} } }) },
  );
  after(() => endpoint.close());
  const post = (headers: Record<string, string>) =>
    endpoint.handler(
      new Request('http://127.0.0.1:8007/mcp/mcp', {
        method: 'POST',
        headers: { ...MCP_HEADERS, ...headers },
        body: INITIALIZE,
      }),
      TEST_ARRIVAL,
    );

  it('refuses a foreign Host or Origin with its own 403', async () => {
    for (const headers of [
      { host: 'evil.example:8007' },
      { host: '127.0.0.1:8007', origin: EVIL },
      { host: '127.0.0.1:8007', origin: 'null' },
    ]) {
      const res = await post(headers);
      assert.equal(res.status, 403, JSON.stringify(headers));
      assert.match(await res.text(), /Invalid (Host|Origin) header/);
    }
    assert.equal(endpoint.sessionCount(), 0);
  });

  it('admits the served names, the same origin and the CORS origins', async () => {
    for (const headers of [
      { host: '127.0.0.1:8007' },
      { host: 'localhost:8007', origin: 'http://localhost:8007' },
      { host: 'cell.example:8007', origin: UI },
    ]) {
      const res = await post(headers);
      assert.equal(res.status, 200, `${JSON.stringify(headers)}: ${await res.clone().text()}`);
      await res.body?.cancel();
    }
  });

  it('binds a session to the hosts it began with: a foreign Host on its id is refused', async () => {
    const res = await post({ host: '127.0.0.1:8007' });
    const id = res.headers.get('mcp-session-id');
    assert.ok(id);
    await res.body?.cancel();
    const hijack = await endpoint.handler(
      new Request('http://127.0.0.1:8007/mcp/mcp', {
        method: 'DELETE',
        headers: { host: 'evil.example:8007', 'mcp-session-id': id },
      }),
      TEST_ARRIVAL,
    );
    assert.equal(hijack.status, 403);
    await hijack.body?.cancel();
  });
});
