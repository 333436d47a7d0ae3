/**
 * Shutting down with a jog WebSocket whose client does not answer the close frame (a careless client, or one whose
 * machine is gone): the server's close must not wait for it. `ws` waits 30 s for the client's close frame before it
 * ends the socket, and the HTTP server's close waited for that socket: a SIGTERM took 31 s (a container runtime's
 * 10 s stop timeout then kills the process), where the Foxglove face ends its sockets after 500 ms.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { describe, it } from 'node:test';
import { startSteppedServer } from '../support/stepped.ts';

const ADMIN = 'admin-token-3e5d7c9b1a2f';

describe('shutdown with a jog WebSocket that never answers the close', () => {
  it('the server closes within seconds, not the 30 s ws waits for the close frame', async () => {
    const { server } = await startSteppedServer({ web: { token: ADMIN } });
    const { port } = new URL(server.url);
    const socket = net.connect(Number(port), '127.0.0.1');
    socket.on('error', () => undefined);
    const opened = new Promise<void>((resolve) =>
      socket.once('data', (chunk: Buffer) => {
        assert.match(chunk.toString('latin1'), /^HTTP\/1\.1 101/);
        resolve();
      }),
    );
    socket.write(
      `GET /robot/jog HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n` +
        `Authorization: Bearer ${ADMIN}\r\n\r\n`,
    );
    await opened;
    const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    const t0 = performance.now();
    await server.close();
    const closeMs = performance.now() - t0;
    await ended;
    // Its requests in flight get 2 s; a loaded machine may add some. ws's own wait is 30 s.
    assert.ok(closeMs < 15_000, `the server took ${Math.round(closeMs)} ms to close`);
  });
});
