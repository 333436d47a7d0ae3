/**
 * Every upload the listener admits reaches the trajectory checker (issue 26 item 5): web.limits.max_uploads CSV
 * uploads completed at the same moment all wait for the checker, none is refused with 503 after its body was read;
 * the checker takes as many as the setting says (here 12, beyond the 8 JSON bodies it keeps waiting).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sleep } from '../support/live.ts';
import { connect, portOf, type RawConnection } from '../support/raw-http.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const UPLOADS = 12;

describe('uploads admitted by web.limits.max_uploads', () => {
  let server: TestServer;
  let port: number;
  before(async () => {
    server = await startTestServer({ web: { limits: { max_uploads: UPLOADS } } });
    port = portOf(server.url);
  });
  after(() => server.close());

  it(`${UPLOADS} CSV uploads completed at once are all checked: none is refused by the checker`, async () => {
    // 20,000 points each (about 0.7 MB): checking one takes long enough that all of them wait together.
    const rows = Array.from({ length: 20_000 }, (_, i) => `${(i + 1) * 0.01},0,0,0,-1.57,0,1.57,0`).join('\n');
    const csv = `t,joint1,joint2,joint3,joint4,joint5,joint6,joint7\n${rows}\n`;
    const part = `--zz\r\nContent-Disposition: form-data; name="file"; filename="u.csv"\r\n\r\n${csv}\r\n--zz--\r\n`;
    const head =
      `POST /trajectory/send_csv?validate_limits=false HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n` +
      `Content-Type: multipart/form-data; boundary=zz\r\nContent-Length: ${part.length}\r\n\r\n`;
    const connections: RawConnection[] = [];
    try {
      for (let k = 0; k < UPLOADS; k++) {
        const c = await connect(port);
        c.write(head + part.slice(0, -10));
        connections.push(c);
      }
      await sleep(500);
      // The last bytes of every body at once: the uploads complete in the same few turns and all go to the checker.
      for (const c of connections) c.write(part.slice(-10));
      const answers = await Promise.all(connections.map((c) => c.response(60_000)));
      const statuses = answers.map((a) => a.status);
      for (const a of answers) assert.ok(a.status === 200 || a.status === 409, `${a.status}: ${a.body.slice(0, 200)}`);
      assert.ok(statuses.includes(200), statuses.join(', '));
    } finally {
      for (const c of connections) c.destroy();
      await fetch(`${server.url}/stop`, { method: 'POST' }).then((r) => r.arrayBuffer());
    }
  });
});
