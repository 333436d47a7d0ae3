/**
 * Uploads never stall the loop (issue 37): while a 10 MB CSV is read and checked, a read sent after the whole upload
 * is answered first. The file is wrong in its last row only, so the check reads all of it before it refuses it (422
 * naming that row); nothing moves.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../support/server.ts';
import { connect, portOf } from '../support/raw-http.ts';

const HEADER = 't,joint1,joint2,joint3,joint4,joint5,joint6,joint7';

/**
 * A CSV of about `bytes` (fewer than 100,000 rows) whose rows are valid but the last (joint 1 at 99 rad); returns it and
 * that row's number.
 */
function wrongAtTheEnd(bytes: number): { csv: string; lastRow: number } {
  const rows = [HEADER];
  let size = HEADER.length;
  for (let i = 1; size < bytes; i++) {
    const row = `${(i * 0.01).toFixed(6)},${[0, 0, 0, -1.57, 0, 1.57, 0].map((x) => x.toFixed(12)).join(',')}`;
    rows.push(row);
    size += row.length + 1;
  }
  rows.push(`${(rows.length * 0.01).toFixed(6)},99,0,0,-1.57,0,1.57,0`);
  return { csv: `${rows.join('\n')}\n`, lastRow: rows.length };
}

describe('a read during a 10 MB upload', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());

  it('is answered before the upload, which is refused at its last row (422) once checked', async () => {
    const port = portOf(server.url);
    const { csv, lastRow } = wrongAtTheEnd(10 * 1024 * 1024 - 4096);
    const part = `--zz\r\nContent-Disposition: form-data; name="file"; filename="big.csv"\r\n\r\n${csv}\r\n--zz--\r\n`;
    const before = (await (await fetch(`${server.url}/robot/joint_states`)).json()) as { position: number[] };
    const order: string[] = [];
    const c = await connect(port);
    try {
      await new Promise<void>((resolve) =>
        c.socket.write(
          `POST /trajectory/send_csv HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n` +
            `Content-Type: multipart/form-data; boundary=zz\r\nContent-Length: ${Buffer.byteLength(part)}\r\n\r\n${part}`,
          () => resolve(),
        ),
      );
      // The whole upload is written: the read goes after it.
      const upload = c.response(120_000).then((res) => {
        order.push('upload');
        return res;
      });
      const read = fetch(`${server.url}/robot/joint_states`).then(async (res) => {
        await res.arrayBuffer();
        order.push('read');
        return res.status;
      });
      assert.equal(await read, 200);
      const answer = await upload;
      assert.deepEqual(order, ['read', 'upload']);
      assert.equal(answer.status, 422, answer.body.slice(0, 300));
      const issue = (JSON.parse(answer.body) as { detail: { loc: (string | number)[] }[] }).detail[0];
      assert.deepEqual(issue?.loc.slice(0, 3), ['body', 'file', lastRow]);
    } finally {
      c.destroy();
    }
    const now = (await (await fetch(`${server.url}/robot/joint_states`)).json()) as { position: number[] };
    assert.deepEqual(now.position, before.position);
  });
});
