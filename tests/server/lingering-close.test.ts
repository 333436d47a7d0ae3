/**
 * The lingering close after a cap's 503 (issue 26's leftover), over a real socket: a client that writes a 10 MB upload
 * beyond web.limits.max_uploads without waiting for the answer reads the 503 with its Retry-After and detail, and the
 * connection ends with a FIN, not a reset; a client that keeps sending is cut at the bounds (web.limits.lingering_time_s,
 * lingering_timeout_s, and the bytes bound); a request pipelined after a refused body is never served; /stop is
 * answered at once while refused clients linger; every connection is closed afterwards.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { LINGER_MAX_BYTES } from '../../lib/server/own-answers.ts';
import { sleep } from '../support/live.ts';
import { connect, parseResponse, portOf, type RawConnection, type RawResponse } from '../support/raw-http.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const UPLOAD_BYTES = 10 * 1024 * 1024;
const CHUNK = Buffer.alloc(64 * 1024, '0,0,0,0,-1.57,0,1.57,0\n');

/** The head of a multipart upload to /trajectory/send_csv announcing `length` bytes of body. */
const uploadHead = (port: number, length: number) =>
  `POST /trajectory/send_csv HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n` +
  `Content-Type: multipart/form-data; boundary=zz\r\nContent-Length: ${length}\r\n\r\n`;

/** What a client that writes without waiting for the answer saw. */
interface Sent {
  /** The response read from the connection, if a whole one came. */
  readonly response: RawResponse | undefined;
  /** The socket's error (ECONNRESET, EPIPE: a reset), if any. */
  readonly error: string | undefined;
  /** True when the server closed its side with a FIN (the client read the end of the stream). */
  readonly ended: boolean;
  /** Body bytes the client wrote before the connection closed. */
  readonly written: number;
  /** From the first byte written to the connection's close (ms). */
  readonly ms: number;
}

/**
 * Connects and writes `head`, then body chunks as fast as the socket takes them (even after the server's FIN) (`bodyBytes` in all, or without end
 * when Infinity; `paceMs` between chunks when given), never waiting for the answer, then ends its side unless `end` is
 * false (`chunked`: the body in chunked transfer coding); resolves when the connection closes.
 */
function sendWithoutWaiting(
  port: number,
  head: string,
  bodyBytes: number,
  { paceMs = 0, end = true, chunked = false }: { paceMs?: number; end?: boolean; chunked?: boolean } = {},
): Promise<Sent> {
  return new Promise((resolve) => {
    // allowHalfOpen: the server's FIN after its answer does not stop the client writing (it has not looked).
    const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    const t0 = performance.now();
    let text = '';
    let error: string | undefined;
    let ended = false;
    let written = 0;
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      text += chunk;
    });
    let pumping = true;
    socket.on('end', () => {
      ended = true;
      // A client with nothing more to send closes when the server does.
      if (!pumping && end) socket.end();
    });
    socket.on('error', (e: NodeJS.ErrnoException) => {
      error ??= e.code ?? e.message;
    });
    socket.on('close', () =>
      resolve({ response: parseResponse(text), error, ended, written, ms: performance.now() - t0 }),
    );
    const pump = async () => {
      socket.write(head);
      while (written < bodyBytes && !socket.destroyed && socket.writable) {
        const chunk = CHUNK.subarray(0, Math.min(CHUNK.byteLength, bodyBytes - written));
        written += chunk.byteLength;
        const framed = chunked
          ? Buffer.concat([Buffer.from(`${chunk.byteLength.toString(16)}\r\n`), chunk, Buffer.from('\r\n')])
          : chunk;
        if (!socket.write(framed))
          await new Promise<void>((done) => {
            const go = () => {
              socket.off('drain', go);
              socket.off('close', go);
              done();
            };
            socket.on('drain', go);
            socket.on('close', go);
          });
        if (paceMs > 0) await sleep(paceMs);
      }
      // The whole body is sent: the client ends its side and waits for the server to close.
      pumping = false;
      if (end && !socket.destroyed && socket.writable) socket.end();
    };
    socket.once('connect', () => void pump());
  });
}

/** Holds the one upload place (max_uploads: 1): an upload whose body is still to come. */
async function holdUploadPlace(port: number): Promise<RawConnection> {
  const held = await connect(port);
  held.write(`${uploadHead(port, 1000)}--zz\r\n`);
  await sleep(200);
  return held;
}

/** Open connections of the server, once down to `atMost` or after `settleMs` (a lingering one closes at its bounds). */
async function openConnections(server: TestServer, settleMs = 3000, atMost = 0): Promise<number> {
  const count = () => new Promise<number>((done) => server.server.getConnections((_e, n) => done(n)));
  const until = performance.now() + settleMs;
  let n = await count();
  while (n > atMost && performance.now() < until) {
    await sleep(50);
    n = await count();
  }
  return n;
}

describe('the lingering close after a refusal at a cap', () => {
  let server: TestServer;
  let port: number;
  before(async () => {
    server = await startTestServer({
      web: {
        limits: {
          max_uploads: 1,
          retry_after_s: 3,
          lingering_time_s: 3,
          lingering_timeout_s: 1,
          // The held upload sends nothing more: it is not cut meanwhile.
          body_grace_s: 60,
        },
      },
    });
    port = portOf(server.url);
  });
  after(() => server.close());

  it('a 10 MB upload beyond max_uploads, written without waiting, reads the 503 with Retry-After and detail, then a FIN (no reset)', async () => {
    const held = await holdUploadPlace(port);
    try {
      for (let k = 0; k < 3; k++) {
        const sent = await sendWithoutWaiting(port, uploadHead(port, UPLOAD_BYTES), UPLOAD_BYTES);
        assert.equal(sent.error, undefined, `the connection was reset (${sent.error}) after ${sent.written} bytes`);
        assert.ok(sent.response, 'a whole answer');
        assert.equal(sent.response.status, 503, sent.response.body);
        assert.equal(sent.response.headers['retry-after'], '3');
        assert.equal(sent.response.headers.connection, 'close');
        assert.match(JSON.parse(sent.response.body).detail, /web\.limits\.max_uploads/);
        assert.ok(sent.ended, 'the server closed its side with a FIN');
        assert.equal(sent.written, UPLOAD_BYTES, 'the whole body was taken (and dropped)');
      }
    } finally {
      held.destroy();
    }
    assert.equal(await openConnections(server), 0, 'every connection closed');
  });

  it('a refused client that keeps sending fast is cut at the bytes bound; one that trickles, at lingering_time_s', async () => {
    const held = await holdUploadPlace(port);
    try {
      const announced = 1024 * 1024 * 1024;
      const [fast, trickle] = await Promise.all([
        sendWithoutWaiting(port, uploadHead(port, announced), Number.POSITIVE_INFINITY),
        // 64 KiB every 100 ms: never idle for lingering_timeout_s, 2 MB in 3 s (far below the bytes bound).
        sendWithoutWaiting(port, uploadHead(port, announced), Number.POSITIVE_INFINITY, { paceMs: 100 }),
      ]);
      for (const sent of [fast, trickle]) {
        assert.equal(sent.response?.status, 503, JSON.stringify(sent));
        assert.equal(sent.response?.headers['retry-after'], '3');
      }
      assert.ok(fast.written > LINGER_MAX_BYTES, `the fast one sent ${fast.written} bytes before the cut`);
      assert.ok(fast.written < LINGER_MAX_BYTES + 16 * 1024 * 1024, `cut at the bound (${fast.written} bytes)`);
      assert.ok(trickle.ms > 2500 && trickle.ms < 6000, `the trickle cut after lingering_time_s (${trickle.ms} ms)`);
    } finally {
      held.destroy();
    }
    assert.equal(await openConnections(server), 0, 'every connection closed');
  });

  it('closes the connection of a refused client that sends nothing more nor closes after lingering_timeout_s', async () => {
    const held = await holdUploadPlace(port);
    try {
      // It announces a body, sends none, and closes nothing on the server's FIN: the server's close is seen in its
      // connection count.
      const silent = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true });
      let text = '';
      let ended = false;
      silent.setEncoding('latin1');
      silent.on('data', (chunk: string) => {
        text += chunk;
      });
      silent.on('end', () => {
        ended = true;
      });
      silent.on('error', () => {});
      await new Promise((done) => silent.once('connect', done));
      const t0 = performance.now();
      silent.write(uploadHead(port, UPLOAD_BYTES));
      await sleep(200);
      try {
        assert.equal(await openConnections(server, 0), 2, 'the held upload and the silent client');
        assert.equal(await openConnections(server, 3000, 1), 1, 'the silent client closed');
        const ms = performance.now() - t0;
        assert.ok(ms > 800 && ms < 2500, `closed after lingering_timeout_s (${ms.toFixed(0)} ms)`);
        assert.equal(parseResponse(text)?.status, 503, text);
        assert.ok(ended, 'closed with a FIN');
      } finally {
        silent.destroy();
      }
    } finally {
      held.destroy();
    }
  });

  it('never serves a request pipelined after a refused body', async () => {
    const held = await holdUploadPlace(port);
    try {
      const c = await connect(port);
      const from = server.logs.length;
      c.write(`${uploadHead(port, 10)}0123456789GET /robot/joint_states HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
      const refused = await c.response();
      assert.equal(refused.status, 503, refused.body);
      await c.closed;
      assert.ok(!c.received().includes('HTTP/1.1 200'), c.received());
      await sleep(100);
      assert.deepEqual(
        server.logs.slice(from).map((l) => [l.path, l.status]),
        [['/trajectory/send_csv', 503]],
      );
    } finally {
      held.destroy();
    }
  });

  it('answers /stop at once while refused clients linger, and frees everything after', async () => {
    const held = await holdUploadPlace(port);
    const lingering: Promise<Sent>[] = [];
    const stopsMs: number[] = [];
    try {
      for (let k = 0; k < 6; k++)
        lingering.push(
          sendWithoutWaiting(port, uploadHead(port, 1024 * 1024 * 1024), Number.POSITIVE_INFINITY, { paceMs: 20 }),
        );
      await sleep(300);
      for (let k = 0; k < 20; k++) {
        const t0 = performance.now();
        const stop = await fetch(`${server.url}/stop`, { method: 'POST', headers: { connection: 'close' } });
        assert.equal(stop.status, 200, await stop.text());
        stopsMs.push(performance.now() - t0);
        await sleep(50);
      }
      const ended = await Promise.all(lingering);
      for (const sent of ended) assert.equal(sent.response?.status, 503, JSON.stringify(sent));
    } finally {
      held.destroy();
    }
    stopsMs.sort((a, b) => a - b);
    assert.ok((stopsMs.at(-1) ?? 0) < 500, `every stop answered within 500 ms (${stopsMs.map(Math.round).join(' ')})`);
    assert.equal(await openConnections(server), 0, 'every connection closed');
    // The upload place is free again: an upload is admitted (its CSV checked: not a 503).
    const csv = 't,joint1,joint2,joint3,joint4,joint5,joint6,joint7\n0,0,0,0,-1.57,0,1.57,0\n';
    const form = new FormData();
    form.append('file', new Blob([csv]), 'p.csv');
    const res = await fetch(`${server.url}/trajectory/send_csv`, { method: 'POST', body: form });
    assert.notEqual(res.status, 503, await res.text());
  });
});

describe('the rest of a body after an answer given before it was read, on a connection kept open', () => {
  let server: TestServer;
  let port: number;
  before(async () => {
    server = await startTestServer({
      web: { limits: { lingering_time_s: 3, lingering_timeout_s: 1, body_grace_s: 60 } },
    });
    port = portOf(server.url);
  });
  after(() => server.close());

  const jsonHead = (length: number) =>
    `POST /trajectory/send HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${length}\r\n\r\n`;

  it('a JSON body over 1 MiB gets 413, its rest is dropped, and the connection serves the next request', async () => {
    const c = await connect(port);
    try {
      const length = 5 * 1024 * 1024;
      c.write(jsonHead(length));
      c.write(Buffer.alloc(length, ' '));
      c.write(`GET /robot/joint_states HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
      const tooLarge = await c.response();
      assert.equal(tooLarge.status, 413, tooLarge.body);
      const next = await c.response();
      assert.equal(next.status, 200, next.body);
    } finally {
      c.destroy();
    }
  });

  it('a client that keeps sending after a 413 is cut at the bytes bound, declared or found while reading', {
    timeout: 30_000,
  }, async () => {
    const endless = 1024 * 1024 * 1024 * 1024;
    const [declared, found, upload] = await Promise.all([
      sendWithoutWaiting(port, jsonHead(endless), Number.POSITIVE_INFINITY),
      sendWithoutWaiting(
        port,
        `POST /trajectory/send HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
        Number.POSITIVE_INFINITY,
        { chunked: true },
      ),
      sendWithoutWaiting(port, uploadHead(port, endless), Number.POSITIVE_INFINITY),
    ]);
    for (const sent of [declared, found, upload]) {
      assert.equal(sent.response?.status, 413, JSON.stringify(sent));
      assert.ok(sent.written < LINGER_MAX_BYTES + 20 * 1024 * 1024, `cut at the bound (${sent.written} bytes)`);
    }
    assert.equal(await openConnections(server), 0, 'every connection closed');
  });
});
