/**
 * Foxglove messages of 16 KiB or more (a frame may hold 1 MiB) parsed a slice per turn of the event loop, through the
 * live server: a stop service call sent after a large JSON service request, or after a large text message, is
 * answered before it (order, not time: parsed at once, the large one was answered before the stop was read); a
 * connection's text messages are still handled in the order they came, and a large JSON request that is not JSON is
 * refused with JSON.parse's own message, as before.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../support/server.ts';
import { type Connected, connect } from './support.ts';
import { distinctObjects, nativeMessage } from '../support/json-texts.ts';

const TOKEN = 'foxglove-large-token-5d6e7f';
const WORK = [0, 0, 0, -1.57, 0, 1.57, 0];
const encode = (text: string) => new TextEncoder().encode(text);

describe('large Foxglove messages', () => {
  let server: TestServer;
  let c: Connected;
  /** What the connection was answered, in order: `call N` for a service call's answer, the id of parameterValues. */
  const order: string[] = [];
  const failures = new Map<number, string>();

  before(async () => {
    server = await startTestServer({
      web: { token: TOKEN },
      foxglove: { enabled: true, port: 0, address: '127.0.0.1' },
    });
    c = await connect(`${server.foxglove?.url}/?token=${TOKEN}`);
    c.client.on('serviceCallResponse', (r) => order.push(`call ${r.callId}`));
    c.client.on('serviceCallFailure', (f) => {
      order.push(`call ${f.callId}`);
      failures.set(f.callId, f.message);
    });
    c.ws.on('message', (data, isBinary) => {
      if (isBinary) return;
      const message = JSON.parse(data.toString()) as { op?: string; id?: string };
      if (message.op === 'parameterValues') order.push(String(message.id));
    });
  });
  after(async () => {
    c?.ws.terminate();
    await server?.close();
  });

  const answered = async (count: number) => {
    for (let i = 0; order.length < count; i++) {
      assert.ok(i < 4000, `${order.length} of ${count} answers: ${order.join(', ')}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  };
  const stopCall = (callId: number) =>
    c.client.sendServiceCallRequest({
      serviceId: c.service('/armgate/stop')?.id ?? 0,
      callId,
      encoding: 'json',
      data: encode('{}'),
    });

  it("answers a stop sent after a 1 MiB JSON service request first, which is refused with JSON.parse's message", async () => {
    order.length = 0;
    // Not JSON at its very end: the whole of it is read before it is refused.
    const text = `{"joints":${JSON.stringify(WORK)},"dry_run":true,"pad":${distinctObjects(1024 * 1024 - 200)},}`;
    c.client.sendServiceCallRequest({
      serviceId: c.service('/armgate/move_to_joints')?.id ?? 0,
      callId: 1,
      encoding: 'json',
      data: encode(text),
    });
    stopCall(2);
    await answered(2);
    assert.deepEqual(order, ['call 2', 'call 1'], 'the stop is answered first');
    assert.equal(
      failures.get(1),
      `the request is not a armgate_msgs/msg/MoveJointsRequest in json: ${nativeMessage(text)}`,
    );
  });

  it('answers a stop sent after a 1 MiB text message first, and the text messages in the order they came', async () => {
    order.length = 0;
    const big = `{"op":"getParameters","parameterNames":[],"id":"big","pad":${distinctObjects(1024 * 1024 - 200)}}`;
    c.ws.send(big);
    stopCall(3);
    c.ws.send('{"op":"getParameters","parameterNames":[],"id":"small"}');
    await answered(3);
    assert.deepEqual(order, ['call 3', 'big', 'small']);
  });
});
