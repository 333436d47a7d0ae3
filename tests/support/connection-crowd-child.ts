/**
 * The child of tests/support/connection-crowd.ts: on `{ kind: 'open', port, count, from, sends }` it opens `count`
 * connections to 127.0.0.1:`port` from the addresses of `from` in turn, 200 at a time, never reads from them, and
 * answers its counts; on `{ kind: 'counts' }` it answers them. It ends when killed or when its parent goes.
 */
import net from 'node:net';
import type { CrowdCounts, CrowdOrder } from './connection-crowd.ts';

let opened = 0;
let closedByServer = 0;
let failed = 0;
const sockets = new Set<net.Socket>();
const counts = (): CrowdCounts => ({ opened, closedByServer, failed });

function openOne(order: CrowdOrder, i: number): Promise<void> {
  return new Promise((resolve) => {
    const socket = net.connect({
      port: order.port,
      host: '127.0.0.1',
      localAddress: order.from[i % order.from.length] ?? '127.0.0.2',
    });
    // Never read: what the server sends stays in the kernel's buffers.
    socket.pause();
    socket.once('connect', () => {
      opened++;
      sockets.add(socket);
      if (order.sends === 'unfinished-body')
        socket.write(
          `POST /robot/move/joints HTTP/1.1\r\nHost: 127.0.0.1:${order.port}\r\nContent-Type: application/json\r\n` +
            'Content-Length: 100000\r\n\r\n{',
        );
      resolve();
    });
    socket.on('error', () => undefined);
    socket.once('close', () => {
      if (sockets.delete(socket)) closedByServer++;
      else {
        failed++;
        resolve();
      }
    });
    // A FIN from the server: the connection is half closed, not gone (the server may still count it).
    socket.once('end', () => undefined);
  });
}

process.on('message', async (message: { kind: string } & CrowdOrder) => {
  if (message.kind === 'open') {
    for (let at = 0; at < message.count; at += 200)
      await Promise.all(Array.from({ length: Math.min(200, message.count - at) }, (_, k) => openOne(message, at + k)));
  }
  process.send?.(counts());
});
process.on('disconnect', () => process.exit(0));
process.send?.({ ready: true });
