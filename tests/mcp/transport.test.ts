import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Request as PonyfillRequest } from '@whatwg-node/fetch';
import {
  StreamableHTTPClientTransport,
  type StreamableHTTPClientTransportOptions,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  EmptyResultSchema,
  type JSONRPCMessage,
  LATEST_PROTOCOL_VERSION,
  ListToolsRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import type { CallExtra } from '../../lib/mcp/tools.ts';
import { admissionPolicy } from '../../lib/admission/front-door.ts';
import { SteppedClock } from '../../lib/clock.ts';
import {
  createMcpEndpoint,
  ENDED_IDS_KEPT,
  type McpEndpoint,
  type McpEndpointOptions,
  MAX_MCP_BODY_BYTES,
  OAUTH_DISCOVERY_PATH,
  oauthDiscoveryResponse,
} from '../../lib/mcp/server.ts';
import { lazySchemaValidator } from '../../lib/mcp/lazy-validator.ts';
import { initializeRequest, mcpClient, openMcpSession } from '../support/mcp.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { TEST_ARRIVAL } from '../support/services.ts';
import { operations } from '../../handlers/index.ts';

const TOKEN = 'transport-token-7f';
const VERSIONS = ['2024-11-05', '2025-06-18', LATEST_PROTOCOL_VERSION] as const;
const INIT = (protocolVersion: string, id: number | string = 1) => initializeRequest('raw', { id, protocolVersion });
const CALL = (id: number, name = 'get_joint_states', extra: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: {}, ...extra },
});

/** The SDK client's transport, asking for `version` in initialize (the client itself always asks for the newest). */
class VersionedTransport extends StreamableHTTPClientTransport {
  readonly version: string;
  constructor(url: URL, version: string, options: StreamableHTTPClientTransportOptions = {}) {
    super(url, options);
    this.version = version;
  }
  override send(
    message: JSONRPCMessage,
    options?: Parameters<StreamableHTTPClientTransport['send']>[1],
  ): Promise<void> {
    if ('method' in message && message.method === 'initialize' && 'id' in message) {
      return super.send({ ...message, params: { ...message.params, protocolVersion: this.version } }, options);
    }
    return super.send(message, options);
  }
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const errorStatus = (e: unknown) => (e as { code?: unknown }).code;

describe('MCP transport over a live server', () => {
  let server: TestServer;
  let endpoint: URL;
  const auth = { authorization: `Bearer ${TOKEN}` };
  const connect = async (version: string = LATEST_PROTOCOL_VERSION) => {
    const transport = new VersionedTransport(endpoint, version, { requestInit: { headers: auth } });
    const client = mcpClient('transport-test');
    await client.connect(transport);
    return { client, transport };
  };
  const post = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(endpoint, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });

  before(async () => {
    server = await startTestServer({ web: { token: TOKEN }, sim: { time_scale: 5 } });
    endpoint = new URL(`${server.url}/mcp/mcp`);
  });
  after(async () => {
    await server.close();
  });

  for (const version of VERSIONS) {
    it(`initializes, lists tools and reads the joint states at protocol ${version}`, async () => {
      const { client, transport } = await connect(version);
      try {
        assert.equal(transport.protocolVersion, version, 'the server accepts the version the client asks for');
        assert.ok(transport.sessionId, 'initialize gives a session id');
        const { tools } = await client.listTools();
        assert.ok(
          tools.some((t) => t.name === 'get_joint_states'),
          `get_joint_states listed among ${tools.map((t) => t.name).join(', ')}`,
        );
        const states = (await client.callTool({ name: 'get_joint_states', arguments: {} })) as CallToolResult;
        assert.equal(states.isError, undefined, 'a read tool succeeds');
        assert.equal((states.structuredContent?.position as number[] | undefined)?.length, 7, 'seven joint positions');
        await transport.terminateSession();
      } finally {
        await client.close();
      }
    });
  }

  it('bounds a body at MAX_MCP_BODY_BYTES (2 MiB) whether its length is declared or chunked, refuses malformed JSON, reads past a BOM', async () => {
    const raw = (body: BodyInit) =>
      fetch(endpoint, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json', accept: 'application/json' },
        body,
        ...(body instanceof ReadableStream ? { duplex: 'half' } : {}),
      });
    const rpcError = async (res: Response) => ((await res.json()) as { error?: { code: number } }).error?.code;
    const big = JSON.stringify({ ...INIT('2025-06-18'), pad: ' '.repeat(MAX_MCP_BODY_BYTES) });
    const declared = await raw(big);
    assert.equal(declared.status, 413, 'over the limit by its Content-Length');
    assert.equal(await rpcError(declared), -32000);

    let pulled = 0;
    const chunk = new TextEncoder().encode(' '.repeat(256 * 1024));
    const chunked = await raw(
      new ReadableStream<Uint8Array>({
        pull(controller) {
          pulled++;
          if (pulled > 40) controller.close();
          else controller.enqueue(chunk);
        },
      }),
    );
    assert.equal(chunked.status, 413, 'over the limit as it streams in, without Content-Length');
    assert.equal(await rpcError(chunked), -32000);

    const malformed = await raw('{"jsonrpc": "2.0", "id": 1,');
    assert.equal(malformed.status, 400);
    assert.equal(await rpcError(malformed), -32700, 'a parse error');

    // A UTF-8 byte order mark before the JSON is dropped as the REST face drops it (TextDecoder's UTF-8 decode).
    const withBom = await raw(`\uFEFF${JSON.stringify(INIT('2025-06-18'))}`);
    assert.equal(withBom.status, 200, 'an initialize after a byte order mark opens a session');
    assert.ok(withBom.headers.get('mcp-session-id'));
    await withBom.text();
  });

  it('takes arguments: null as no arguments, and answers other non-object arguments -32602 without a schema dump', async () => {
    const { headers } = await openMcpSession(server.url, { headers: auth });
    const call = (id: number, name: string, args: unknown) =>
      post({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } }, headers);
    const nulled = (await (await call(2, 'get_joint_states', null)).json()) as { result?: CallToolResult };
    assert.equal(
      (nulled.result?.structuredContent?.position as number[] | undefined)?.length,
      7,
      'arguments: null runs the tool without arguments',
    );
    for (const args of [5, 'home', [1, 2]]) {
      const res = await call(3, 'move_to_named_position', args);
      const body = (await res.json()) as { id: number; error?: { code: number; message: string } };
      assert.equal(body.error?.code, -32602, `arguments ${JSON.stringify(args)}: invalid params`);
      assert.equal(body.id, 3, 'the error answers the request id');
      assert.match(body.error?.message ?? '', /arguments must be an object/, 'says what is wrong');
      assert.ok(!(body.error?.message ?? '').includes('invalid_type'), 'no raw schema dump');
    }
  });

  it('answers a tools/call without params or with a name that is not a string -32602 naming it, on JSON and SSE alike', async () => {
    const session = await openMcpSession(server.url, { headers: auth });
    for (const accept of ['application/json', 'application/json, text/event-stream']) {
      const headers = { ...session.headers, accept };
      for (const [params, field] of [
        [undefined, /params must be an object/],
        [{ name: 5 }, /name must be a string \(got number\)/],
        [{ name: null, _meta: { progressToken: 1 } }, /name must be a string \(got null\)/],
      ] as const) {
        const res = await post({ jsonrpc: '2.0', id: 4, method: 'tools/call', ...(params ? { params } : {}) }, headers);
        const body = (await res.json()) as { id: number; error?: { code: number; message: string } };
        assert.equal(body.error?.code, -32602, `${JSON.stringify(params)} (${accept}): invalid params`);
        assert.equal(body.id, 4, 'the error answers the request id');
        assert.match(body.error?.message ?? '', field, 'says which field is wrong');
        assert.ok(!(body.error?.message ?? '').includes('invalid_type'), 'no raw schema dump');
      }
    }
  });

  it('annotates every tool: reads are read-only, motions destructive and open-world, stop not destructive', async () => {
    const { client } = await connect();
    try {
      const { tools } = await client.listTools();
      const hints = Object.fromEntries(tools.map((t) => [t.name, t.annotations]));
      for (const tool of tools) assert.ok(tool.annotations, `${tool.name} has annotations`);
      for (const read of ['get_joint_states', 'get_tcp_pose', 'list_named_positions', 'solve_ik', 'get_sequence_logs'])
        assert.equal(hints[read]?.readOnlyHint, true, `${read} is read-only`);
      for (const motion of [
        'move_to_joints',
        'move_to_pose',
        'move_to_named_position',
        'send_trajectory',
        'start_sequence',
      ]) {
        assert.equal(hints[motion]?.readOnlyHint, false, `${motion} is not read-only`);
        assert.equal(hints[motion]?.destructiveHint, true, `${motion} may do harm`);
        assert.equal(hints[motion]?.openWorldHint, true, `${motion} acts on the physical world`);
      }
      assert.deepEqual(
        [hints.stop?.readOnlyHint, hints.stop?.destructiveHint, hints.stop?.idempotentHint],
        [false, false, true],
        'stop changes state, is never harmful and is idempotent',
      );
      const text = tools.map((t) => t.description ?? '').join(' ');
      assert.ok(!/(GET|POST) \//.test(text), 'tool texts speak of tools, not routes');
    } finally {
      await client.close();
    }
  });

  it('answers a client that accepts only application/json (or sends no Accept) with plain JSON', async () => {
    for (const accept of ['application/json', undefined]) {
      const headers: Record<string, string> = accept ? { accept } : {};
      const init = await post(INIT('2025-06-18'), headers);
      assert.equal(init.status, 200, `initialize with Accept ${accept}`);
      assert.match(init.headers.get('content-type') ?? '', /^application\/json/, 'initialize answered as JSON');
      const session = init.headers.get('mcp-session-id') ?? '';
      assert.ok(session, 'a session id');
      assert.equal(
        ((await init.json()) as { result?: { protocolVersion?: string } }).result?.protocolVersion,
        '2025-06-18',
      );
      const call = await post(CALL(2), { ...headers, 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' });
      assert.equal(call.status, 200, 'tools/call answered');
      assert.match(call.headers.get('content-type') ?? '', /^application\/json/, 'tools/call answered as JSON');
      const body = (await call.json()) as { id: number; result: CallToolResult };
      assert.equal(body.id, 2, 'the answer carries the request id');
      assert.equal(
        (body.result.structuredContent?.position as number[] | undefined)?.length,
        7,
        'joint states in the answer',
      );
      const batch = await post([CALL(3), CALL(4, 'get_tcp_pose')], {
        ...headers,
        'mcp-session-id': session,
        'mcp-protocol-version': '2025-06-18',
      });
      const answers = (await batch.json()) as { id: number }[];
      assert.deepEqual(answers.map((a) => a.id).sort(), [3, 4], 'a batch is answered with a JSON array');
    }
    const refused = await post(INIT('2025-06-18'), { accept: 'text/html' });
    assert.equal(refused.status, 406, 'an Accept naming neither JSON nor SSE is 406');
    await refused.body?.cancel();
  });

  it('answers a session GET with 405 at once (there is no server-initiated stream)', async () => {
    const { client, transport } = await connect();
    try {
      const t0 = performance.now();
      const res = await fetch(endpoint, {
        headers: {
          ...auth,
          accept: 'text/event-stream',
          'mcp-session-id': transport.sessionId ?? '',
          'mcp-protocol-version': LATEST_PROTOCOL_VERSION,
        },
        signal: AbortSignal.timeout(5000),
      });
      assert.equal(res.status, 405, 'GET is 405');
      assert.equal(res.headers.get('allow'), 'POST, DELETE', 'Allow names the methods');
      assert.ok(performance.now() - t0 < 2000, 'the answer comes at once');
      await res.body?.cancel();
    } finally {
      await client.close();
    }
  });

  it('answers an unknown session with 404, after which the SDK client recovers by connecting again', async () => {
    const res = await post(CALL(1), {
      accept: 'application/json, text/event-stream',
      'mcp-session-id': 'not-a-session-of-this-server',
    });
    assert.equal(res.status, 404, 'unknown session is 404');
    assert.equal(((await res.json()) as { error: { code: number } }).error.code, -32001, 'JSON-RPC code -32001');

    const stale = new StreamableHTTPClientTransport(endpoint, {
      requestInit: { headers: auth },
      sessionId: 'Zm9yZ290dGVuLXNlc3Npb24.AAAAAAAAAAAAAAAAAAAAAA',
    });
    const client = mcpClient('stale');
    await client.connect(stale);
    try {
      await assert.rejects(client.listTools(), (e) => errorStatus(e) === 404, 'the SDK client sees the 404');
      await client.close();
      await client.connect(new StreamableHTTPClientTransport(endpoint, { requestInit: { headers: auth } }));
      const states = (await client.callTool({ name: 'get_joint_states', arguments: {} })) as CallToolResult;
      assert.equal(states.isError, undefined, 'the same Client works after connecting again');
    } finally {
      await client.close();
    }
  });

  it('keeps an SDK client working after its session is closed for room (256 sessions)', async () => {
    const { client, transport } = await connect('2025-06-18');
    try {
      await client.callTool({ name: 'get_joint_states', arguments: {} });
      // The others are opened in memory (the same app and sessions; their socket is not what this test is about).
      const others: string[] = [];
      const headers = { ...auth, 'content-type': 'application/json', accept: 'application/json' };
      const body = JSON.stringify(INIT('2025-06-18'));
      for (let k = 0; k < 260; k++) {
        const init = await server.request('/mcp/mcp', { method: 'POST', headers, body });
        assert.equal(init.status, 200, 'another session opened');
        others.push(init.headers.get('mcp-session-id') ?? '');
        await init.text();
      }
      const before = transport.sessionId;
      const states = (await client.callTool({ name: 'get_joint_states', arguments: {} })) as CallToolResult;
      assert.equal(states.isError, undefined, 'the call after eviction succeeds');
      assert.equal(transport.sessionId, before, 'same session id');
      await Promise.all(
        others.map(async (id) => {
          const res = await server.request('/mcp/mcp', {
            method: 'DELETE',
            headers: { ...auth, 'mcp-session-id': id },
          });
          await res.text();
        }),
      );
    } finally {
      await client.close();
    }
  });

  it('ends a session on DELETE; its id is 404 afterwards', async () => {
    const { client, transport } = await connect();
    const id = transport.sessionId ?? '';
    await transport.terminateSession();
    await client.close();
    const res = await post(CALL(9), { accept: 'application/json', 'mcp-session-id': id });
    assert.equal(res.status, 404, 'the ended session is 404');
    await res.body?.cancel();
    const again = await fetch(endpoint, { method: 'DELETE', headers: { ...auth, 'mcp-session-id': id } });
    assert.equal(again.status, 404, 'a second DELETE is 404');
    await again.body?.cancel();
  });

  it('streams progress notifications of a slow move when the client sends a progressToken', async () => {
    const { client } = await connect();
    try {
      const progress: number[] = [];
      const result = (await client.callTool(
        { name: 'move_to_joints', arguments: { joints: [0.3, 0.2, 0, -1.4, 0, 1.4, 0.2], speed: 0.05 } },
        undefined,
        { onprogress: (p) => progress.push(p.progress), timeout: 120_000 },
      )) as CallToolResult;
      assert.equal(result.isError, undefined, 'the move succeeds');
      assert.ok(progress.length >= 1, `progress notifications arrived (${progress.length})`);
      await client.callTool({ name: 'move_to_joints', arguments: { joints: [0, 0, 0, -1.57, 0, 1.57, 0], speed: 1 } });
    } finally {
      await client.close();
    }
  });

  for (const withProgress of [false, true]) {
    it(`stops the arm short of its goal when a move is cancelled (${withProgress ? 'SSE' : 'JSON'} answer)`, async () => {
      const { client } = await connect();
      const goal = [1.2, 0.6, 0, -0.8, 0, 1.0, 1.0];
      try {
        const controller = new AbortController();
        const move = client.callTool({ name: 'move_to_joints', arguments: { joints: goal, speed: 0.05 } }, undefined, {
          signal: controller.signal,
          ...(withProgress ? { onprogress: () => {} } : {}),
        });
        await delay(300);
        controller.abort('the test cancels');
        await assert.rejects(move, 'the cancelled call rejects on the client');
        await delay(600);
        const first = (await client.callTool({ name: 'get_joint_states', arguments: {} })) as CallToolResult;
        await delay(300);
        const second = (await client.callTool({ name: 'get_joint_states', arguments: {} })) as CallToolResult;
        const a = first.structuredContent?.position as number[];
        const b = second.structuredContent?.position as number[];
        const moved = Math.max(...a.map((q, i) => Math.abs(q - (b[i] ?? NaN))));
        assert.ok(moved < 1e-3, `the arm is at rest after the cancellation (moved ${moved} rad in 0.3 s)`);
        const left = Math.max(...b.map((q, i) => Math.abs(q - (goal[i] ?? NaN))));
        assert.ok(left > 0.05, `the arm stopped short of the goal (${left} rad away)`);
        const home = (await client.callTool({
          name: 'move_to_joints',
          arguments: { joints: [0, 0, 0, -1.57, 0, 1.57, 0], speed: 1 },
        })) as CallToolResult;
        assert.equal(home.isError, undefined, 'the session serves the next move');
      } finally {
        await client.close();
      }
    });
  }

  /** A known-good call of every tool, in an order that leaves the arm at work. */
  const EVERY_TOOL: [string, Record<string, unknown>][] = [
    ['get_joint_states', {}],
    ['get_tcp_pose', {}],
    ['list_named_positions', {}],
    // Taught where the arm stands (work, at rest), then deleted: neither moves the arm.
    ['save_position', { name: 'contract_here' }],
    ['delete_position', { name: 'contract_here' }],
    ['move_to_named_position', { name: 'home', speed: 1 }],
    ['move_to_joints', { joints: [0, 0, 0, -1.57, 0, 1.57, 0], speed: 1 }],
    ['jog', { joint: 7, delta: 0.05 }],
    ['move_to_pose', { x: 0.45, y: 0.05, z: 0.6, planner: 'lin', speed: 0.5 }],
    // Its arguments are the id of a plan made just before (a dry run of move_to_joints).
    ['execute_plan', {}],
    ['solve_ik', { x: 0.5, y: 0, z: 0.5, b: Math.PI }],
    ['send_trajectory', { points: [{ positions: [0, 0, 0, -1.57, 0, 1.57, 0], time_from_start: 1 }], wait: true }],
    ['get_trajectory_logs', { n: 5 }],
    [
      'start_sequence',
      {
        config: { home: { joints: [0, 0, 0, -1.57, 0, 1.57, 0], speed: 1 }, waypoints: [] },
        n_iterations: 1,
        delay_between_iterations: 0,
      },
    ],
    ['get_sequence_status', {}],
    ['get_sequence_logs', { n: 5 }],
    ['stop', {}],
    ['pause', {}],
    ['get_override', {}],
    ['set_override', { percent: 100 }],
    // Nothing is paused: an error result saying so (the tool answers; 409 over REST).
    ['resume', {}],
  ];

  /**
   * The calls above, then one of each tool of the catalog they do not name (a new handler file): `{}` for a tool without
   * input, its REST binding's example otherwise.
   */
  const withCatalogTools = (calls: [string, Record<string, unknown>][]): [string, Record<string, unknown>][] => [
    ...calls,
    ...operations
      .filter((op) => op.mcp && !calls.some(([name]) => name === op.name))
      .map((op): [string, Record<string, unknown>] => [op.name, op.input ? { ...op.rest.example } : {}]),
  ];

  for (const version of VERSIONS) {
    it(`at protocol ${version}: every tool answers, a cancelled move stops short, a move reports progress`, async () => {
      const { client } = await connect(version);
      try {
        const { tools } = await client.listTools();
        const everyTool = withCatalogTools(EVERY_TOOL);
        assert.deepEqual(
          tools.map((t) => t.name).sort(),
          everyTool.map(([name]) => name).sort(),
          'the contract covers every listed tool',
        );
        for (const [name, given] of everyTool) {
          let args = given;
          if (name === 'execute_plan') {
            const planned = (await client.callTool({
              name: 'move_to_joints',
              arguments: { joints: [0.1, 0, 0, -1.57, 0, 1.57, 0], speed: 1, dry_run: true },
            })) as CallToolResult;
            const plan = planned.structuredContent?.plan as { id?: string } | undefined;
            assert.ok(plan?.id, `a dry run at ${version} answers a plan: ${JSON.stringify(planned.content)}`);
            args = { id: plan?.id };
          }
          const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
          const said = JSON.stringify(result.content);
          if (name === 'resume') {
            assert.equal(result.isError, true, `resume with nothing paused at ${version}: ${said}`);
            assert.match(said, /nothing is paused/);
            continue;
          }
          assert.equal(result.isError, undefined, `${name} at ${version}: ${said}`);
          assert.ok(result.structuredContent, `${name} at ${version} has structured content`);
          if ('success' in (result.structuredContent ?? {}))
            assert.equal(result.structuredContent?.success, true, `${name} at ${version} succeeded: ${said}`);
          if (name === 'send_trajectory')
            assert.equal(result.structuredContent?.outcome, 'finished', `waited trajectory at ${version}`);
        }
        const progress: number[] = [];
        const moved = (await client.callTool(
          { name: 'move_to_joints', arguments: { joints: [0.5, 0, 0, -1.57, 0, 1.57, 0], speed: 0.05 } },
          undefined,
          { onprogress: (p) => progress.push(p.progress) },
        )) as CallToolResult;
        assert.equal(moved.structuredContent?.success, true, `the move at ${version} succeeded`);
        assert.ok(progress.length >= 2, `progress at ${version}: ${progress.length} notifications`);
        const goal = [-0.6, 0, 0, -1.57, 0, 1.57, 0];
        const controller = new AbortController();
        const cancelled = client.callTool(
          { name: 'move_to_joints', arguments: { joints: goal, speed: 0.05 } },
          undefined,
          {
            signal: controller.signal,
          },
        );
        await delay(300);
        controller.abort('cancelled by the contract test');
        await assert.rejects(cancelled, `the cancelled call rejects at ${version}`);
        await delay(600);
        const at = (await client.callTool({ name: 'get_joint_states', arguments: {} })) as CallToolResult;
        const q = at.structuredContent?.position as number[];
        assert.ok(Math.abs((q[0] ?? 0) - (goal[0] ?? 0)) > 0.3, `stopped short of the goal at ${version}: ${q[0]}`);
        await client.callTool({
          name: 'move_to_joints',
          arguments: { joints: [0, 0, 0, -1.57, 0, 1.57, 0], speed: 1 },
        });
      } finally {
        await client.close();
      }
    });
  }

  it('answers the OAuth discovery paths with 404 and a body naming the Bearer token, not 401', async () => {
    for (const path of [
      '/.well-known/oauth-authorization-server',
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-protected-resource/mcp/mcp',
      '/.well-known/openid-configuration',
      '/mcp/mcp/.well-known/oauth-authorization-server',
      '/mcp/mcp/.well-known/oauth-protected-resource',
    ]) {
      assert.ok(OAUTH_DISCOVERY_PATH.test(path), `${path} is a discovery path`);
      const res = await fetch(`${server.url}${path}`);
      assert.equal(res.status, 404, `${path} is 404 without a token`);
      assert.match(await res.text(), /Bearer/, `${path} says to use the Bearer token`);
    }
  });

  it('refuses a foreign Host or Origin with 403', async () => {
    const { request } = await import('node:http');
    const status = (headers: Record<string, string>) =>
      new Promise<number>((resolve, reject) => {
        const req = request(
          endpoint,
          {
            method: 'POST',
            headers: { ...auth, 'content-type': 'application/json', accept: 'application/json', ...headers },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        req.end(JSON.stringify(INIT('2025-06-18')));
      });
    assert.equal(await status({ host: `evil.example:${endpoint.port}` }), 403, 'foreign Host');
    assert.equal(await status({ origin: 'http://evil.example' }), 403, 'foreign Origin');
    assert.equal(await status({}), 200, 'own Host, no Origin');
  });
});

interface Probe {
  /** Aborts the handlers observed, by tool call. */
  readonly aborted: string[];
  started: number;
  /** Servers made: one per session opened or rebuilt. */
  built: number;
  /** How each tools/call was answered: through the session's Server (the one path, JSON or stream alike). */
  readonly paths: 'server'[];
}

/**
 * A server with test tools (`count` sends 3 progress notifications, `wait` runs until cancelled, `ask` sends a request
 * to the client), its tools/call served by the Server as armgate's face is (lib/mcp/face.ts).
 */
function probeServer(probe: Probe): () => Server {
  return () => {
    probe.built++;
    // Its validator built on first use, as armgate's face's is (lib/mcp/lazy-validator.ts).
    const server = new Server(
      { name: 'probe', version: '1' },
      { capabilities: { tools: {} }, jsonSchemaValidator: lazySchemaValidator() },
    );
    const callTool = async (params: Record<string, unknown>, extra: CallExtra): Promise<CallToolResult> => {
      probe.paths.push('server');
      const token = extra._meta?.progressToken;
      if (params.name === 'count') {
        for (let k = 1; k <= 3; k++) {
          if (token !== undefined)
            await extra.sendNotification({
              method: 'notifications/progress',
              params: { progressToken: token, progress: k, total: 3 },
            });
          await delay(5);
        }
        return { content: [{ type: 'text', text: 'counted' }] };
      }
      if (params.name === 'ask') {
        try {
          await extra.sendRequest({ method: 'ping' }, EmptyResultSchema);
          return { content: [{ type: 'text', text: 'asked' }] };
        } catch (e) {
          return { isError: true, content: [{ type: 'text', text: (e as Error).message }] };
        }
      }
      if (params.name !== 'wait') throw new McpError(-32602, `unknown tool '${String(params.name)}'`);
      probe.started++;
      await new Promise<void>((resolve) => extra.signal.addEventListener('abort', () => resolve(), { once: true }));
      probe.aborted.push(String(extra.requestId));
      return { content: [{ type: 'text', text: 'cancelled' }] };
    };
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: ['count', 'wait', 'ask'].map((name) => ({ name, inputSchema: { type: 'object' as const } })),
    }));
    server.setRequestHandler(CallToolRequestSchema, (request, extra) => callTool(request.params, extra));
    return server;
  };
}

/**
 * A request to the endpoint in memory as the server's adapter hands it one from a socket: @whatwg-node/fetch's Request
 * for a text body (lib/server/start.ts, inMemoryRequest), the platform's otherwise.
 */
function requestOf(input: string | URL, init?: RequestInit): Request {
  return typeof init?.body === 'string' ? (new PonyfillRequest(input, init) as Request) : new Request(input, init);
}

/** Opens a session with a raw initialize (JSON answer) on an endpoint in memory; its id. */
async function rawSession(fetchIn: (input: string | URL, init?: RequestInit) => Promise<Response>): Promise<string> {
  const endpoint = { request: (path: string, init?: RequestInit) => fetchIn(`http://127.0.0.1:8007${path}`, init) };
  return (await openMcpSession(endpoint, { initialized: false })).id;
}

describe('MCP transport in memory (the endpoint alone, a probe server)', () => {
  const HOST = '127.0.0.1:8007';
  const url = new URL(`http://${HOST}/mcp/mcp`);
  const admission = admissionPolicy({ host: '127.0.0.1', allowedHosts: [], corsOrigins: [] });
  const open: McpEndpoint[] = [];
  const make = (options: Omit<McpEndpointOptions, 'createServer'> = {}) => {
    const probe: Probe = { aborted: [], started: 0, built: 0, paths: [] };
    const endpoint = createMcpEndpoint(admission, { createServer: probeServer(probe), ...options });
    open.push(endpoint);
    const fetchIn = async (input: string | URL, init?: RequestInit) => {
      const request = requestOf(input, init);
      request.headers.set('host', HOST);
      return endpoint.handler(request, TEST_ARRIVAL);
    };
    const connect = async (accept?: string) => {
      const client = mcpClient('probe-client');
      const transport = new StreamableHTTPClientTransport(url, {
        fetch: accept
          ? (input, init) => {
              const headers = new Headers(init?.headers);
              headers.set('accept', accept);
              return fetchIn(input, { ...init, headers });
            }
          : fetchIn,
      });
      await client.connect(transport);
      return { client, transport };
    };
    return { endpoint, probe, connect, fetchIn };
  };
  after(async () => {
    await Promise.all(open.map((e) => e.close()));
  });

  it('streams progress notifications (SSE) when the client sends a progressToken and accepts a stream', async () => {
    const { connect } = make();
    const { client } = await connect();
    const seen: number[] = [];
    const result = (await client.callTool({ name: 'count', arguments: {} }, undefined, {
      onprogress: (p) => seen.push(p.progress),
    })) as CallToolResult;
    assert.deepEqual(seen, [1, 2, 3], 'every progress notification arrives in order');
    assert.equal((result.content[0] as { text: string }).text, 'counted', 'then the result');
    await client.close();
  });

  it('answers with JSON (progress dropped) when the client accepts only JSON, with a stream when it accepts only that', async () => {
    const { fetchIn } = make();
    const session = await rawSession(fetchIn);
    const res = await fetchIn(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', 'mcp-session-id': session },
      body: JSON.stringify(CALL(7, 'count', { _meta: { progressToken: 'p' } })),
    });
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/, 'JSON answer');
    assert.equal(((await res.json()) as { id: number }).id, 7, 'the result for the request');
    const streamOnly = await fetchIn(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'mcp-session-id': session },
      body: JSON.stringify(CALL(8, 'count')),
    });
    assert.match(
      streamOnly.headers.get('content-type') ?? '',
      /^text\/event-stream/,
      'a stream for a stream-only client',
    );
    assert.match(await streamOnly.text(), /"id":8/, 'the result on the stream');
  });

  for (const withProgress of [false, true]) {
    it(`delivers notifications/cancelled to the running handler and ends the answer (${withProgress ? 'SSE' : 'JSON'} answer)`, async () => {
      const { connect, endpoint, probe } = make();
      const { client } = await connect();
      const controller = new AbortController();
      const call = client.callTool({ name: 'wait', arguments: {} }, undefined, {
        signal: controller.signal,
        ...(withProgress ? { onprogress: () => {} } : {}),
      });
      for (let k = 0; k < 100 && probe.started === 0; k++) await delay(5);
      assert.equal(probe.started, 1, 'the handler runs');
      controller.abort('test cancels');
      await assert.rejects(call, 'the client call rejects');
      for (let k = 0; k < 100 && probe.aborted.length === 0; k++) await delay(5);
      assert.equal(probe.aborted.length, 1, "the handler's signal was aborted");
      assert.equal(probe.paths[0], 'server', 'a JSON answer and a stream alike come from the Server');
      const next = (await client.callTool({ name: 'count', arguments: {} })) as CallToolResult;
      assert.equal((next.content[0] as { text: string }).text, 'counted', 'the session serves the next call');
      assert.equal(endpoint.sessionCount(), 1, 'one session');
      await client.close();
    });
  }

  it('answers a plain tools/call in JSON with the errors it gives on a stream', async () => {
    const { fetchIn, probe } = make();
    const session = await rawSession(fetchIn);
    const post = async (body: unknown, accept: string) => {
      const res = await fetchIn(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept, 'mcp-session-id': session },
        body: JSON.stringify(body),
      });
      const text = await res.text();
      return JSON.parse(text.startsWith('{') ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? 'null')) as {
        id: number;
        result?: CallToolResult;
        error?: { code: number; message: string };
      };
    };
    const counted = await post(CALL(2, 'count'), 'application/json');
    assert.deepEqual(counted.result?.content, [{ type: 'text', text: 'counted' }], 'the direct answer');
    const viaServer = await post(
      CALL(3, 'nope', { _meta: { progressToken: 'p' } }),
      'application/json, text/event-stream',
    );
    const direct = await post(CALL(4, 'nope'), 'application/json');
    assert.deepEqual(probe.paths, ['server', 'server', 'server'], 'JSON answers and progress alike through the Server');
    assert.equal(direct.error?.code, -32602, 'an unknown tool is invalid params');
    assert.deepEqual(direct.error, viaServer.error, 'the same error on both paths');
    // A request to the client (elicitation) has no stream to travel on: it fails at once instead of waiting.
    const asked = await post(CALL(5, 'ask'), 'application/json');
    assert.equal(asked.result?.isError, true, 'the request to the client failed');
    assert.match(JSON.stringify(asked.result?.content), /accepts only a JSON answer/, 'saying why');
  });

  it('serves a session whatever id its initialize had, on JSON and SSE answers', async () => {
    const { fetchIn, probe } = make();
    for (const id of ['armgate-initialize-sibling', 0, 'x']) {
      const init = await fetchIn(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify(INIT('2025-06-18', id)),
      });
      const answer = (await init.json()) as { id: unknown; result?: { serverInfo?: { name: string } } };
      assert.equal(answer.id, id, 'the initialize is answered under its id');
      assert.equal(answer.result?.serverInfo?.name, 'probe', "by the session's Server");
      const session = init.headers.get('mcp-session-id') ?? '';
      for (const accept of ['application/json', 'text/event-stream']) {
        const res = await fetchIn(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept, 'mcp-session-id': session },
          body: JSON.stringify(CALL(9, 'count')),
        });
        assert.match(await res.text(), /"id":9,?.*counted|counted.*"id":9/s, `the session answers (${accept})`);
      }
    }
    assert.equal(probe.paths.length, 6, 'every call ran');
  });

  it('serves plain JSON answers and a DELETE in a session opened on a stream', async () => {
    const { fetchIn, probe } = make();
    const headers = { 'content-type': 'application/json', accept: 'text/event-stream' };
    const init = await fetchIn(url, { method: 'POST', headers, body: JSON.stringify(INIT('2025-06-18')) });
    assert.match(init.headers.get('content-type') ?? '', /^text\/event-stream/, 'the initialize answered on a stream');
    assert.match(await init.text(), /"serverInfo"/, 'by the Server');
    const session = { 'mcp-session-id': init.headers.get('mcp-session-id') ?? '' };
    const plain = { ...headers, ...session, accept: 'application/json' };
    const batch = await fetchIn(url, { method: 'POST', headers: plain, body: JSON.stringify([CALL(2, 'count')]) });
    assert.match(batch.headers.get('content-type') ?? '', /^application\/json/, 'a JSON answer');
    const answers = (await batch.json()) as { id: number; result?: CallToolResult }[];
    assert.deepEqual(
      answers.map((a) => [a.id, a.result?.content]),
      [[2, [{ type: 'text', text: 'counted' }]]],
      'the batch answered in JSON',
    );
    const ended = await fetchIn(url, { method: 'DELETE', headers: session });
    assert.equal(ended.status, 200, 'the session is deleted');
    const after = await fetchIn(url, { method: 'POST', headers: plain, body: JSON.stringify(CALL(3, 'count')) });
    assert.equal(after.status, 404, 'and is 404 afterwards');
    assert.deepEqual(probe.paths, ['server'], 'the one call ran');
  });

  it('serves calls at once on the form a session has not answered in yet, a stop tool among them (one readying)', async () => {
    // The probe's `count` stands for a stop tool: it runs at once, not in its turn.
    const { fetchIn, probe } = make({ stopTools: new Set(['count']) });
    const session = await rawSession(fetchIn);
    const headers = { 'content-type': 'application/json', accept: 'text/event-stream', 'mcp-session-id': session };
    // Opened in JSON: these three are the first requests answered on a stream, all at once.
    const answers = await Promise.all(
      [2, 3, 4].map(async (id) => {
        const res = await fetchIn(url, { method: 'POST', headers, body: JSON.stringify(CALL(id, 'count')) });
        return { status: res.status, text: await res.text() };
      }),
    );
    for (const [k, answer] of answers.entries()) {
      assert.equal(answer.status, 200, answer.text);
      assert.match(answer.text, new RegExp(`"id":${k + 2}`), 'answered on its stream');
      assert.match(answer.text, /counted/, 'by the tool');
    }
    assert.equal(probe.paths.length, 3, 'every call ran');
  });

  it('leaves no call running in a session deleted while its other form is being readied', async () => {
    // The DELETE lands at each point of the readying: before, during and after the first request on a stream.
    for (let turns = 0; turns < 12; turns++) {
      const { fetchIn, probe, endpoint } = make();
      const session = await rawSession(fetchIn);
      const headers = { 'content-type': 'application/json', accept: 'text/event-stream', 'mcp-session-id': session };
      const streamed = fetchIn(url, { method: 'POST', headers, body: JSON.stringify(CALL(2, 'wait')) });
      for (let k = 0; k < turns; k++) await Promise.resolve();
      const deleted = await fetchIn(url, { method: 'DELETE', headers: { 'mcp-session-id': session } });
      assert.equal(deleted.status, 200, `the session is deleted (${turns} turns)`);
      // The streamed request ends (refused, or its call cut short): it does not wait forever.
      await (await streamed).text();
      for (let k = 0; k < 100 && probe.aborted.length < probe.started; k++) await delay(5);
      assert.equal(probe.aborted.length, probe.started, `every call that started was aborted (${turns} turns)`);
      assert.equal(endpoint.sessionCount(), 0, 'no session held');
    }
  });

  it('runs no call whose envelope the SDK would refuse: an id that is not a string or an integer, a bad progressToken', async () => {
    const { fetchIn, probe } = make();
    const session = await rawSession(fetchIn);
    for (const call of [
      { ...CALL(1, 'count'), id: 1.5 },
      { ...CALL(1, 'count'), id: true },
      CALL(2, 'count', { _meta: { progressToken: {} } }),
      CALL(3, 'count', { _meta: 'x' }),
    ]) {
      const res = await fetchIn(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', 'mcp-session-id': session },
        body: JSON.stringify(call),
      });
      assert.equal(res.status, 400, `${JSON.stringify(call)}: ${await res.text()}`);
    }
    assert.deepEqual(probe.paths, [], 'none of them ran');
  });

  it('answers an empty batch with one Invalid Request error (JSON-RPC 2.0), with or without a session', async () => {
    const { fetchIn, probe } = make();
    const session = await rawSession(fetchIn);
    for (const headers of [{ 'mcp-session-id': session }, {}]) {
      const res = await fetchIn(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body: '[]',
      });
      assert.equal(res.status, 400);
      const answer = (await res.json()) as { jsonrpc?: string; id?: unknown; error?: { code?: number } };
      assert.ok(!Array.isArray(answer), 'a single error object, not a batch');
      assert.equal(answer.jsonrpc, '2.0');
      assert.equal(answer.id, null);
      assert.equal(answer.error?.code, -32600);
    }
    assert.deepEqual(probe.paths, [], 'nothing ran');
  });

  it('refuses a request id still in flight in its session; the running call keeps its answer and its cancellation', async () => {
    const { fetchIn, probe } = make();
    const session = await rawSession(fetchIn);
    const headers = { 'content-type': 'application/json', accept: 'application/json', 'mcp-session-id': session };
    const running = fetchIn(url, { method: 'POST', headers, body: JSON.stringify(CALL(7, 'wait')) });
    for (let k = 0; k < 100 && probe.started === 0; k++) await delay(5);
    const reused = await fetchIn(url, { method: 'POST', headers, body: JSON.stringify(CALL(7, 'count')) });
    assert.equal(reused.status, 400, 'the reused id is refused');
    assert.match(await reused.text(), /-32600.*id 7 belongs to a request of this session still running/);
    const cancel = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7 } };
    await (await fetchIn(url, { method: 'POST', headers, body: JSON.stringify(cancel) })).text();
    const answer = (await (await running).json()) as { id: number; error?: { code: number } };
    assert.equal(answer.error?.code, -32800, 'the running call answers cancelled');
    assert.deepEqual(probe.aborted, ['7'], 'and its signal was aborted');
    assert.deepEqual(probe.paths, ['server'], 'the reused id never ran');
  });

  it('fails at once a request to the client from a batch answered in JSON (no stream to carry it)', async () => {
    const { fetchIn, probe } = make();
    const session = await rawSession(fetchIn);
    const started = performance.now();
    const res = await fetchIn(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', 'mcp-session-id': session },
      body: JSON.stringify([CALL(4, 'ask')]),
    });
    const [answer] = (await res.json()) as { result?: CallToolResult }[];
    assert.ok(performance.now() - started < 2000, 'answered at once, not after the request timeout');
    assert.equal(answer?.result?.isError, true, 'the request to the client failed');
    assert.match(JSON.stringify(answer?.result?.content), /accepts only a JSON answer/, 'saying why');
    assert.deepEqual(probe.paths, ['server'], 'a batch goes through the Server');
  });

  it('runs a call of a stop tool and a cancellation at once, and schedules everything else in its turn', async () => {
    let scheduled = 0;
    const { fetchIn, probe } = make({
      // The probe's `count` stands for a stop tool here.
      stopTools: new Set(['count']),
      schedule: (task) => {
        scheduled++;
        return task();
      },
    });
    const session = await rawSession(fetchIn);
    assert.equal(scheduled, 1, 'initialize is scheduled');
    const headers = { 'content-type': 'application/json', accept: 'application/json', 'mcp-session-id': session };
    const waiting = fetchIn(url, { method: 'POST', headers, body: JSON.stringify(CALL(2, 'wait')) });
    for (let k = 0; k < 100 && probe.started === 0; k++) await delay(5);
    assert.equal(scheduled, 2, 'a call of another tool is scheduled');
    await (await fetchIn(url, { method: 'POST', headers, body: JSON.stringify(CALL(3, 'count')) })).text();
    assert.equal(scheduled, 2, 'the stop tool is not');
    const cancel = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 2 } };
    await (await fetchIn(url, { method: 'POST', headers, body: JSON.stringify(cancel) })).text();
    assert.equal(scheduled, 2, 'nor is a cancellation');
    await (await waiting).text();
    assert.deepEqual(probe.aborted, ['2'], 'the cancelled call was aborted');
    const batch = [CALL(4, 'count'), CALL(5, 'count')];
    await (await fetchIn(url, { method: 'POST', headers, body: JSON.stringify(batch) })).text();
    assert.equal(scheduled, 2, 'a batch holding a stop call runs at once as a whole');
  });

  it("aborts a JSON-answered call's signal when its session is deleted", async () => {
    const { connect, probe, fetchIn } = make();
    const { client, transport } = await connect('application/json');
    const call = client.callTool({ name: 'wait', arguments: {} });
    for (let k = 0; k < 100 && probe.started === 0; k++) await delay(5);
    assert.deepEqual(probe.paths, ['server'], 'the call runs');
    const deleted = await fetchIn(url, { method: 'DELETE', headers: { 'mcp-session-id': transport.sessionId ?? '' } });
    assert.equal(deleted.status, 200, 'the session is deleted');
    for (let k = 0; k < 100 && probe.aborted.length === 0; k++) await delay(5);
    assert.equal(probe.aborted.length, 1, "the call's signal was aborted with its session");
    await call.catch(() => {});
  });

  it('rebuilds a session closed for room or idleness on its next request, and never closes a busy one', async () => {
    // Idle after 1 s of a stepped clock: it moves only when the test steps it, so no session closes while counted.
    const clock = new SteppedClock();
    const { connect, endpoint, probe } = make({ maxSessions: 2, idleMs: 1000, clock });
    const a = await connect();
    const busy = new AbortController();
    const waiting = a.client.callTool({ name: 'wait', arguments: {} }, undefined, { signal: busy.signal });
    for (let k = 0; k < 100 && probe.started === 0; k++) await delay(5);
    const b = await connect();
    const c = await connect();
    assert.equal(endpoint.sessionCount(), 2, 'beyond 2 sessions the least recently used idle one is closed');
    await clock.advance(2500);
    assert.equal(endpoint.sessionCount(), 1, 'idle sessions are closed; the busy one stays');
    busy.abort();
    await assert.rejects(waiting, 'the cancelled call rejects');
    for (const { client } of [a, b, c]) {
      const results = (await Promise.all(
        [1, 2, 3].map(() => client.callTool({ name: 'count', arguments: {} })),
      )) as CallToolResult[];
      for (const r of results)
        assert.equal((r.content[0] as { text: string }).text, 'counted', 'each client keeps working, calls at once');
    }
    assert.equal(endpoint.sessionCount(), 2, 'each closed session rebuilt once, within the limit');
    assert.equal(probe.aborted.length, 1, 'the busy call reached its handler (not a rebuilt server)');
    await Promise.all([a, b, c].map(({ client }) => client.close()));
  });

  it('closes the least recently used idle session for room, even when the clock has not moved since', async () => {
    // A clock that never moves: every session was last used at the same instant, and only the order of use tells them.
    const { connect, endpoint, probe } = make({ maxSessions: 2, clock: new SteppedClock() });
    const a = await connect();
    const b = await connect();
    await a.client.callTool({ name: 'count', arguments: {} });
    const c = await connect();
    assert.equal(endpoint.sessionCount(), 2, 'one session closed for room');
    assert.equal(probe.built, 3, 'three sessions opened');
    await a.client.callTool({ name: 'count', arguments: {} });
    await c.client.callTool({ name: 'count', arguments: {} });
    assert.equal(probe.built, 3, 'the session used since (and the newest) kept: neither rebuilt');
    await b.client.callTool({ name: 'count', arguments: {} });
    assert.equal(probe.built, 4, 'the least recently used one was closed: rebuilt on its next request');
    await Promise.all([a, b, c].map(({ client }) => client.close()));
  });

  it('keeps an ended session 404 however many sessions another token opens and ends since', async () => {
    const { endpoint, fetchIn } = make();
    const headers = { 'content-type': 'application/json', accept: 'application/json' };
    const ended = await rawSession(fetchIn);
    const del = (id: string, from = TEST_ARRIVAL) => {
      const request = requestOf(url, { method: 'DELETE', headers: { 'mcp-session-id': id } });
      request.headers.set('host', HOST);
      return endpoint.handler(request, from);
    };
    assert.equal((await del(ended)).status, 200);
    // Another principal opens and ends more sessions than an ended id is remembered among (a read token suffices).
    const other = { ...TEST_ARRIVAL, caller: { name: 'other', role: 'read' as const } };
    for (let k = 0; k <= ENDED_IDS_KEPT; k++) {
      const request = requestOf(url, { method: 'POST', headers, body: JSON.stringify(INIT('2025-06-18', k)) });
      request.headers.set('host', HOST);
      const init = await endpoint.handler(request, other);
      await init.text();
      assert.equal((await del(init.headers.get('mcp-session-id') ?? '', other)).status, 200);
    }
    const again = await fetchIn(url, {
      method: 'POST',
      headers: { ...headers, 'mcp-session-id': ended },
      body: JSON.stringify(CALL(5, 'count')),
    });
    assert.equal(again.status, 404, `the ended session was not rebuilt: ${await again.text()}`);
  });

  it('keeps the SDK DNS-rebinding check on JSON and SSE answers', async () => {
    const { endpoint } = make();
    const request = (host: string, accept: string, body: unknown, session?: string) =>
      endpoint.handler(
        new Request(url, {
          method: 'POST',
          headers: {
            host,
            accept,
            'content-type': 'application/json',
            ...(session ? { 'mcp-session-id': session } : {}),
          },
          body: JSON.stringify(body),
        }),
        TEST_ARRIVAL,
      );
    const init = await request(HOST, 'application/json', INIT('2025-06-18'));
    const session = init.headers.get('mcp-session-id') ?? '';
    for (const accept of ['application/json', 'application/json, text/event-stream']) {
      const res = await request(
        'evil.example:8007',
        accept,
        CALL(2, 'count', { _meta: { progressToken: 1 } }),
        session,
      );
      assert.equal(res.status, 403, `foreign Host refused (${accept})`);
      const plain = await request('evil.example:8007', accept, CALL(3, 'count'), session);
      assert.equal(plain.status, 403, `foreign Host refused without progress (${accept})`);
    }
  });

  it('answers the OAuth discovery response with 404 and no-store', async () => {
    const res = oauthDiscoveryResponse();
    assert.equal(res.status, 404, '404');
    assert.equal(res.headers.get('cache-control'), 'no-store', 'not cached');
    assert.match(await res.text(), /Bearer <token>/, 'names the Bearer token');
  });
});
