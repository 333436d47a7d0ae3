/**
 * Numbers sent as strings ("0.5"), one rule on every face: a string where the schema wants a number or a boolean is
 * converted by the call pipeline (lib/core/invoke.ts), as FastAPI took it in a REST body, whatever carried the call:
 * a REST body, an MCP tool's arguments, a jog WebSocket message, a Foxglove service call in JSON. Anything else is
 * still the schema's to judge: a word where a number goes and an unknown key stay 422s naming the field.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import WebSocket from 'ws';
import { mcpTransport } from '../support/mcp.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { type Connected, connect } from '../foxglove/support.ts';

const AS_STRINGS = ['0', '0.25', '0', '-1.57', '0', '1.57', '0'];
const AS_NUMBERS = AS_STRINGS.map(Number);

describe('numbers sent as strings: one rule on every face', () => {
  let server: TestServer;
  let mcp: Client;
  let foxglove: Connected;
  before(async () => {
    server = await startTestServer({ foxglove: { enabled: true, port: 0, address: '127.0.0.1' } });
    mcp = new Client({ name: 'numbers-as-strings', version: '1' });
    await mcp.connect(mcpTransport(server.url));
    assert.ok(server.foxglove);
    foxglove = await connect(server.foxglove.url);
  });
  after(async () => {
    foxglove?.close();
    await mcp?.close();
    await server?.close();
  });

  it('REST: a JSON body\'s "0.5" and "true" are taken; a word and an unknown key are 422s', async () => {
    const post = (body: unknown) =>
      fetch(`${server.url}/robot/move/joints`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const res = await post({ joints: AS_STRINGS, speed: '0.5', dry_run: 'true' });
    const body = (await res.json()) as { success: boolean; plan?: { final_joints: number[] } };
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.equal(body.success, true);
    assert.deepEqual(body.plan?.final_joints, AS_NUMBERS, 'a dry run (the plan, nothing moved) to the numbers sent');
    const word = await post({ joints: AS_NUMBERS, speed: 'fast', dry_run: true });
    assert.equal(word.status, 422);
    assert.deepEqual(((await word.json()) as { detail: { loc: unknown[] }[] }).detail[0]?.loc, ['body', 'speed']);
    const typo = await post({ joints: AS_NUMBERS, sped: '0.5', dry_run: true });
    assert.equal(typo.status, 422, 'a misspelt key is not a default speed');
    await typo.body?.cancel();
  });

  it('MCP: a tool\'s arguments "0.5" and "true" are taken; a word is a tool error naming the field', async () => {
    const taken = await mcp.callTool({
      name: 'move_to_joints',
      arguments: { joints: AS_STRINGS, speed: '0.5', dry_run: 'true' },
    });
    assert.notEqual(taken.isError, true, JSON.stringify(taken.content));
    const out = taken.structuredContent as { success: boolean; plan?: { final_joints: number[] } };
    assert.equal(out.success, true);
    assert.deepEqual(out.plan?.final_joints, AS_NUMBERS, 'a dry run (the plan, nothing moved) to the numbers sent');
    const word = await mcp.callTool({
      name: 'move_to_joints',
      arguments: { joints: AS_NUMBERS, speed: 'fast', dry_run: true },
    });
    assert.equal(word.isError, true);
    assert.match(JSON.stringify(word.content), /speed/);
  });

  it('the jog WebSocket: a message\'s "0" and "60" are taken (no error); a word is a 422 naming the field', async () => {
    const ws = new WebSocket(`${server.url.replace('http', 'ws')}/robot/jog`);
    const errors: { status: number; detail: { loc: unknown[] }[] }[] = [];
    ws.on('message', (data) => {
      const message = JSON.parse(data.toString()) as { type: string };
      if (message.type === 'error') errors.push(message as never);
    });
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    // An all-zero jog (the arm stays at rest) with its numbers as strings, then a word where a number goes: the
    // socket answers a command in order, so the first error is the word's only if the strings were taken.
    ws.send(JSON.stringify({ joints: ['0', '0', '0', '0', '0', '0', '0'], ttl_ms: '60' }));
    ws.send(JSON.stringify({ joints: ['0', '0', 'fast', '0', '0', '0', '0'] }));
    for (let i = 0; i < 500 && errors.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    ws.close();
    assert.deepEqual(
      errors.map((e) => [e.status, e.detail[0]?.loc]),
      [[422, ['message', 'joints', 2]]],
    );
  });

  it('Foxglove: a service call in JSON with "90" for a number is taken; a word is a failure naming the field', async () => {
    const serviceId = foxglove.service('/armgate/set_override')?.id ?? 0;
    const call = (callId: number, json: string) =>
      new Promise<{ ok: true; body: Record<string, unknown> } | { ok: false; message: string }>((resolve) => {
        foxglove.client.on('serviceCallResponse', (r) => {
          if (r.callId === callId)
            resolve({
              ok: true,
              body: JSON.parse(Buffer.from(r.data.buffer, r.data.byteOffset, r.data.byteLength).toString()),
            });
        });
        foxglove.client.on('serviceCallFailure', (f) => {
          if (f.callId === callId) resolve({ ok: false, message: f.message });
        });
        foxglove.client.sendServiceCallRequest({
          serviceId,
          callId,
          encoding: 'json',
          data: new TextEncoder().encode(json),
        });
      });
    const taken = await call(1, '{"percent": "90"}');
    assert.ok(taken.ok, JSON.stringify(taken));
    assert.equal(JSON.parse(String(taken.body.json)).percent, 90);
    const word = await call(2, '{"percent": "ninety"}');
    assert.ok(!word.ok);
    assert.match(word.message, /percent/);
    const back = await call(3, '{"percent": 100}');
    assert.ok(back.ok);
  });
});
