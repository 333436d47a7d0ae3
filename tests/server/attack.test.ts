/**
 * The attack from the outside, kept as a suite so it runs on every change (issue 26), over a real socket:
 * - role bypass: a token's request for a route its role may not call, over every spelling of the path a client can
 *   send (trailing slash, doubled slash, dot segments, percent-encoding, case, absolute-form, a query), is never
 *   served: 400, 403, 404 or 405, never a validation answer (which would mean the role check was passed), and the arm
 *   does not move;
 * - MCP session borrowing: a session belongs to the token that opened it; any other token's request on it is answered
 *   as for a session that does not exist, and the owner's call running in it goes on;
 * - fuzz: every route and every tool with random input (fast-check, bounded in count), never a 5xx or an internal
 *   JSON-RPC error.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { handlers } from '../../handlers/index.ts';
import { type Role, roleAllows, roleNeeded } from '../../lib/core/roles.ts';
import { sleep } from '../support/live.ts';
import { openMcpSession } from '../support/mcp.ts';
import { connect, portOf, rawRequest } from '../support/raw-http.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const TOKENS: Record<Role, string> = {
  read: 'attack-viewer-token-0123456789',
  operate: 'attack-operator-token-abcdef',
  admin: 'attack-admin-token-5e1d9a7c3b',
};
const ROLES: Role[] = ['read', 'operate', 'admin'];
const bearer = (role: Role) => ({ authorization: `Bearer ${TOKENS[role]}` });

/** Spellings of `path` a client can put on the request line (raw: fetch would normalize several of them). */
function pathVariants(path: string, authority: string): string[] {
  const segments = path.split('/').slice(1);
  const last = segments.at(-1) ?? '';
  const encodedFirst = `%${last.charCodeAt(0).toString(16).toUpperCase()}${last.slice(1)}`;
  return [
    path,
    `${path}/`,
    `/${path}`,
    `${path}//`,
    `/.${path}`,
    `/x/..${path}`,
    `/robot/..${path}`,
    `${path}/.`,
    `${path.slice(0, -last.length)}${encodedFirst}`,
    `/${segments.join('%2F')}`,
    `/${segments.join('%2f')}`,
    path.toUpperCase(),
    `${path.slice(0, -1)}${last.at(-1)?.toUpperCase() ?? ''}`,
    `${path};role=admin`,
    `${path}?role=admin`,
    `${path}%00`,
    `${path}%20`,
    `${path.replaceAll('/', '\\')}`,
    `http://${authority}${path}`,
    `HTTP://${authority}${path}/`,
    `http://${authority}/${path}`,
  ];
}

describe('the attack suite (over a real socket)', () => {
  let server: TestServer;
  let port: number;
  let authority: string;

  before(async () => {
    server = await startTestServer({
      web: {
        token: TOKENS.admin,
        tokens: [
          { name: 'viewer', token: TOKENS.read, role: 'read' },
          { name: 'operator', token: TOKENS.operate, role: 'operate' },
        ],
      },
      sim: { time_scale: 20 },
    });
    port = portOf(server.url);
    authority = `127.0.0.1:${port}`;
  });
  after(() => server.close());

  const positions = async (): Promise<number[]> => {
    const res = await fetch(`${server.url}/robot/joint_states`, { headers: bearer('admin') });
    return ((await res.json()) as { position: number[] }).position;
  };

  it('role bypass: no spelling of a forbidden route is served to a weaker token, and nothing moves', async () => {
    const start = await positions();
    let attempts = 0;
    for (const { operation: op } of handlers) {
      const { method, path } = op.rest;
      const route = path.replace('{id}', 'plan-0');
      for (const role of ROLES) {
        if (roleAllows(role, roleNeeded(op))) continue;
        // A real motion body: served, it would move the arm.
        const body = JSON.stringify({ joints: [0.4, 0.3, 0, -1.2, 0, 1.2, 0.3], speed: 1, name: 'home' });
        for (const target of pathVariants(route, authority)) {
          for (const verb of [method, method.toLowerCase()]) {
            const res = await rawRequest(
              port,
              `${verb} ${target} HTTP/1.1\r\nHost: ${authority}\r\nAuthorization: Bearer ${TOKENS[role]}\r\n` +
                `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
            );
            attempts++;
            assert.ok(
              [400, 403, 404, 405].includes(res.status),
              `${verb} ${target} with a ${role} token: ${res.status} ${res.body.slice(0, 300)}`,
            );
          }
        }
      }
    }
    assert.ok(attempts > 200, `${attempts} attempts`);
    await sleep(100);
    assert.deepEqual(await positions(), start, 'the arm did not move');
  });

  it("a stop pipelined before jog commands on one connection: each jog sent before the stop's answer is 409, nothing moves", async () => {
    // Sent in one write, the jogs arrive before the stop is answered: none of them may start a jog (docs/api.md,
    // Jogging: "a command that arrived before the stop's answer is 409").
    const start = await positions();
    const body = JSON.stringify({ joints: [0.5, 0, 0, 0, 0, 0, 0], ttl_ms: 500 });
    const head = `Host: ${authority}\r\nAuthorization: Bearer ${TOKENS.operate}\r\n`;
    const jog = `POST /robot/jog HTTP/1.1\r\n${head}Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
    const stop = `POST /stop HTTP/1.1\r\n${head}Content-Length: 0\r\n\r\n`;
    const c = await connect(port);
    try {
      c.write(stop + jog.repeat(6));
      const statuses = [];
      for (let i = 0; i < 7; i++) statuses.push((await c.response()).status);
      assert.deepEqual(statuses, [200, 409, 409, 409, 409, 409, 409], 'the stop, then every jog refused');
    } finally {
      c.destroy();
    }
    await sleep(100);
    assert.deepEqual(await positions(), start, 'the arm did not move');
  });

  /** A raw JSON-RPC POST to /mcp/mcp. */
  const rpc = (role: Role, message: unknown, session?: string) =>
    fetch(`${server.url}/mcp/mcp`, {
      method: 'POST',
      headers: {
        ...bearer(role),
        'content-type': 'application/json',
        accept: 'application/json',
        ...(session ? { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' } : {}),
      },
      body: JSON.stringify(message),
    });
  const openSession = async (role: Role) =>
    (await openMcpSession(server.url, { name: 'attack', headers: bearer(role) })).id;
  const toolsList = (role: Role, session: string) =>
    rpc(role, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, session);

  it("MCP session borrowing: another token's POST, DELETE and GET on a session are answered as for none", async () => {
    const session = await openSession('operate');
    const never = `${'x'.repeat(22)}.${'y'.repeat(22)}`;
    for (const role of ['read', 'admin'] as const) {
      for (const method of ['POST', 'DELETE', 'GET'] as const) {
        const send = (id: string) =>
          method === 'POST'
            ? toolsList(role, id)
            : fetch(`${server.url}/mcp/mcp`, { method, headers: { ...bearer(role), 'mcp-session-id': id } });
        const borrowed = await send(session);
        const none = await send(never);
        assert.equal(borrowed.status, none.status, `${method} by ${role} on the operator's session`);
        assert.deepEqual(await borrowed.json(), await none.json(), `${method} by ${role}: the same answer as for none`);
        assert.ok(borrowed.status >= 400, `${method} by ${role}: ${borrowed.status}`);
      }
    }
    const still = await toolsList('operate', session);
    assert.equal(still.status, 200, 'the owner still has the session');
    assert.ok(((await still.json()) as { result: { tools: unknown[] } }).result.tools.length > 0);
    const ended = await fetch(`${server.url}/mcp/mcp`, {
      method: 'DELETE',
      headers: { ...bearer('operate'), 'mcp-session-id': session },
    });
    assert.equal(ended.status, 200, 'the owner can end it');
  });

  it("MCP session borrowing: another token's DELETE does not abort the owner's call running in the session", async () => {
    const session = await openSession('operate');
    const start = await positions();
    const goal = start.map((q, j) => (j === 0 ? q + 0.6 : q));
    const call = rpc(
      'operate',
      {
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'move_to_joints', arguments: { joints: goal, speed: 0.2 } },
      },
      session,
    );
    await sleep(150);
    for (const role of ['read', 'admin'] as const) {
      const res = await fetch(`${server.url}/mcp/mcp`, {
        method: 'DELETE',
        headers: { ...bearer(role), 'mcp-session-id': session },
      });
      assert.equal(res.status, 404, `DELETE by ${role}`);
    }
    const answer = (await (await call).json()) as { result?: { isError?: boolean; content: { text: string }[] } };
    assert.equal(answer.result?.isError, undefined, JSON.stringify(answer));
    assert.ok(Math.abs(((await positions())[0] ?? 0) - (goal[0] ?? 0)) < 0.01, 'the move finished at its goal');
    const back = rpc(
      'operate',
      {
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name: 'move_to_joints', arguments: { joints: start, speed: 1 } },
      },
      session,
    );
    assert.equal((await back).status, 200);
  });

  it('fuzz: every route with random input answers below 500', async () => {
    const seen: string[] = [];
    const json = fc.oneof(
      fc.jsonValue({ maxDepth: 3 }),
      fc.dictionary(
        fc.constantFrom('joints', 'speed', 'points', 'positions', 'time_from_start', 'name', 'x', 'frame', 'dry_run'),
        fc.jsonValue({ maxDepth: 2 }),
        { maxKeys: 4 },
      ),
    );
    const contentType = fc.constantFrom(
      'application/json',
      'text/plain',
      'multipart/form-data; boundary=zz',
      'application/x-www-form-urlencoded',
      '',
    );
    const query = fc.array(
      fc.tuple(fc.constantFrom('lines', 'n', 'frame', 'x', 'lines[]'), fc.string({ maxLength: 12 })),
      {
        maxLength: 3,
      },
    );
    for (const { operation: op } of handlers) {
      const { method, path } = op.rest;
      await fc.assert(
        fc.asyncProperty(json, contentType, query, fc.boolean(), async (doc, type, params, raw) => {
          const search = new URLSearchParams(params).toString();
          const url = `${server.url}${path.replace('{id}', 'plan-x')}${search ? `?${search}` : ''}`;
          const body = method === 'GET' ? undefined : raw ? JSON.stringify(doc).slice(0, -1) : JSON.stringify(doc);
          const res = await fetch(url, {
            method,
            headers: { ...bearer('admin'), ...(type ? { 'content-type': type } : {}) },
            ...(body === undefined ? {} : { body }),
          });
          await res.arrayBuffer();
          seen.push(`${method} ${path} ${res.status}`);
          return res.status < 500;
        }),
        { numRuns: 12, seed: 2602 },
      );
    }
    await fetch(`${server.url}/stop`, { method: 'POST', headers: bearer('admin') });
    assert.ok(seen.length >= handlers.length * 12, `${seen.length} requests`);
  });

  it('fuzz: every tool with random arguments answers without an internal error', async () => {
    const session = await openSession('admin');
    const listed = (await (await toolsList('admin', session)).json()) as { result: { tools: { name: string }[] } };
    const names = listed.result.tools.map((t) => t.name);
    assert.ok(names.length > 5, names.join(', '));
    let id = 10;
    for (const name of names) {
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(
            fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }),
            fc.jsonValue(),
          ),
          async (args) => {
            const res = await rpc(
              'admin',
              { jsonrpc: '2.0', id: id++, method: 'tools/call', params: { name, arguments: args } },
              session,
            );
            const text = await res.text();
            if (res.status >= 500) return false;
            const answer = JSON.parse(text) as { error?: { code: number } };
            return answer.error?.code !== -32603;
          },
        ),
        { numRuns: 10, seed: 2603 },
      );
    }
    await fetch(`${server.url}/stop`, { method: 'POST', headers: bearer('admin') });
  });

  it('after the attack: no error line in the log', () => {
    const errors = server.logs.filter((l) => l.level === 'error' || (typeof l.status === 'number' && l.status >= 500));
    assert.deepEqual(errors, []);
  });
});
