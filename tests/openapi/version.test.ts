import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { mcpTransport } from '../support/mcp.ts';
import { createTestApp, PROJECT_ROOT, type TestApp } from '../support/server.ts';

describe('one version: the package, the OpenAPI document, the MCP server and the changelog', () => {
  let app: TestApp;
  let version: string;
  before(async () => {
    version = (JSON.parse(await readFile(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string })
      .version;
    app = await createTestApp();
  });
  after(() => app.close());

  it("GET /openapi.json's info.version is package.json's version", async () => {
    const doc = (await (await app.request('/openapi.json')).json()) as { info: { version: string } };
    assert.equal(doc.info.version, version);
    const served = JSON.parse(await readFile(path.join(PROJECT_ROOT, 'openapi', 'openapi.json'), 'utf8')) as {
      info: { version: string };
    };
    assert.equal(served.info.version, version, 'the committed document too (npm run build:openapi)');
  });

  it("the MCP server's serverInfo.version is the same", async () => {
    const client = new Client({ name: 'version-test', version: '1' });
    await client.connect(mcpTransport(app));
    try {
      assert.equal(client.getServerVersion()?.version, version);
    } finally {
      await client.close();
    }
  });

  it('CHANGELOG.md has a section for it', async () => {
    const changelog = await readFile(path.join(PROJECT_ROOT, 'CHANGELOG.md'), 'utf8');
    assert.match(changelog, new RegExp(`^## ${version.replaceAll('.', '\\.')} `, 'm'));
  });
});
