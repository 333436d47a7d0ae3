/**
 * Teaching over MCP (issue 34, item 5): the tools save_position and delete_position, derived from their operations,
 * with annotations that say they change what armgate keeps and never the arm; a taught position is then listed (tool
 * and resource) and reached with move_to_named_position; the SRDF's positions stay read-only; a read token may not teach.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { mcpTransport } from '../support/mcp.ts';
import { createTestApp, type TestApp } from '../support/server.ts';
import { maxDiff } from '../support/live.ts';

const ADMIN = 'mcp-teach-admin-0a1b2c3d';
const VIEWER = 'mcp-teach-viewer-4e5f6a7b';
const PICK = [0.4, 0.35, 0, -1.3, 0, 1.2, 0.2];
const byName = (q: readonly number[]) => Object.fromEntries(q.map((v, i) => [`joint${i + 1}`, v]));

interface ToolResult {
  isError?: boolean;
  content: { type: string; text?: string }[];
  structuredContent?: Record<string, unknown>;
}

describe('MCP: save_position and delete_position', () => {
  let server: TestApp;
  let client: Client;
  let viewer: Client;
  const connect = async (token: string) => {
    const c = new Client({ name: 'teach-test', version: '1' });
    await c.connect(mcpTransport(server, { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    return c;
  };
  const call = async (name: string, args: Record<string, unknown> = {}, as = client) =>
    (await as.callTool({ name, arguments: args })) as ToolResult;
  const text = (r: ToolResult) => r.content.map((c) => c.text ?? '').join(' ');

  before(async () => {
    server = await createTestApp({
      web: { token: ADMIN, tokens: [{ name: 'viewer', token: VIEWER, role: 'read' }] },
      sim: { time_scale: 20 },
    });
    client = await connect(ADMIN);
    viewer = await connect(VIEWER);
  });
  after(async () => {
    await viewer.close();
    await client.close();
    await server.close();
  });

  it('lists both tools with annotations: they change state (not read-only), never the arm (closed world)', async () => {
    const { tools } = await client.listTools();
    for (const name of ['save_position', 'delete_position']) {
      const tool = tools.find((t) => t.name === name);
      assert.ok(tool, `${name} is a tool`);
      assert.deepEqual(
        {
          readOnly: tool.annotations?.readOnlyHint,
          destructive: tool.annotations?.destructiveHint,
          idempotent: tool.annotations?.idempotentHint,
          openWorld: tool.annotations?.openWorldHint,
        },
        { readOnly: false, destructive: true, idempotent: true, openWorld: false },
        name,
      );
      assert.match(tool.description ?? '', /Never moves the arm/);
      assert.deepEqual(tool.inputSchema.required, ['name'], `${name}: only the name is required`);
    }
    const save = tools.find((t) => t.name === 'save_position');
    const properties = (save?.inputSchema.properties ?? {}) as Record<string, { properties?: Record<string, unknown> }>;
    const joints = properties.joints;
    assert.deepEqual(Object.keys(joints?.properties ?? {}), Object.keys(byName(PICK)), 'the joints by name');
    const move = tools.find((t) => t.name === 'move_to_named_position');
    assert.match(move?.description ?? '', /taught with save_position/, 'the move tool says it takes taught names');
  });

  it('teaches a position, lists it (tool and resource) and moves there with move_to_named_position', async () => {
    const saved = await call('save_position', { name: 'mcp_pick', joints: byName(PICK) });
    assert.ok(!saved.isError, text(saved));
    assert.deepEqual(
      { ...saved.structuredContent, message: undefined },
      { success: true, name: 'mcp_pick', source: 'taught', joints: byName(PICK), created: true, message: undefined },
    );
    assert.match(String(saved.structuredContent?.message), /move there with move_to_named_position/);
    const listed = (await call('list_named_positions')).structuredContent as {
      positions: { name: string; source: string }[];
    };
    assert.deepEqual(
      listed.positions.map((p) => `${p.name}:${p.source}`),
      ['home:srdf', 'work:srdf', 'transport:srdf', 'mcp_pick:taught'],
    );
    const resource = await client.readResource({ uri: 'armgate://robot/positions' });
    const read = JSON.parse((resource.contents[0] as { text: string }).text) as { name: string; source: string }[];
    assert.ok(
      read.some((p) => p.name === 'mcp_pick' && p.source === 'taught'),
      'the resource lists it',
    );
    const moved = await call('move_to_named_position', { name: 'mcp_pick', speed: 1 });
    assert.equal(moved.structuredContent?.success, true, text(moved));
    const state = (await call('get_joint_states')).structuredContent as { position: number[] };
    assert.ok(maxDiff(state.position, PICK) < 1e-3, `at the taught angles: ${state.position}`);
    // Where the arm stands, taught under a second name.
    const here = await call('save_position', { name: 'mcp_here' });
    assert.ok(!here.isError, text(here));
    assert.ok(maxDiff(Object.values(here.structuredContent?.joints as Record<string, number>), PICK) < 1e-3);
  });

  it("refuses the SRDF's names, bad names and out-of-limit angles as tool errors; a read token cannot teach", async () => {
    const home = await call('save_position', { name: 'home' });
    assert.equal(home.isError, true);
    assert.match(text(home), /'home' is a position of the robot description \(SRDF\): it is read-only/);
    assert.match(text(home), /Nothing was changed/);
    const bad = await call('save_position', { name: '9lives' });
    assert.equal(bad.isError, true);
    assert.match(text(bad), /name: the name must be a letter or _/);
    const far = await call('save_position', { name: 'far', joints: { ...byName(PICK), joint4: 2.5 } });
    assert.equal(far.isError, true);
    assert.match(text(far), /joints\.joint4: joint4 = 2\.5 rad is outside its limits/);
    const refused = await call('save_position', { name: 'viewer_pos', joints: byName(PICK) }, viewer);
    assert.equal(refused.isError, true);
    assert.match(text(refused), /needs the role 'operate'/);
    const deleteRefused = await call('delete_position', { name: 'mcp_pick' }, viewer);
    assert.equal(deleteRefused.isError, true);
    const listed = (await call('list_named_positions')).structuredContent as { positions: { name: string }[] };
    assert.deepEqual(
      listed.positions.map((p) => p.name),
      ['home', 'work', 'transport', 'mcp_here', 'mcp_pick'],
      'nothing was saved or deleted',
    );
  });

  it('deletes a taught position; deleting it again is a tool error saying it is not taught', async () => {
    const deleted = await call('delete_position', { name: 'mcp_pick' });
    assert.ok(!deleted.isError, text(deleted));
    assert.deepEqual(deleted.structuredContent?.joints, byName(PICK));
    const again = await call('delete_position', { name: 'mcp_pick' });
    assert.equal(again.isError, true);
    assert.match(text(again), /no taught position 'mcp_pick'/);
    const home = await call('delete_position', { name: 'home' });
    assert.equal(home.isError, true);
    assert.match(text(home), /read-only/);
    const moved = await call('move_to_named_position', { name: 'mcp_pick' });
    assert.equal(moved.isError, true, 'a deleted position is unknown to the move');
  });
});
