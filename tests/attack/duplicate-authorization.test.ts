/**
 * Two credentials on one request, from outside: two Authorization lines (Node keeps the first in its headers and
 * armgate used it, whatever the second said, while two Host lines were a 400), or a WebSocket upgrade's Authorization
 * header beside a different token in its other place (the jog socket's subprotocol, Foxglove's `?token=`). Which
 * caller such a request is would be a guess: each is a 400 naming the header, on REST, MCP and both WebSocket
 * upgrades, and nothing runs (a move does not start). A stop so sent (REST, or an MCP stop tool's call) is the
 * exception, as past the guess limit: answered the same 400, it is carried out for the first line whose token is
 * valid, audited under that token's name; with no valid token, or with two Host lines, nothing runs.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { refusalsPath } from '../../lib/audit/trail.ts';
import { portOf, rawRequest, upgradeAnswer } from '../support/raw-http.ts';
import { initializeRequest } from '../support/mcp.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const ADMIN = 'admin-token-5e6f7a8b9c0d';
const READER = 'reader-token-1a2b3c4d5e6f';
const WORK = [0, 0, 0, -1.57, 0, 1.57, 0];

describe('two credentials on one request', () => {
  let server: TestServer;
  let port: number;
  let authority: string;

  before(async () => {
    server = await startTestServer({
      web: { token: ADMIN, tokens: [{ name: 'reader', token: READER, role: 'read' }] },
      foxglove: { enabled: true, port: 0, address: '127.0.0.1' },
    });
    port = portOf(server.url);
    authority = `127.0.0.1:${port}`;
  });
  after(async () => {
    await server?.close();
  });

  const position = async () =>
    (
      (await (
        await fetch(`${server.url}/robot/joint_states`, { headers: { authorization: `Bearer ${ADMIN}` } })
      ).json()) as {
        position: number[];
      }
    ).position;
  const twoLines = (first: string, second: string) =>
    `Authorization: Bearer ${first}\r\nAuthorization: Bearer ${second}\r\n`;

  for (const [what, first, second] of [
    ['a right token, then a wrong one', ADMIN, 'wrong-token'],
    ['a read token, then an admin token', READER, ADMIN],
    ['the same token twice', ADMIN, ADMIN],
  ] as const) {
    it(`REST: a move with two Authorization lines (${what}) is 400 naming the header, and the arm stays`, async () => {
      const before = await position();
      const body = JSON.stringify({ joints: WORK.map((q, j) => (j === 0 ? q + 0.5 : q)), speed: 1 });
      const res = await rawRequest(
        port,
        `POST /robot/move/joints HTTP/1.1\r\nHost: ${authority}\r\n${twoLines(first, second)}` +
          `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
      assert.equal(res.status, 400, res.body);
      assert.match(res.body, /more than one Authorization header/);
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.deepEqual(await position(), before, 'the arm did not move');
    });
  }

  it('REST: a read with two Authorization lines is 400 too (no token is picked)', async () => {
    const res = await rawRequest(
      port,
      `GET /robot/joint_states HTTP/1.1\r\nHost: ${authority}\r\n${twoLines(ADMIN, 'wrong')}Connection: close\r\n\r\n`,
    );
    assert.equal(res.status, 400, res.body);
    assert.match(res.body, /more than one Authorization header/);
  });

  it('MCP: an initialize with two Authorization lines is 400 naming the header', async () => {
    const body = JSON.stringify(initializeRequest('raw', { id: 1 }));
    const res = await rawRequest(
      port,
      `POST /mcp/mcp HTTP/1.1\r\nHost: ${authority}\r\n${twoLines(ADMIN, 'wrong')}Content-Type: application/json\r\n` +
        `Accept: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
    assert.equal(res.status, 400, res.body);
    assert.match(res.body, /more than one Authorization header/);
    assert.equal(res.headers['mcp-session-id'], undefined, 'no session was opened');
  });

  const upgrade = upgradeAnswer;
  const jogUrl = () => `${server.url.replace('http', 'ws')}/robot/jog`;
  const asProtocol = (token: string) => `armgate.token.${Buffer.from(token).toString('base64url')}`;

  it('the jog WebSocket: two Authorization lines are 400 naming the header', async () => {
    const { status, body } = await upgrade(jogUrl(), ['armgate.jog.v1'], {
      authorization: [`Bearer ${ADMIN}`, 'Bearer wrong'],
    });
    assert.equal(status, 400, body);
    assert.match(body, /more than one Authorization header/);
  });

  it('the jog WebSocket: an Authorization header and a different token subprotocol are 400 naming both', async () => {
    for (const [header, token] of [
      [ADMIN, READER],
      [READER, ADMIN],
      ['wrong', ADMIN],
    ]) {
      const { status, body } = await upgrade(jogUrl(), ['armgate.jog.v1', asProtocol(token ?? '')], {
        authorization: `Bearer ${header}`,
      });
      assert.equal(status, 400, body);
      assert.match(body, /the Authorization header and the token subprotocol name different tokens/);
    }
    const same = await upgrade(jogUrl(), ['armgate.jog.v1', asProtocol(ADMIN)], { authorization: `Bearer ${ADMIN}` });
    assert.equal(same.status, 101, `the same token in both places opens: ${same.body}`);
  });

  it('Foxglove: two Authorization lines, or a header and a different ?token=, are 400 naming them', async () => {
    const url = server.foxglove?.url ?? '';
    const two = await upgrade(url, ['foxglove.websocket.v1'], { authorization: [`Bearer ${ADMIN}`, 'Bearer wrong'] });
    assert.equal(two.status, 400, two.body);
    assert.match(two.body, /more than one Authorization header/);
    const differ = await upgrade(`${url}/?token=${READER}`, ['foxglove.websocket.v1'], {
      authorization: `Bearer ${ADMIN}`,
    });
    assert.equal(differ.status, 400, differ.body);
    assert.match(differ.body, /the Authorization header and \?token= name different tokens/);
    const same = await upgrade(`${url}/?token=${ADMIN}`, ['foxglove.websocket.v1'], {
      authorization: `Bearer ${ADMIN}`,
    });
    assert.equal(same.status, 101, `the same token in both places opens: ${same.body}`);
  });

  it('two Host lines on a WebSocket upgrade are 400 too, as on a request', async () => {
    const res = await rawRequest(
      port,
      `GET /robot/jog HTTP/1.1\r\nHost: ${authority}\r\nHost: evil.example\r\nAuthorization: Bearer ${ADMIN}\r\n` +
        'Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n' +
        'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: armgate.jog.v1\r\n\r\n',
    );
    assert.equal(res.status, 400, res.body);
    assert.match(res.body, /more than one Host header/);
  });
});

describe('a stop with two Authorization lines', () => {
  let server: TestServer;
  let port: number;
  let authority: string;
  let dir: string;
  let auditFile: string;

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'armgate-two-credentials-'));
    auditFile = path.join(dir, 'audit.jsonl');
    server = await startTestServer({
      web: { token: ADMIN, tokens: [{ name: 'reader', token: READER, role: 'read' }] },
      audit: { path: auditFile },
    });
    port = portOf(server.url);
    authority = `127.0.0.1:${port}`;
  });
  after(async () => {
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  /**
   * The principals of the stops on the audit trail so far: its file of effects, then its refusals' file, where a stop
   * at rest after another of the same token is written or counted as a repeat (docs/safe-deployment.md); one entry per
   * stop, a counted line's `more_like_it` times.
   */
  const auditedStops = async () => {
    await server.services.audit?.flush();
    const stops: string[] = [];
    for (const file of [auditFile, refusalsPath(auditFile)]) {
      const text = await readFile(file, 'utf8').catch(() => '');
      for (const line of text.split('\n')) {
        if (line.trim() === '') continue;
        const entry = JSON.parse(line) as { operation: string; principal: string; more_like_it?: number };
        if (entry.operation === 'stop') for (let k = 0; k < (entry.more_like_it ?? 1); k++) stops.push(entry.principal);
      }
    }
    return stops;
  };
  /** The stops of `now` beyond those of `before` (as multisets: the two files interleave), sorted. */
  const addedStops = (before: readonly string[], now: readonly string[]) => {
    const left = [...before];
    return now
      .filter((name) => {
        const at = left.indexOf(name);
        if (at < 0) return true;
        left.splice(at, 1);
        return false;
      })
      .sort();
  };

  /** The statuses of the request lines logged for `/stop` since log line `from`, once `count` of them are in. */
  const stopLines = async (from: number, count: number) => {
    const lines = () => server.logs.slice(from).filter((l) => l.msg === 'request' && l.path === '/stop');
    for (let i = 0; i < 250 && lines().length < count; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    return lines().map((l) => Number(l.status));
  };

  const stopWith = (headers: string) =>
    rawRequest(port, `POST /stop HTTP/1.1\r\n${headers}Content-Length: 0\r\nConnection: close\r\n\r\n`);

  for (const [what, first, second, principal, logged] of [
    ['a wrong token, then a right one', 'wrong-token', ADMIN, 'web.token', [400, 401, 200]],
    ['a read token, then a wrong one', READER, 'wrong-token', 'reader', [400, 200]],
    ['two right tokens: the first one', READER, ADMIN, 'reader', [400, 200]],
  ] as const) {
    it(`is answered 400 and carried out for its valid token (${what}), audited under that token's name`, async () => {
      const stops = server.services.arbiter.stopCount;
      const audited = await auditedStops();
      const from = server.logs.length;
      const res = await stopWith(
        `Host: ${authority}\r\nAuthorization: Bearer ${first}\r\nAuthorization: Bearer ${second}\r\n`,
      );
      assert.equal(res.status, 400, res.body);
      assert.match(
        JSON.parse(res.body).detail,
        /^more than one Authorization header; a stop with a valid token is carried out all the same/,
      );
      assert.deepEqual(await stopLines(from, logged.length), logged, 'the 400, then the stop tried line by line');
      assert.ok(server.services.arbiter.stopCount > stops, 'the arm was stopped');
      assert.deepEqual(addedStops(audited, await auditedStops()), [principal], 'one stop, under the valid token');
    });
  }

  /** A tools/call of `name` to /mcp/mcp with `authorization` (header lines), on a connection of its own: its answer. */
  const toolWith = (authorization: string, name: string, args: object) => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name, arguments: args } });
    return rawRequest(
      port,
      `POST /mcp/mcp HTTP/1.1\r\nHost: ${authority}\r\n${authorization}Content-Type: application/json\r\n` +
        'Accept: application/json, text/event-stream\r\nMcp-Session-Id: a-session-opened-elsewhere\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  };

  it("MCP: a stop tool's call with two Authorization lines (a wrong token, then a right one) is 400 and carried out", async () => {
    const stops = server.services.arbiter.stopCount;
    const audited = await auditedStops();
    const res = await toolWith(`Authorization: Bearer wrong-token\r\nAuthorization: Bearer ${READER}\r\n`, 'stop', {});
    assert.equal(res.status, 400, res.body);
    assert.match(
      JSON.parse(res.body).detail,
      /^more than one Authorization header; a stop with a valid token is carried out all the same/,
    );
    for (let i = 0; i < 250 && server.services.arbiter.stopCount === stops; i++)
      await new Promise((resolve) => setTimeout(resolve, 20));
    assert.ok(server.services.arbiter.stopCount > stops, 'the arm was stopped');
    for (let i = 0; i < 50 && (await auditedStops()).length === audited.length; i++)
      await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(addedStops(audited, await auditedStops()), ['reader'], 'one stop, under the valid token');
  });

  it("MCP: a move tool's call with two right Authorization lines is the same 400, and nothing moves", async () => {
    const position = async () =>
      (
        (await (
          await fetch(`${server.url}/robot/joint_states`, { headers: { authorization: `Bearer ${ADMIN}` } })
        ).json()) as { position: number[] }
      ).position;
    const before = await position();
    const res = await toolWith(
      `Authorization: Bearer ${ADMIN}\r\nAuthorization: Bearer ${ADMIN}\r\n`,
      'move_to_joints',
      {
        joints: WORK.map((q, j) => (j === 0 ? q + 0.5 : q)),
        speed: 1,
      },
    );
    assert.equal(res.status, 400, res.body);
    assert.match(JSON.parse(res.body).detail, /^more than one Authorization header; a stop with a valid token/);
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(server.services.arbiter.activity(), undefined, 'nothing holds the arm');
    assert.deepEqual(await position(), before, 'the arm did not move');
  });

  it('with two wrong tokens: the same 400, each token refused (counted as a wrong one), nothing stopped', async () => {
    const stops = server.services.arbiter.stopCount;
    const from = server.logs.length;
    const res = await stopWith(
      `Host: ${authority}\r\nAuthorization: Bearer wrong-1\r\nAuthorization: Bearer wrong-2\r\n`,
    );
    assert.equal(res.status, 400, res.body);
    assert.match(JSON.parse(res.body).detail, /^more than one Authorization header; a stop with a valid token/);
    assert.deepEqual(await stopLines(from, 3), [400, 401, 401]);
    assert.equal(server.services.arbiter.stopCount, stops, 'nothing was stopped');
  });

  it('with two Host lines as well: 400 naming the header that came twice first, and nothing stopped', async () => {
    const stops = server.services.arbiter.stopCount;
    const from = server.logs.length;
    const res = await stopWith(
      `Host: ${authority}\r\nHost: evil.example\r\nAuthorization: Bearer ${ADMIN}\r\nAuthorization: Bearer ${READER}\r\n`,
    );
    assert.equal(res.status, 400, res.body);
    assert.match(JSON.parse(res.body).detail, /^more than one Host header$/);
    // A stop would be logged (and counted) within the same turns as the 400: a read behind it is answered after them.
    const read = await fetch(`${server.url}/robot/joint_states`, { headers: { authorization: `Bearer ${ADMIN}` } });
    assert.equal(read.status, 200);
    await read.arrayBuffer();
    assert.deepEqual(await stopLines(from, 1), [400]);
    assert.equal(server.services.arbiter.stopCount, stops, 'nothing was stopped');
  });
});
