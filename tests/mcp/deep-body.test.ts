/**
 * An MCP body of 16 KiB or more (parsed a slice per turn, lib/body/sliced-json.ts) holding a small value nested more
 * than 256 arrays deep is JSON, as JSON.parse reads it: a batch of a stop and a call with such an argument is not a
 * parse error (it was: the stop was not carried out), and its answers are those of the same batch under 16 KiB. So is
 * one with more than 256 arrays of 16 KiB or more nested, which the slices do not frame: it is read whole.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MAX_DEPTH, NATIVE_CHARS } from '../../lib/body/sliced-json.ts';
import { openMcpSession, type RawMcpSession } from '../support/mcp.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const CALL = (id: number, name: string, args: unknown) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});

describe('large MCP bodies nested deeper than the slices frame', () => {
  let server: TestServer;
  let session: RawMcpSession;
  before(async () => {
    server = await startTestServer();
    session = await openMcpSession(server.url, { name: 'deep' });
  });
  after(async () => {
    await server?.close();
  });

  it('is read as JSON.parse reads it: the stop in the batch is carried out, answers as for a small body', async () => {
    const deep = JSON.parse(`${'['.repeat(MAX_DEPTH + 1)}${']'.repeat(MAX_DEPTH + 1)}`);
    const answers: unknown[] = [];
    for (const pad of ['', ' '.repeat(NATIVE_CHARS)]) {
      const body = `${pad}${JSON.stringify([CALL(1, 'stop', {}), CALL(2, 'get_joint_states', { deep })])}`;
      assert.equal(body.length >= NATIVE_CHARS, pad !== '');
      const res = await fetch(`${server.url}/mcp/mcp`, { method: 'POST', headers: session.headers, body });
      const text = await res.text();
      assert.equal(res.status, 200, text.slice(0, 300));
      const batch = JSON.parse(text.startsWith('[') ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? text)) as {
        id: number;
        result?: { isError?: boolean };
        error?: unknown;
      }[];
      const stop = batch.find((a) => a.id === 1);
      assert.equal(stop?.result?.isError, undefined, text.slice(0, 300));
      answers.push(batch);
    }
    assert.deepEqual(answers[1], answers[0]);
  });

  it('is read as JSON.parse reads it (as a REST body is): the stop in the batch is carried out', async () => {
    // MAX_DEPTH + 1 arrays nested, each longer than NATIVE_CHARS (they hold the long string): the slices frame at most
    // MAX_DEPTH of them and refuse the text; JSON.parse takes it.
    const depth = MAX_DEPTH + 1;
    const deep = `${'['.repeat(depth)}"${'x'.repeat(NATIVE_CHARS)}"${']'.repeat(depth)}`;
    const call = JSON.stringify(CALL(2, 'get_joint_states', { deep: 0 })).replace('"deep":0', `"deep":${deep}`);
    const body = `[${JSON.stringify(CALL(1, 'stop', {}))},${call}]`;
    const res = await fetch(`${server.url}/mcp/mcp`, { method: 'POST', headers: session.headers, body });
    const text = await res.text();
    assert.equal(res.status, 200, text.slice(0, 300));
    const batch = JSON.parse(text.startsWith('[') ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? text)) as {
      id: number;
      result?: { isError?: boolean };
    }[];
    assert.equal(batch.find((a) => a.id === 1)?.result?.isError, undefined, text.slice(0, 300));
    assert.equal(batch.find((a) => a.id === 2)?.result?.isError, true, 'get_joint_states takes no argument');
  });
});
