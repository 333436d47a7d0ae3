/**
 * Uploads never stall the loop (issue 37, item 3): an upload a stop came after is refused with 409 as soon as its body
 * is in, before the trajectory check and the messages of its points are made for nothing. Before, 16 uploads of
 * 10 MiB were each checked (one after another on the checker's thread) and their 100,000 points each built into
 * messages, and only then refused: answers over tens of seconds, and young-generation collections copying those
 * messages held the event loop.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sleep } from '../support/live.ts';
import { connect, portOf } from '../support/raw-http.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/** A CSV of `rows` points, every position of joint 1 out of range (99 rad): the check would refuse it (422). */
function badCsv(rows: number): string {
  const lines = ['t,joint1,joint2,joint3,joint4,joint5,joint6,joint7'];
  for (let i = 0; i < rows; i++) lines.push(`${(i * 0.01).toFixed(2)},99,0,0,-1.57,0,1.57,0`);
  return `${lines.join('\n')}\n`;
}

describe('an upload a stop came after', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());

  /** Sends the upload's head and half its body, a stop, then the rest; resolves with the upload's answer. */
  async function uploadAcrossAStop(csv: string): Promise<{ status: number; body: string }> {
    const port = portOf(server.url);
    const part =
      `--zz\r\nContent-Disposition: form-data; name="file"; filename="bad.csv"\r\nContent-Type: text/csv\r\n\r\n` +
      `${csv}\r\n--zz--\r\n`;
    const c = await connect(port);
    try {
      const half = Math.floor(part.length / 2);
      c.write(
        `POST /trajectory/send_csv HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n` +
          `Content-Type: multipart/form-data; boundary=zz\r\nContent-Length: ${Buffer.byteLength(part)}\r\n\r\n` +
          part.slice(0, half),
      );
      await sleep(200);
      const stop = await fetch(`${server.url}/stop`, { method: 'POST' });
      assert.equal(stop.status, 200);
      await stop.arrayBuffer();
      c.write(part.slice(half));
      return await c.response(30_000);
    } finally {
      c.destroy();
    }
  }

  it('is refused with 409 at once, before its file is checked', async () => {
    const res = await uploadAcrossAStop(badCsv(2000));
    assert.equal(res.status, 409, res.body);
    assert.match(
      JSON.parse(res.body).detail,
      /a stop arrived while this request was being prepared; nothing was moved/,
    );
  });

  it('an upload sent after the stop is checked as before (422 for the same file)', async () => {
    const form = new FormData();
    form.append('file', new Blob([badCsv(2000)]), 'bad.csv');
    const res = await fetch(`${server.url}/trajectory/send_csv`, { method: 'POST', body: form });
    assert.equal(res.status, 422, await res.text());
  });
});
