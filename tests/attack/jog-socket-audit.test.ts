/**
 * The jog WebSocket's commands are not lines of the audit trail one by one (lib/http/websocket.ts): its jog's start
 * and end are. A client that starts a jog one way and then turns it another within the same jog (a command of another
 * joint or direction, over the live socket) left a trail showing only the first way: each change of its command is a
 * line too, as a REST jog command's is.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { sleep } from '../support/live.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const ADMIN = 'jog-socket-audit-token-6e1d0a';

describe('the jog WebSocket on the audit trail', () => {
  let server: TestServer;
  let dir: string;
  let file: string;
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'armgate-jog-socket-audit-'));
    file = path.join(dir, 'audit.jsonl');
    server = await startTestServer({ web: { token: ADMIN }, audit: { path: file, max_bytes: 1 << 20 } });
  });
  after(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('a jog turned to another joint within the same jog: the change is a line of the trail', async () => {
    const ws = new WebSocket(`${server.url.replace('http', 'ws')}/robot/jog`, ['armgate.jog.v1'], {
      headers: { authorization: `Bearer ${ADMIN}` },
    });
    const statuses: { type?: string; jogging?: boolean }[] = [];
    ws.on('message', (data) => statuses.push(JSON.parse(String(data)) as { type?: string }));
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    try {
      ws.send(JSON.stringify({ joints: [0.3, 0, 0, 0, 0, 0, 0], ttl_ms: 500 }));
      await sleep(150);
      ws.send(JSON.stringify({ joints: [0, 0, 0, 0, 0, 0, -0.6], ttl_ms: 500 }));
      await sleep(150);
      ws.send(JSON.stringify({ joints: [0, 0, 0, 0, 0, 0, 0] }));
      await sleep(150);
    } finally {
      ws.close();
    }
    for (let i = 0; i < 100 && server.services.jog?.owner() !== undefined; i++) await sleep(20);
    await server.services.audit?.flush();
    const jogs = (await readFile(file, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { operation: string; interface: string; outcome: { message?: string } })
      .filter((l) => l.operation === 'jog' && l.interface === 'websocket')
      .map((l) => l.outcome.message);
    assert.deepEqual(
      jogs.map((m) => m?.replace(/ended: .*/, 'ended')),
      ['jog started over websocket: joint1 +0.30', 'jog changed over websocket: joint7 -0.60', 'jog ended'],
      `the trail shows the jog's way each time it changed (${JSON.stringify(statuses.slice(0, 3))})`,
    );
  });
});
