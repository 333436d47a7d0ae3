import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { after, before, describe, it } from 'node:test';
import { handlers } from '../../handlers/index.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const TOKEN = 'test-token-9f2c';

describe('live server with a token', () => {
  let server: TestServer;
  before(async () => {
    // A wrong token on every route from one address: more than the default burst of token guesses (429 beyond it,
    // tests/http/guessing.test.ts), so this suite allows more.
    server = await startTestServer({ web: { token: TOKEN, limits: { token_guess_burst: 1000 } } });
  });
  after(async () => {
    await server.close();
  });

  const call = (method: string, path: string, headers: Record<string, string> = {}) =>
    fetch(`${server.url}${path}`, { method, headers, ...(method === 'POST' ? { body: '{}' } : {}) });

  for (const { operation } of handlers) {
    const route = operation.rest;
    it(`${route.method} ${route.path} answers 401 with WWW-Authenticate without a token`, async () => {
      const res = await call(route.method, route.path);
      assert.equal(res.status, 401);
      assert.equal(res.headers.get('www-authenticate'), 'Bearer');
      const body = (await res.json()) as { detail: string };
      assert.equal(typeof body.detail, 'string');
      assert.ok(!body.detail.includes(TOKEN));
    });

    it(`${route.method} ${route.path} answers 401 to a wrong token and passes the right one`, async () => {
      const wrong = await call(route.method, route.path, { authorization: `Bearer ${TOKEN}x` });
      assert.equal(wrong.status, 401);
      await wrong.body?.cancel();
      const right = await call(route.method, route.path, { authorization: `Bearer ${TOKEN}` });
      assert.notEqual(right.status, 401);
      await right.body?.cancel();
    });
  }

  it('rejects other schemes and malformed Authorization headers', async () => {
    for (const header of [`Basic ${TOKEN}`, TOKEN, 'Bearer', `Bearer ${TOKEN} extra`]) {
      const res = await call('GET', '/robot/joint_states', { authorization: header });
      assert.equal(res.status, 401, header);
      await res.body?.cancel();
    }
  });

  it('serves /docs, /redoc and /openapi.json without a token', async () => {
    for (const path of [
      '/docs',
      '/redoc',
      '/openapi.json',
      '/docs/assets/swagger-ui-bundle.js',
      '/redoc/assets/redoc.standalone.js',
    ]) {
      const res = await call('GET', path);
      assert.equal(res.status, 200, path);
      await res.body?.cancel();
    }
  });

  it('serves the docs assets as their packages hold them, loaded on the first request for them (several at once: all alike)', async () => {
    const require = createRequire(import.meta.url);
    const swagger = await readFile(require.resolve('swagger-ui-dist/swagger-ui-bundle.js'));
    const [a, b] = await Promise.all([
      call('GET', '/docs/assets/swagger-ui-bundle.js'),
      call('GET', '/docs/assets/swagger-ui-bundle.js'),
    ]);
    for (const res of [a, b]) {
      assert.equal(res.status, 200);
      assert.deepEqual(Buffer.from(await res.arrayBuffer()), swagger);
    }
  });

  it('declares an HTTP bearer scheme and secures every REST operation in the served document', async () => {
    const doc = (await (await call('GET', '/openapi.json')).json()) as {
      components: { securitySchemes: Record<string, { type: string; scheme: string }> };
      paths: Record<string, Record<string, { security?: unknown[] }>>;
    };
    assert.deepEqual(doc.components.securitySchemes.bearerAuth, {
      ...doc.components.securitySchemes.bearerAuth,
      type: 'http',
      scheme: 'bearer',
    });
    for (const { operation } of handlers) {
      const route = operation.rest;
      assert.deepEqual(doc.paths[route.path]?.[route.method.toLowerCase()]?.security, [{ bearerAuth: [] }], route.path);
    }
  });

  it('answers 404 for an unknown path and 405 with Allow for a wrong method (after auth)', async () => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    const missing = await call('GET', '/robot/nothing', auth);
    assert.equal(missing.status, 404);
    assert.equal(typeof ((await missing.json()) as { detail: string }).detail, 'string');
    const wrong = await call('DELETE', '/robot/joint_states', auth);
    assert.equal(wrong.status, 405);
    assert.equal(wrong.headers.get('allow'), 'GET');
    assert.match(((await wrong.json()) as { detail: string }).detail, /GET/);
  });

  it('routes a path written another way, a query and a path parameter as the exact path is routed', async () => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    const exact = await call('GET', '/robot/joint_states', auth);
    const slash = await call('GET', '/robot/joint_states/', auth);
    assert.equal(exact.status, 200);
    assert.equal(slash.status, 200, 'a trailing slash reaches the same operation');
    assert.deepEqual(Object.keys(await slash.json()), Object.keys(await exact.json()));
    const query = await call('GET', '/robot/positions?unknown=1', auth);
    assert.equal(query.status, 422, 'the exact path with a query is validated as the operation says');
    assert.deepEqual(((await query.json()) as { detail: { loc: string[] }[] }).detail[0]?.loc, ['query', 'unknown']);
    const head = await call('HEAD', '/robot/joint_states', auth);
    assert.equal(head.status, 405, 'a GET route does not answer HEAD');
    assert.equal(head.headers.get('allow'), 'GET');
    const plan = await call('POST', '/robot/plans/no-such-plan/execute', auth);
    assert.equal(plan.status, 404, 'a path parameter is still matched by the router');
    assert.match(((await plan.json()) as { detail: string }).detail, /no-such-plan/);
  });

  it('refuses an unknown query parameter to an operation without input (422), but a stop stops whatever it is sent with', async () => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    for (const path of ['/robot/joint_states?x=1', '/robot/override?speed=0.5', '/sequences/status?id=3']) {
      const res = await call('GET', path, auth);
      assert.equal(res.status, 422, path);
      const [issue] = ((await res.json()) as { detail: { loc: string[]; type: string }[] }).detail;
      assert.deepEqual(issue?.loc, ['query', path.split('?')[1]?.split('=')[0]], path);
      assert.equal(issue?.type, 'extra_forbidden', path);
    }
    const resume = await call('POST', '/robot/resume?speed=2', auth);
    assert.equal(resume.status, 422, 'a resume (a motion) with an unknown parameter does not run');
    const stop = await call('POST', '/stop?reason=test', auth);
    assert.equal(stop.status, 200, 'a stop is never refused for its query');
    assert.equal(((await stop.json()) as { success: boolean }).success, true);
  });

  it('writes one structured log line per request with method, path, status and milliseconds, never the token', async () => {
    const before = server.logs.length;
    // A query the operation does not take (a 422): the line has the path without it.
    const res = await call('GET', '/robot/positions?token=x', { authorization: `Bearer ${TOKEN}` });
    await res.body?.cancel();
    const lines = server.logs.slice(before);
    assert.equal(lines.length, 1);
    const line = lines[0] ?? {};
    assert.equal(line.method, 'GET');
    assert.equal(line.path, '/robot/positions');
    assert.equal(res.status, 422);
    assert.equal(line.status, 422);
    assert.equal(typeof line.ms, 'number');
    assert.ok(!JSON.stringify(server.logs).includes(TOKEN));
  });

  it('answers reads in parallel', async () => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => call('GET', i % 2 ? '/robot/pose' : '/robot/joint_states', auth)),
    );
    for (const res of results) {
      assert.equal(res.status, 200);
      await res.body?.cancel();
    }
  });
});

describe('live server without a token', () => {
  it('answers REST routes without authentication on a loopback host', async () => {
    const server = await startTestServer();
    try {
      const res = await fetch(`${server.url}/robot/joint_states`);
      assert.equal(res.status, 200);
      const body = (await res.json()) as { position: number[] };
      assert.deepEqual(body.position, [0, 0, 0, -1.57, 0, 1.57, 0]);
    } finally {
      await server.close();
    }
  });

  it('refuses a second server in the same process (the context is shared) and keeps the first serving', async () => {
    const first = await startTestServer();
    try {
      await assert.rejects(startTestServer(), /an armgate server is already running in this process/);
      assert.equal((await fetch(`${first.url}/robot/joint_states`)).status, 200);
    } finally {
      await first.close();
    }
    const second = await startTestServer();
    try {
      assert.equal(
        (await fetch(`${second.url}/robot/joint_states`)).status,
        200,
        'a server starts again once the first is closed',
      );
    } finally {
      await second.close();
    }
  });

  it('starts at the configured initial position given as joint angles', async () => {
    const q = [0.1, 0.2, 0.3, -1.0, 0.4, 0.5, 0.6];
    const server = await startTestServer({ sim: { initial_position: q } });
    try {
      const body = (await (await fetch(`${server.url}/robot/joint_states`)).json()) as { position: number[] };
      assert.deepEqual(body.position, q);
    } finally {
      await server.close();
    }
  });

  it('answers 503 on joint_states and pose when the controller is silent', async () => {
    const server = await startTestServer({ sim: { publish_joint_states: false } });
    try {
      const [states, pose, positions] = await Promise.all([
        fetch(`${server.url}/robot/joint_states`),
        fetch(`${server.url}/robot/pose`),
        fetch(`${server.url}/robot/positions`),
      ]);
      assert.equal(states.status, 503);
      assert.equal(pose.status, 503);
      assert.equal(positions.status, 200, 'positions come from the SRDF, not the controller');
      assert.match(((await states.json()) as { detail: string }).detail, /joint state/);
      await pose.body?.cancel();
      await positions.body?.cancel();
    } finally {
      await server.close();
    }
  });
});

describe('docs assets on demand', () => {
  it('loads once for every caller, not before the first, and again after a failed load', async () => {
    const { docsAssetsOnDemand } = await import('../../lib/http/docs.ts');
    let loads = 0;
    let fail = true;
    const assets = docsAssetsOnDemand(async () => {
      loads++;
      if (fail) throw new Error('swagger-ui-dist is missing');
      return { files: new Map() };
    });
    assert.equal(loads, 0, 'nothing is loaded before the first request');
    await assert.rejects(assets(), /swagger-ui-dist is missing/);
    fail = false;
    const [first, second] = await Promise.all([assets(), assets()]);
    assert.equal(first, second);
    assert.equal(loads, 2, 'one failed load, then one load for both callers');
    assert.equal(await assets(), first);
    assert.equal(loads, 2);
  });
});
