/**
 * A jog WebSocket whose client sends but never reads: each refused message is answered (a 422 can be 4 KB), and what
 * it does not read queued in the server's memory without a bound (3 MB/s from 20 such sockets of one address, past
 * the kernel's buffers). As the Foxglove face drops a client over `foxglove.send_buffer_limit`, the socket is closed
 * (1008 "reads too slowly") once over 1 MiB is queued for it, and ended shortly after if it still does not read.
 * Real time: the kernel's buffers fill first (a few MB), at the socket's 100 messages a second.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { TestServer } from '../support/server.ts';
import { startSteppedServer } from '../support/stepped.ts';

const ADMIN = 'admin-token-8d6c4b2a0f9e';

let server: TestServer;

function frame(payload: string): Buffer {
  const body = Buffer.from(payload);
  const mask = randomBytes(4);
  const masked = Buffer.alloc(body.length);
  for (let i = 0; i < body.length; i++) masked[i] = (body[i] ?? 0) ^ (mask[i % 4] ?? 0);
  return Buffer.concat([Buffer.from([0x81, 0x80 | 126, body.length >> 8, body.length & 0xff]), mask, masked]);
}

describe('the jog WebSocket of a client that never reads', () => {
  before(async () => {
    ({ server } = await startSteppedServer({ web: { token: ADMIN } }));
  });
  after(async () => {
    await server.close();
  });

  it('is closed (1008, reads too slowly) and ended once over 1 MiB is queued for it', async () => {
    const { port } = new URL(server.url);
    const socket = net.connect(Number(port), '127.0.0.1');
    socket.on('error', () => undefined);
    socket.write(
      `GET /robot/jog HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n` +
        `Authorization: Bearer ${ADMIN}\r\n\r\n`,
    );
    // Never read: the server's answers (a 422 naming the long unknown key, about 4 KB each) queue up.
    socket.pause();
    const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    let gone = false;
    void ended.then(() => {
      gone = true;
    });
    const message = frame(JSON.stringify({ [`k${'x'.repeat(3900)}`]: 1, ttl_ms: 100 }));
    const t0 = performance.now();
    // 90 messages a second (under the flood cap) for at most 90 s: before the bound, the socket stayed open.
    while (!gone && performance.now() - t0 < 90_000) {
      for (let k = 0; k < 9 && !gone; k++) socket.write(message);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.ok(gone, 'the server still holds the socket of a client that never reads');
    const lines = JSON.stringify(server.logs);
    assert.match(lines, /reads too slowly/);
  });
});
