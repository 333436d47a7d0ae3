/**
 * The jog WebSocket against a client that does not answer the server's close frame (a careless or hostile client on
 * a raw socket): once the server has closed the socket (a binary frame: 1003; a flood: 1008), what the client still
 * sends on it must not move the arm. `ws` keeps a closing socket readable until the client answers the close, or up
 * to its close timeout (30 s): its messages were still called as jog commands until then.
 * The simulator runs on a clock the test steps (tests/support/stepped.ts); the sockets are the machine's.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { SteppedClock } from '../../lib/clock.ts';
import type { TestServer } from '../support/server.ts';
import { startSteppedServer } from '../support/stepped.ts';

const TOKEN = 'operator-token-7e1d3c5b9a';
const ADMIN = 'admin-token-5f4e3d2c1b0a';
/** A token whose name is as long as the settings allow (64 characters). */
const LONG = 'pendant-token-2b4d6f8a0c';
const LONG_NAME = 'operator-on-the-cell-pc-in-hall-3-line-2-station-4-left-pendant1';
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

let server: TestServer;
let clock: SteppedClock;

/** One client frame (masked, as RFC 6455 asks of a client): opcode 1 text, 2 binary. */
function frame(opcode: number, payload: Buffer | string): Buffer {
  const body = Buffer.from(payload);
  const mask = randomBytes(4);
  const head =
    body.length < 126
      ? Buffer.from([0x80 | opcode, 0x80 | body.length])
      : Buffer.from([0x80 | opcode, 0x80 | 126, body.length >> 8, body.length & 0xff]);
  const masked = Buffer.alloc(body.length);
  for (let i = 0; i < body.length; i++) masked[i] = (body[i] ?? 0) ^ (mask[i % 4] ?? 0);
  return Buffer.concat([head, mask, masked]);
}

/** A raw client of the jog socket that never answers a close frame; `closeFrame` resolves with the server's code. */
async function rawJogSocket(
  token = TOKEN,
): Promise<{ socket: net.Socket; closeFrame: Promise<number>; reason: Promise<string> }> {
  const { port } = new URL(server.url);
  const socket = net.connect(Number(port), '127.0.0.1');
  socket.on('error', () => undefined);
  let received = Buffer.alloc(0);
  let upgraded: () => void = () => undefined;
  const open = new Promise<void>((resolve) => {
    upgraded = resolve;
  });
  let closed: (code: number, reason: string) => void = () => undefined;
  const frameOfClose = new Promise<{ code: number; reason: string }>((resolve) => {
    closed = (code, reason) => resolve({ code, reason });
  });
  const closeFrame = frameOfClose.then((f) => f.code);
  const reason = frameOfClose.then((f) => f.reason);
  socket.on('data', (chunk: Buffer) => {
    received = Buffer.concat([received, chunk]);
    const end = received.indexOf('\r\n\r\n');
    if (end < 0) return;
    if (!received.subarray(0, end).toString('latin1').startsWith('HTTP/1.1 101')) return;
    upgraded();
    // The server's frames after the head: find a close frame (0x88) and its code.
    let at = end + 4;
    while (at + 2 <= received.length) {
      const opcode = (received[at] ?? 0) & 0x0f;
      let length = (received[at + 1] ?? 0) & 0x7f;
      let start = at + 2;
      if (length === 126) {
        length = received.readUInt16BE(at + 2);
        start = at + 4;
      }
      if (start + length > received.length) break;
      if (opcode === 8) closed(received.readUInt16BE(start), received.subarray(start + 2, start + length).toString());
      at = start + length;
    }
  });
  socket.write(
    `GET /robot/jog HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n` +
      `Authorization: Bearer ${token}\r\n\r\n`,
  );
  await open;
  return { socket, closeFrame, reason };
}

const JOG = JSON.stringify({ joints: [0, 0, 0, 0, 0, 0, 0.5], ttl_ms: 200 });
const owner = () => server.services.jog?.owner();

/** Both times pass while the client goes on sending jog commands every 20 ms; resolves when `done` holds or at `ms`. */
async function keepSending(socket: net.Socket, ms: number, done: () => boolean): Promise<boolean> {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    if (done()) return true;
    socket.write(frame(1, JOG));
    await sleep(20);
    await clock.advance(20);
  }
  return done();
}

/** The jog of a fresh raw socket in force (its first command taken). */
async function jogging(token = TOKEN): Promise<net.Socket> {
  const { socket, closeFrame } = await rawJogSocket(token);
  socket.write(frame(1, JOG));
  for (let i = 0; i < 500 && owner() === undefined; i++) await sleep(10);
  assert.ok(owner()?.startsWith('websocket:'), 'the raw socket jogs');
  (socket as net.Socket & { closeFrame?: Promise<number> }).closeFrame = closeFrame;
  return socket;
}

const closeCodeOf = (socket: net.Socket) => (socket as net.Socket & { closeFrame?: Promise<number> }).closeFrame;

describe('the jog WebSocket of a live server, at its close and for a long token name', () => {
  before(async () => {
    ({ server, clock } = await startSteppedServer({
      web: {
        token: ADMIN,
        tokens: [
          { name: 'operator', token: TOKEN, role: 'operate' },
          { name: LONG_NAME, token: LONG, role: 'operate' },
        ],
      },
      sim: { time_scale: 1 },
    }));
  });
  after(async () => {
    await server.close();
  });

  describe('the jog WebSocket, closed by the server, to a client that does not answer the close', () => {
    it('a binary frame (1003) ends the jog at once: later text messages move nothing', async () => {
      const socket = await jogging();
      socket.write(frame(2, Buffer.from([1, 2, 3])));
      assert.equal(await closeCodeOf(socket), 1003);
      // The client goes on as if nothing happened: 5 s of both times at most for the jog to end.
      const ended = await keepSending(socket, 5000, () => owner() === undefined);
      assert.ok(ended, `the jog is still in force (${owner()}) while its closed socket sends commands`);
      const still = await keepSending(socket, 300, () => owner() !== undefined);
      assert.ok(!still, 'a command on the closed socket started a jog again');
      socket.destroy();
    });

    it('a flood (1008) ends the jog at once: commands in the next second move nothing', async () => {
      const socket = await jogging();
      for (let i = 0; i < 150; i++) socket.write(frame(1, JOG));
      assert.equal(await closeCodeOf(socket), 1008);
      // Past the flood's one-second window the socket would be under the cap again.
      const ended = await keepSending(socket, 5000, () => owner() === undefined);
      assert.ok(ended, `the jog is still in force (${owner()}) while its closed socket sends commands`);
      await sleep(1100);
      const still = await keepSending(socket, 300, () => owner() !== undefined);
      assert.ok(!still, 'a command on the closed socket started a jog again');
      socket.destroy();
    });
  });

  describe('the jog WebSocket of a token with a long name', () => {
    it('a second socket is closed with 4409 and a reason cut to 123 bytes; the server goes on serving', async () => {
      assert.equal(LONG_NAME.length, 64);
      const first = await jogging(LONG);
      const second = await rawJogSocket(TOKEN);
      assert.equal(await second.closeFrame, 4409);
      const reason = await second.reason;
      assert.match(reason, /^another client jogs over the WebSocket \(operator-on-the-cell/);
      assert.ok(Buffer.byteLength(reason) <= 123, reason);
      second.socket.destroy();
      const stop = await fetch(`${server.url}/stop`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}` } });
      assert.equal(stop.status, 200);
      first.destroy();
    });
  });
});
