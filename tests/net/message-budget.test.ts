/**
 * The WebSocket faces' shared budget of messages per turn (lib/net/message-budget.ts), through live sockets: clients
 * of the Foxglove server and of the jog route each send a burst far past the budget in one write; the connections are
 * paused and resumed (the budget's counts say so) and every message is answered, each connection's in order.
 */
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { createMessageBudget, MESSAGES_PER_TURN, webSocketMessages } from '../../lib/net/message-budget.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const BURST = 300;
const CLIENTS = 4;

let server: TestServer;

/** A WebSocket client from `localAddress`, its text answers collected; resolves once open. */
function open(url: string, protocol: string, localAddress: string): Promise<{ ws: WebSocket; texts: string[] }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, [protocol], { perMessageDeflate: false, localAddress });
    const texts: string[] = [];
    ws.on('message', (data, isBinary) => {
      if (!isBinary) texts.push(data.toString());
    });
    ws.once('open', () => resolve({ ws, texts }));
    ws.once('error', reject);
  });
}

/** Sends `messages` in one write (the socket corked): the server reads them in one chunk, within one turn. */
function burst(ws: WebSocket, messages: readonly string[]): void {
  const socket = (ws as unknown as { _socket: Socket })._socket;
  socket.cork();
  for (const m of messages) ws.send(m);
  socket.uncork();
}

async function until(check: () => boolean, timeoutMs = 30_000): Promise<void> {
  const t0 = Date.now();
  while (!check()) {
    if (Date.now() - t0 > timeoutMs) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('WebSocket messages per turn, shared', () => {
  before(async () => {
    server = await startTestServer({ foxglove: { enabled: true, port: 0, address: '127.0.0.1' } });
  });
  after(async () => {
    await server?.close();
  });

  describe('the shared budget of WebSocket messages per turn', () => {
    it('pauses Foxglove connections past it and resumes them: every message answered, in order', async () => {
      const url = server.foxglove?.url ?? '';
      const clients = await Promise.all(
        Array.from({ length: CLIENTS }, (_, i) => open(url, 'foxglove.websocket.v1', `127.0.3.${1 + i}`)),
      );
      const answers = (texts: string[]) =>
        texts.map((t) => JSON.parse(t) as { op: string; id?: string }).filter((m) => m.op === 'parameterValues');
      const before = { ...webSocketMessages.counts };
      clients.forEach(({ ws }, i) => {
        burst(
          ws,
          Array.from({ length: BURST }, (_, k) =>
            JSON.stringify({ op: 'getParameters', parameterNames: ['none'], id: `${i}-${k}` }),
          ),
        );
      });
      await until(() => clients.every(({ texts }) => answers(texts).length >= BURST));
      const counts = webSocketMessages.counts;
      // More than a turn's budget arrived at once: some waited, their connections paused (and resumed: all answered).
      assert.ok(CLIENTS * BURST > MESSAGES_PER_TURN);
      assert.ok(counts.queued - before.queued > 0);
      assert.ok(counts.pauses - before.pauses > 0);
      assert.equal(counts.immediate - before.immediate + counts.queued - before.queued, CLIENTS * BURST);
      clients.forEach(({ texts, ws }, i) => {
        assert.deepEqual(
          answers(texts).map((m) => m.id),
          Array.from({ length: BURST }, (_, k) => `${i}-${k}`),
        );
        assert.equal(ws.readyState, WebSocket.OPEN);
        ws.close();
      });
    });

    it('pauses jog sockets past it and resumes them: every message answered, in order', async () => {
      const url = `${server.url.replace('http', 'ws')}/robot/jog`;
      const clients = await Promise.all(
        Array.from({ length: CLIENTS }, (_, i) => open(url, 'armgate.jog.v1', `127.0.4.${1 + i}`)),
      );
      // Each message has a key of its own that the route does not know: each is answered a 422 naming it.
      const key = (i: number, k: number) => `c${i}_${k}`;
      const before = { ...webSocketMessages.counts };
      // 90 a socket: under the route's cap of 100 messages a second.
      const count = 90;
      clients.forEach(({ ws }, i) => {
        burst(
          ws,
          Array.from({ length: count }, (_, k) => JSON.stringify({ joints: [0.1, 0, 0, 0, 0, 0, 0], [key(i, k)]: 1 })),
        );
      });
      const errors = (texts: string[]) =>
        texts.map((t) => JSON.parse(t) as { type?: string; status?: number }).filter((m) => m.type === 'error');
      await until(() => clients.every(({ texts }) => errors(texts).length >= count));
      const counts = webSocketMessages.counts;
      assert.ok(counts.queued - before.queued > 0);
      assert.ok(counts.pauses - before.pauses > 0);
      clients.forEach(({ texts, ws }, i) => {
        const named = errors(texts).map((m) => (JSON.stringify(m).match(/c\d+_\d+/) ?? [''])[0]);
        assert.deepEqual(
          named,
          Array.from({ length: count }, (_, k) => key(i, k)),
        );
        assert.ok(errors(texts).every((m) => m.status === 422));
        assert.equal(ws.readyState, WebSocket.OPEN);
        ws.close();
      });
    });
  });

  describe('the budget, its turns stepped', () => {
    it('handles at most its budget a turn, in arrival order across connections, pausing each until it is drained', () => {
      const turns: (() => void)[] = [];
      const budget = createMessageBudget(3, (drain) => turns.push(drain));
      const done: string[] = [];
      const events: string[] = [];
      const connection = (name: string) => ({
        pause: () => events.push(`${name} paused`),
        resume: () => events.push(`${name} resumed`),
      });
      const a = connection('a');
      const b = connection('b');
      for (const [c, m] of [
        [a, 'a1'],
        [b, 'b1'],
        [a, 'a2'],
        [b, 'b2'],
        [a, 'a3'],
        [b, 'b3'],
      ] as const)
        budget.handle(c, () => done.push(m));
      assert.deepEqual(done, ['a1', 'b1', 'a2']);
      assert.deepEqual(events, ['b paused', 'a paused']);
      turns.shift()?.();
      assert.deepEqual(done, ['a1', 'b1', 'a2', 'b2', 'a3', 'b3']);
      assert.deepEqual(events, ['b paused', 'a paused', 'a resumed', 'b resumed']);
      // The next turn's budget is afresh: a new message is handled at once.
      turns.shift()?.();
      budget.handle(a, () => done.push('a4'));
      assert.equal(done.at(-1), 'a4');
    });
  });
});
