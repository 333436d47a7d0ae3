/**
 * /stop from a new client is always served, whatever a crowd of connections holds (issue 37, item 1): connections
 * held open by a crowd in a child process, from client addresses of their own (127.0.0.x), never reading what the
 * server sends. Idle connections cut by the headers timeout are closed, not left counted half closed; beyond the
 * per-address cap the oldest idle connection of that address is shed; beyond the global cap with every connection
 * busy, a new connection is still read: a stop on it is served, anything else answered 503.
 */
import assert from 'node:assert/strict';
import { after, afterEach, describe, it } from 'node:test';
import { type ConnectionCrowd, connectionCrowd } from '../support/connection-crowd.ts';
import { sleep } from '../support/live.ts';
import { connect, portOf } from '../support/raw-http.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/** POST /stop on a new connection from this process (127.0.0.1): its status and how long it took. */
async function stopFromNewClient(url: string): Promise<{ status: number; ms: number }> {
  const t0 = performance.now();
  const res = await fetch(`${url}/stop`, { method: 'POST', headers: { connection: 'close' } });
  await res.arrayBuffer();
  return { status: res.status, ms: performance.now() - t0 };
}

/** The server's open connections, as Node counts them. */
const openConnections = (server: TestServer) =>
  new Promise<number>((resolve, reject) =>
    server.server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
  );

/** Waits until `check` holds, polling every 100 ms, for at most `ms`; returns whether it held. */
async function eventually(check: () => Promise<boolean>, ms: number): Promise<boolean> {
  const until = performance.now() + ms;
  for (;;) {
    if (await check()) return true;
    if (performance.now() > until) return false;
    await sleep(100);
  }
}

describe('a crowd of connections never keeps a stop out', () => {
  let server: TestServer | undefined;
  let crowd: ConnectionCrowd | undefined;
  afterEach(async () => {
    await crowd?.end();
    crowd = undefined;
    await server?.close();
    server = undefined;
  });
  after(async () => {
    await crowd?.end();
    await server?.close();
  });

  it('5,000 connections held from one address that never read: a stop from another answers at once', async () => {
    server = await startTestServer();
    crowd = await connectionCrowd();
    const opened = await crowd.open({ port: portOf(server.url), count: 5000, from: ['127.0.0.2'], sends: 'nothing' });
    assert.equal(opened.opened, 5000, JSON.stringify(opened));
    const held = await openConnections(server);
    // The address keeps max_connections_per_client (256): each connection beyond it shed the oldest idle one.
    assert.ok(held <= 256 + 4, `the server holds ${held} connections of the crowd's 5,000`);
    const stops = [];
    for (let k = 0; k < 5; k++) stops.push(await stopFromNewClient(server.url));
    assert.deepEqual(
      stops.map((s) => s.status),
      [200, 200, 200, 200, 200],
    );
    // A generous bound for a loaded machine: the exact figure is in `npm run bench -- stop`.
    const worst = Math.max(...stops.map((s) => s.ms));
    assert.ok(worst < 1000, `stops answered in ${stops.map((s) => s.ms.toFixed(1)).join(', ')} ms`);
  });

  it('closes the connections the headers timeout cut, though their clients never read nor close', async () => {
    server = await startTestServer({ web: { limits: { headers_timeout_s: 1 } } });
    crowd = await connectionCrowd();
    const from = Array.from({ length: 10 }, (_, i) => `127.0.1.${i + 1}`);
    await crowd.open({ port: portOf(server.url), count: 200, from, sends: 'nothing' });
    const s = server;
    const held = await eventually(async () => (await openConnections(s)) >= 190, 3000);
    assert.ok(held, `the crowd holds its connections (${await openConnections(s)})`);
    // The cut (408) comes after 1 s and a check (every 0.5 s); the connection is closed within 1 s after it.
    const gone = await eventually(async () => (await openConnections(s)) === 0, 8000);
    assert.ok(gone, `${await openConnections(s)} connections still counted after the idle cut`);
    assert.equal((await stopFromNewClient(s.url)).status, 200);
  });

  it('never sheds a connection handed over by an upgrade (a WebSocket is not idle)', async () => {
    server = await startTestServer({ web: { limits: { max_connections_per_client: 4 } } });
    const port = portOf(server.url);
    // The jog WebSocket takes the socket and keeps it (no token set: the caller is the anonymous admin).
    const upgraded = await connect(port, '127.0.4.1');
    upgraded.write(
      `GET /robot/jog HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n' +
        'Sec-WebSocket-Protocol: armgate.jog.v1\r\n\r\n',
    );
    const crowd = [];
    try {
      assert.equal((await upgraded.response()).status, 101);
      // Eight more from the same address, idle: each beyond the cap sheds the oldest idle one, never the upgraded.
      for (let k = 0; k < 8; k++) crowd.push(await connect(port, '127.0.4.1'));
      await sleep(300);
      assert.ok(!upgraded.socket.destroyed && !upgraded.socket.readableEnded, 'the upgraded connection is kept');
      assert.ok(
        crowd.slice(0, 5).every((c) => c.socket.readableEnded || c.socket.destroyed),
        'the oldest idle ones were shed',
      );
    } finally {
      upgraded.destroy();
      for (const c of crowd) c.destroy();
    }
  });

  it('beyond max_connections with every connection busy: a stop on a new connection is served, a read is 503', async () => {
    server = await startTestServer({
      web: { limits: { max_connections: 16, max_connections_per_client: 4, body_grace_s: 60 } },
    });
    const port = portOf(server.url);
    crowd = await connectionCrowd();
    // 100 POSTs whose bodies never come, from 25 addresses (4 each): 16 are served (busy, reading their bodies), the
    // rest refused with 503 as they are beyond the cap.
    const from = Array.from({ length: 25 }, (_, i) => `127.0.2.${i + 1}`);
    await crowd.open({ port, count: 100, from, sends: 'unfinished-body' });
    await sleep(300);
    const stop = await stopFromNewClient(server.url);
    assert.equal(stop.status, 200, 'a stop beyond the cap is served');
    const read = await connect(port, '127.0.3.1');
    try {
      read.write(`GET /robot/joint_states HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
      const refused = await read.response();
      assert.equal(refused.status, 503, refused.body);
      assert.match(JSON.parse(refused.body).detail, /web\.limits\.max_connections\)/);
    } finally {
      read.destroy();
    }
  });
});
