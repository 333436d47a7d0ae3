import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type FloorServer, startFloorServer } from '../../bench/floor-server.ts';

/**
 * The bench's server that does nothing (the mcp section's floor rows): it must answer the two clients exactly as armgate
 * does for the measured calls, so that what the clients spend on it is what they spend on armgate's answers.
 */
describe('bench floor server', () => {
  const rest = '{"name":["joint1"],"position":[0.5],"velocity":[0],"effort":[1.25]}';
  const toolResult = JSON.stringify({ content: [{ type: 'text', text: rest }], structuredContent: JSON.parse(rest) });
  let floor: FloorServer;
  before(async () => {
    floor = await startFloorServer({ rest, toolResult, protocolVersion: '2025-06-18' });
  });
  after(async () => {
    await floor.close();
  });

  it('answers the GET with the REST bytes it was given, with their length', async () => {
    const res = await fetch(`${floor.url}/robot/joint_states`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/json');
    assert.equal(res.headers.get('content-length'), String(Buffer.byteLength(rest)));
    assert.equal(await res.text(), rest);
  });

  it('serves the SDK client: initialize, then each call answered with the canned result under its own id', async () => {
    const client = new Client({ name: 'test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${floor.url}/mcp`)));
    try {
      assert.equal(client.getServerVersion()?.name, 'floor');
      for (let k = 0; k < 3; k++) {
        const result = await client.callTool({ name: 'get_joint_states', arguments: {} });
        assert.deepEqual(result, JSON.parse(toolResult));
      }
    } finally {
      await client.close();
    }
  });

  it('echoes a string id, takes a notification with 202, and refuses other paths and methods', async () => {
    const post = (body: string) =>
      fetch(`${floor.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const called = await post('{"jsonrpc":"2.0","id":"a-7","method":"tools/call","params":{}}');
    assert.deepEqual(await called.json(), { result: JSON.parse(toolResult), jsonrpc: '2.0', id: 'a-7' });
    assert.equal(called.headers.get('mcp-session-id'), 'floor');
    const noted = await post('{"jsonrpc":"2.0","method":"notifications/initialized"}');
    assert.equal(noted.status, 202);
    assert.equal((await fetch(`${floor.url}/mcp`)).status, 405);
    assert.equal((await fetch(`${floor.url}/elsewhere`)).status, 404);
  });
});
