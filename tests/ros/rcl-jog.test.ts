/**
 * Jogging on the ros2 backend is not there yet: POST /robot/jog, the step and the jog WebSocket answer 503 saying so,
 * and nothing moves (the rclnodejs context over its stand-in, tests/support/rcl-server.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { type RclTestServer, startRclTestServer } from '../support/rcl-server.ts';

let t: RclTestServer;
before(async () => {
  t = await startRclTestServer();
});
after(() => t.close());

const post = (route: string, body: unknown) =>
  fetch(`${t.url}${route}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
const positions = async () =>
  ((await (await fetch(`${t.url}/robot/joint_states`)).json()) as { position: number[] }).position;

describe('jogging on ros2 (not yet)', () => {
  it('POST /robot/jog and POST /robot/jog/step answer 503 saying so; the WebSocket is refused with 503', async () => {
    const before = await positions();
    for (const [route, body] of [
      ['/robot/jog', { joints: [0, 0, 0, 0, 0, 0, 1] }],
      ['/robot/jog/step', { joint: 7, delta: 0.1 }],
    ] as const) {
      const res = await post(route, body);
      const text = await res.text();
      assert.equal(res.status, 503, text);
      assert.match(text, /jogging is not available on this backend yet/);
    }
    const ws = new WebSocket(`${t.url.replace('http', 'ws')}/robot/jog`);
    const status = await new Promise<number>((resolve) =>
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0)),
    );
    assert.equal(status, 503);
    assert.deepEqual(await positions(), before, 'nothing moved');
  });
});
