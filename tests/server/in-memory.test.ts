import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { mcpTransport } from '../support/mcp.ts';
import { createTestApp, type TestApp } from '../support/server.ts';

const TOKEN = 'in-memory-token-1f';

describe('the app in memory (no socket): the same admission, authentication, routes and faces', () => {
  let app: TestApp;
  before(async () => {
    app = await createTestApp({ web: { token: TOKEN } });
  });
  after(() => app.close());
  const auth = { authorization: `Bearer ${TOKEN}` };

  it('answers a path, and logs it as the server does', async () => {
    const res = await app.request('/robot/joint_states', { headers: auth });
    assert.equal(res.status, 200);
    const body = (await res.json()) as { name: string[] };
    assert.equal(body.name.length, 7, 'seven joints');
    assert.ok(
      app.logs.some((line) => line.msg === 'request' && line.path === '/robot/joint_states' && line.status === 200),
      'a request line',
    );
  });

  it('authenticates: no token is 401, a wrong one too', async () => {
    assert.equal((await app.request('/robot/joint_states')).status, 401);
    const wrong = await app.request('/robot/joint_states', { headers: { authorization: 'Bearer nope' } });
    assert.equal(wrong.status, 401);
  });

  it('admits only its hosts and origins: a foreign Host or Origin is 403 and nothing moves', async () => {
    const before = (await (await app.request('/robot/joint_states', { headers: auth })).json()) as {
      position: number[];
    };
    const foreignHost = await app.request('/robot/move/named', {
      method: 'POST',
      headers: { ...auth, host: 'evil.example', 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'home' }),
    });
    assert.equal(foreignHost.status, 403);
    const foreignOrigin = await app.request('/robot/move/named', {
      method: 'POST',
      headers: { ...auth, origin: 'https://evil.example', 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'home' }),
    });
    assert.equal(foreignOrigin.status, 403);
    const after = (await (await app.request('/robot/joint_states', { headers: auth })).json()) as {
      position: number[];
    };
    assert.deepEqual(after.position, before.position, 'the arm did not move');
  });

  it('serves MCP to the SDK client through the same request function', async () => {
    const client = new Client({ name: 'in-memory', version: '1' });
    await client.connect(mcpTransport(app, { requestInit: { headers: auth } }));
    try {
      const result = (await client.callTool({ name: 'get_joint_states', arguments: {} })) as CallToolResult;
      assert.equal((result.structuredContent?.name as string[] | undefined)?.length, 7, 'the joint states');
    } finally {
      await client.close();
    }
  });
});
