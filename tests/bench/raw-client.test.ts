import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { rawConnection, rawRequest } from '../../bench/raw-client.ts';
import { openMcpSession } from '../support/mcp.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/**
 * The bench's raw HTTP/1.1 client (the mcp section's "server alone" table): requests on one keep-alive connection,
 * each answer read to its Content-Length and its status handed back; an answer it cannot delimit, or a connection the
 * server closes, fails the request instead of hanging or being counted.
 */
describe('bench raw HTTP/1.1 client', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server.close();
  });

  it('sends the round trips of the mcp section on one connection and reads each answer whole', async () => {
    const session = await openMcpSession(server.url);
    const call = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'get_joint_states', arguments: {} },
    });
    const mcp = rawRequest(
      'POST',
      `${server.url}/mcp/mcp`,
      {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': session.id,
      },
      call,
    );
    assert.match(mcp.toString('latin1'), new RegExp(`\r\ncontent-length: ${Buffer.byteLength(call)}\r\n\r\n`));
    const connection = await rawConnection(server.url);
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) {
        statuses.push(await connection.send(rawRequest('GET', `${server.url}/robot/joint_states`)));
        statuses.push(await connection.send(mcp));
        statuses.push(await connection.send(rawRequest('GET', `${server.url}/bench/no-such-route`)));
      }
      assert.deepEqual(statuses, [200, 200, 404, 200, 200, 404, 200, 200, 404]);
    } finally {
      connection.close();
    }
    // Every request was served, and on one connection (each has its line; the MCP ones answered 200).
    const mcpLines = server.logs.filter((line) => line.msg === 'request' && line.path === '/mcp/mcp');
    assert.equal(mcpLines.filter((line) => line.status === 200).length, 4);
  });

  describe('answers it cannot count', () => {
    let plain: Server;
    let url: string;
    before(async () => {
      plain = createServer((req, res) => {
        if (req.url === '/chunked') {
          res.write('a piece');
          res.end(' and another');
        } else req.socket.destroy();
      });
      await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(plain.address() as AddressInfo).port}`;
    });
    after(async () => {
      plain.closeAllConnections();
      await new Promise<void>((resolve) => plain.close(() => resolve()));
    });

    it('fails a request answered without Content-Length (chunked)', async () => {
      const connection = await rawConnection(url);
      try {
        await assert.rejects(connection.send(rawRequest('GET', `${url}/chunked`)), /without Content-Length/);
      } finally {
        connection.close();
      }
    });

    it('fails a request whose connection the server closes', async () => {
      const connection = await rawConnection(url);
      try {
        await assert.rejects(connection.send(rawRequest('GET', `${url}/gone`)), /closed the connection/);
      } finally {
        connection.close();
      }
    });
  });
});
