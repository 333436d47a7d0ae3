/**
 * Every text a user reads is rendered for its face (issue 25): no `{op:name}` placeholder is left in
 * the served OpenAPI document, in MCP's tools/list (descriptions and input and output schemas, under
 * both tool namings), in operation outputs (a dry run's message, a trajectory's warning) or in error
 * messages, over REST and over MCP.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { mcpTransport } from './support/mcp.ts';
import { WORK } from './support/live.ts';
import { createTestApp, PROJECT_ROOT, type TestApp } from './support/server.ts';

const PLACEHOLDER = /\{op:[^}]*\}/g;

/** The placeholders left in a text (none expected), with some context for the message. */
function leftIn(text: string): string[] {
  return [...text.matchAll(PLACEHOLDER)].map((m) => text.slice(Math.max(0, m.index - 60), m.index + m[0].length));
}

const FAR = WORK.map((q, j) => (j === 0 ? q + 1.2 : q));

for (const toolNames of ['armgate', 'original'] as const) {
  describe(`no unfilled placeholder in a rendered text (mcp.tool_names: ${toolNames})`, () => {
    let app: TestApp;
    let client: Client;
    const rest = async (path: string, body?: unknown) => {
      const res = await app.request(path, {
        method: body === undefined ? 'GET' : 'POST',
        ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
      });
      return { status: res.status, text: await res.text() };
    };
    const tool = (served: (own: string) => string) => async (name: string, args: Record<string, unknown>) =>
      JSON.stringify(await client.callTool({ name: served(name), arguments: args }));
    let served: (own: string) => string = (own) => own;

    before(async () => {
      app = await createTestApp({ sim: { time_scale: 2 }, mcp: { tool_names: toolNames } });
      client = new Client({ name: 'texts-test', version: '1' });
      await client.connect(mcpTransport(app));
      // The original naming serves the stack's route-derived names.
      const ORIGINAL: Record<string, string> = {
        move_to_joints: 'robot_move_joints_post',
        move_to_named_position: 'robot_move_named_post',
        send_trajectory: 'trajectory_send_post',
      };
      served = (own) => (toolNames === 'original' ? (ORIGINAL[own] ?? own) : own);
    });
    after(async () => {
      await client.close();
      await app.close();
    });

    it('the served /openapi.json and the built document', async () => {
      const served = await rest('/openapi.json');
      assert.equal(served.status, 200);
      assert.deepEqual(leftIn(served.text), []);
    });

    it('tools/list: every description and every input and output schema', async () => {
      const { tools } = await client.listTools();
      assert.ok(tools.length > 10);
      assert.deepEqual(leftIn(JSON.stringify(tools)), []);
    });

    it('outputs: a dry run names the plan execution, a trajectory with non-increasing times names the log', async () => {
      const planned = await rest('/robot/move/joints', { joints: FAR, speed: 0.5, dry_run: true });
      assert.equal(planned.status, 200, planned.text);
      assert.match(planned.text, /POST \/robot\/plans\/\{id\}\/execute/, 'the message names the route');
      assert.deepEqual(leftIn(planned.text), []);
      const times = {
        points: [
          { positions: WORK, time_from_start: 1 },
          { positions: WORK, time_from_start: 1 },
        ],
      };
      const warned = await rest('/trajectory/send', times);
      assert.equal(warned.status, 200, warned.text);
      assert.match(warned.text, /warning/);
      assert.deepEqual(leftIn(warned.text), []);
      const call = tool(served);
      const toolPlan = await call('move_to_joints', { joints: FAR, speed: 0.5, dry_run: true });
      assert.match(toolPlan, /execute_plan|plan/);
      assert.deepEqual(leftIn(toolPlan), []);
      assert.deepEqual(leftIn(await call('send_trajectory', times)), []);
    });

    it('errors: busy (409) over REST and as a tool error names the stop', async () => {
      const moving = app.request('/robot/move/joints', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ joints: FAR, speed: 0.2 }),
      });
      try {
        let busy = { status: 0, text: '' };
        for (let i = 0; i < 200 && busy.status !== 409; i++) {
          busy = await rest('/robot/move/named', { name: 'work', speed: 0.5 });
          if (busy.status !== 409) await new Promise((r) => setTimeout(r, 10));
        }
        assert.equal(busy.status, 409, busy.text);
        assert.match(busy.text, /POST \/stop/);
        assert.deepEqual(leftIn(busy.text), []);
        const refused = await tool(served)('move_to_named_position', { name: 'work', speed: 0.5 });
        assert.match(refused, /isError/);
        assert.deepEqual(leftIn(refused), []);
      } finally {
        await rest('/stop', {});
        await (await moving).text();
        await rest('/robot/move/joints', { joints: WORK, speed: 1 });
      }
    });
  });
}

describe('the OpenAPI document as built (openapi/openapi.json)', () => {
  it('has no unfilled placeholder', async () => {
    assert.deepEqual(leftIn(await readFile(path.join(PROJECT_ROOT, 'openapi', 'openapi.json'), 'utf8')), []);
  });
});
