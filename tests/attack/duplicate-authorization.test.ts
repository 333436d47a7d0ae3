/**
 * Two credentials on one request, from outside: two Authorization lines (Node keeps the first in its headers and
 * armgate used it, whatever the second said, while two Host lines were a 400), or a WebSocket upgrade's Authorization
 * header beside a different token in its other place (the jog socket's subprotocol, Foxglove's `?token=`). Which
 * caller such a request is would be a guess: each is a 400 naming the header, on REST, MCP and both WebSocket
 * upgrades, and nothing runs (a move does not start).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { portOf, rawRequest } from '../support/raw-http.ts';
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

  /** The status of a WebSocket upgrade (101 when it opened) and the body of its refusal. */
  const upgrade = (url: string, protocols: string[], headers: Record<string, string | string[]>) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const ws = new WebSocket(url, protocols, { headers: headers as Record<string, string> });
      ws.on('open', () => {
        ws.close();
        resolve({ status: 101, body: '' });
      });
      ws.on('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => {
          body += chunk.toString();
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      ws.on('error', reject);
    });
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
