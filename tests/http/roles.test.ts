import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { mcpTransport } from '../support/mcp.ts';
import { handlers, operations } from '../../handlers/index.ts';

/** The operations that are tools, in the order of the handler list. */
const TOOL_OPERATIONS = operations.filter((op) => op.mcp);
import { type Role, roleAllows, roleNeeded } from '../../lib/core/roles.ts';
import { csvForm } from '../support/multipart.ts';
import type { TestApp } from '../support/server.ts';
import type { SteppedClock } from '../../lib/clock.ts';
import { createSteppedApp, steppedTarget } from '../support/stepped.ts';
import { refusalsPath } from '../../lib/audit/trail.ts';
import type { InMemory, Target } from '../support/live.ts';

const ADMIN = 'admin-token-5e1d9a7c3b';
const TOKENS: Record<Role, string> = {
  read: 'viewer-token-0123456789',
  operate: 'operator-token-abcdef0123',
  admin: ADMIN,
};
const NAMES: Record<Role, string> = { read: 'viewer', operate: 'operator', admin: 'web.token' };
const ROLES: Role[] = ['read', 'operate', 'admin'];

interface ToolResult {
  isError?: boolean;
  content: { type: string; text?: string }[];
}

async function connect(url: Target, token: string): Promise<Client> {
  const client = new Client({ name: 'roles-test', version: '1' });
  await client.connect(
    mcpTransport(url, {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

/** A request for the route whose input is wrong on purpose, so that an allowed call answers without moving. */
function harmlessRequest(method: string, route: string, token: string): RequestInit & { path: string } {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (method === 'GET') return { path: route, method, headers };
  if (route === '/trajectory/send_csv' || route === '/sequences/start')
    return { path: route, method, headers, body: csvForm('not,a,csv\n', { part: 'wrong_part' }) };
  if (route.includes('{id}'))
    return {
      path: route.replace('{id}', 'no-such-plan'),
      method,
      headers: { ...headers, 'content-type': 'application/json' },
      body: '{}',
    };
  return { path: route, method, headers: { ...headers, 'content-type': 'application/json' }, body: '{"nonsense": 1}' };
}

describe('roles per token on every route and tool, and the audit trail', () => {
  let server: TestApp;
  /** The app on a clock the test steps: each request steps it until answered (a move answers at its goal). */
  let clock: SteppedClock;
  let app: InMemory;
  let dir: string;
  let auditFile: string;
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'armgate-roles-'));
    auditFile = path.join(dir, 'audit.jsonl');
    ({ app: server, clock } = await createSteppedApp({
      web: {
        token: ADMIN,
        tokens: [
          { name: 'viewer', token: TOKENS.read, role: 'read' },
          { name: 'operator', token: TOKENS.operate, role: 'operate' },
        ],
      },
      sim: { time_scale: 20 },
      audit: { path: auditFile },
    }));
    app = steppedTarget(server, clock);
  });
  after(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  const jointStates = async () => {
    const res = await app.request(`/robot/joint_states`, { headers: { authorization: `Bearer ${ADMIN}` } });
    return ((await res.json()) as { position: number[] }).position;
  };

  for (const { operation: op } of handlers) {
    const { method, path: route } = op.rest;
    for (const role of ROLES) {
      const allowed = roleAllows(role, roleNeeded(op));
      it(`${method} ${route} with a ${role} token is ${allowed ? 'served' : '403 naming the role needed'}`, async () => {
        const { path: p, ...init } = harmlessRequest(method, route, TOKENS[role]);
        const before = await jointStates();
        const res = await app.request(`${p}`, init);
        const body = (await res.json()) as { detail?: unknown };
        if (allowed) assert.notEqual(res.status, 403, `${route} must be served for ${role}: ${JSON.stringify(body)}`);
        else {
          assert.equal(res.status, 403, `${route} must be refused for ${role}`);
          assert.equal(
            body.detail,
            `${method} ${route} needs the role '${roleNeeded(op)}'; the token '${NAMES[role]}' has the role '${role}'`,
            'the 403 body names the role needed and the token name',
          );
        }
        assert.deepEqual(await jointStates(), before, 'nothing moved');
      });
    }
  }

  it('refuses a real motion to a read token with 403 and the arm does not move', async () => {
    const before = await jointStates();
    const res = await app.request(`/robot/move/joints`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKENS.read}`, 'content-type': 'application/json' },
      body: JSON.stringify({ joints: [0.3, 0.3, 0, -1.2, 0, 1.2, 0], speed: 1 }),
    });
    assert.equal(res.status, 403, 'a read token may not move the arm');
    await clock.advance(100);
    assert.deepEqual(await jointStates(), before, 'the arm stayed where it was');
  });

  it('shows each token over MCP only the tools its role may call, and refuses the others as tool errors', async () => {
    for (const role of ROLES) {
      const client = await connect(app, TOKENS[role]);
      try {
        const { tools } = await client.listTools();
        const expected = TOOL_OPERATIONS.filter((op) => roleAllows(role, roleNeeded(op))).map((op) => op.name);
        assert.deepEqual(
          tools.map((t) => t.name),
          expected,
          `the ${role} token lists exactly the tools its role may call`,
        );
        if (role === 'read') {
          assert.ok(expected.includes('stop'), 'stop is open to every authenticated role');
          assert.ok(!expected.includes('move_to_joints'), 'a read token does not see the motion tools');
          const before = await jointStates();
          for (const op of TOOL_OPERATIONS.filter((o) => !roleAllows('read', roleNeeded(o)))) {
            const result = (await client.callTool({
              name: op.name,
              arguments: op.name === 'move_to_joints' ? { joints: [0.3, 0.3, 0, -1.2, 0, 1.2, 0] } : {},
            })) as ToolResult;
            assert.equal(result.isError, true, `${op.name} is a tool error for a read token`);
            assert.match(
              result.content.map((c) => c.text).join(' '),
              new RegExp(`needs the role '${roleNeeded(op)}'`),
              `${op.name}'s error names the role needed`,
            );
          }
          assert.deepEqual(await jointStates(), before, 'nothing moved on refusal over MCP');
        }
      } finally {
        await client.close();
      }
    }
  });

  it('writes an audit line per state-changing call on both faces, refusals included, never a token', async () => {
    const operator = await connect(app, TOKENS.operate);
    try {
      const moved = (await operator.callTool({
        name: 'move_to_joints',
        arguments: { joints: [0, 0.4, 0, -1.4, 0, 1.3, 0], speed: 1 },
      })) as ToolResult;
      assert.ok(!moved.isError, `the operator moves over MCP: ${JSON.stringify(moved.content)}`);
    } finally {
      await operator.close();
    }
    const rest = await app.request(`/robot/move/named`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKENS.operate}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'work', speed: 1 }),
    });
    assert.equal(rest.status, 200, 'the operator moves over REST');
    await rest.body?.cancel();
    const refused = await app.request(`/robot/move/named`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKENS.read}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'home' }),
    });
    assert.equal(refused.status, 403, 'the viewer is refused');
    await refused.body?.cancel();
    const wrong = await app.request(`/robot/move/named`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}x`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'home' }),
    });
    assert.equal(wrong.status, 401, 'a wrong token is refused');
    await wrong.body?.cancel();
    await server.services.audit?.flush();
    const text = await readFile(auditFile, 'utf8');
    for (const token of Object.values(TOKENS)) assert.ok(!text.includes(token), 'no token appears in the audit file');
    const lines = text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    assert.ok(
      lines.every((l) => l.operation !== 'get_joint_states'),
      'reads are not audited without audit.reads',
    );
    const mcpMove = lines.find(
      (l) => l.interface === 'mcp' && l.operation === 'move_to_joints' && l.principal === 'operator',
    );
    assert.ok(mcpMove, 'the MCP move is in the trail');
    assert.deepEqual((mcpMove.input as { joints: number[] }).joints, [0, 0.4, 0, -1.4, 0, 1.3, 0], 'its input summary');
    assert.deepEqual(
      {
        status: (mcpMove.outcome as { status: number }).status,
        success: (mcpMove.outcome as { success: boolean }).success,
      },
      { status: 200, success: true },
      'its outcome',
    );
    assert.equal(typeof mcpMove.duration_ms, 'number', 'its duration');
    const restMove = lines.find(
      (l) => l.interface === 'rest' && l.operation === 'move_to_named_position' && l.principal === 'operator',
    );
    assert.ok(restMove, 'the REST move is in the trail');
    // Refused calls changed nothing: they are in the refusals' file, where requests refused before an operation are
    // counted too (per address and reason), so that no flood of them rotates a motion's line out of the trail.
    const refusals = (await readFile(refusalsPath(auditFile), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const refusal = refusals.find(
      (l) => l.interface === 'rest' && l.principal === 'viewer' && (l.outcome as { status: number }).status === 403,
    );
    assert.ok(refusal, 'the refusal is in the trail');
    const mcpRefusal = refusals.find(
      (l) => l.interface === 'mcp' && l.principal === 'viewer' && (l.outcome as { tool_error?: boolean }).tool_error,
    );
    assert.ok(mcpRefusal, 'the refused tool call is in the trail');
    assert.ok(
      !lines.some((l) => l.principal === 'anonymous'),
      'refusals before an operation are not in the calls file',
    );
    for (const token of Object.values(TOKENS))
      assert.ok(!JSON.stringify(refusals).includes(token), 'no token appears in the refusals file');
    const unauthenticated = refusals.find(
      (l) => l.principal === 'anonymous' && (l.outcome as { status: number }).status === 401,
    );
    assert.equal(unauthenticated?.operation, 'POST /robot/move/named', 'a wrong token is in the trail, by route');
    assert.equal(unauthenticated?.count, 1, 'counted once');
  });
});
