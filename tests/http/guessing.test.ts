import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setImmediate as setImmediatePromise } from 'node:timers/promises';
import { addressKey, GUESS_ADDRESSES_MAX, GUESS_POLICY, GuessLimiter } from '../../lib/auth/guesses.ts';
import { refusalsPath } from '../../lib/audit/trail.ts';
import { authorizationAuth } from '../../lib/admission/front-door.ts';
import { createTestApp, startTestServer, type TestApp, type TestServer } from '../support/server.ts';
import { initializeRequest } from '../support/mcp.ts';
import { connect, portOf } from '../support/raw-http.ts';
import { createSteppedApp } from '../support/stepped.ts';
import { connect as foxgloveConnect } from '../foxglove/support.ts';

const GUESS_BURST = GUESS_POLICY.burst;
const GUESS_REFILL_S = GUESS_POLICY.refillS;
/** The tests' refill: one more guess an hour, so none comes back while a test runs. */
const REFILL_S = 3600;
const ADMIN = 'guess-admin-token-41c7e2';
const VIEWER = 'guess-viewer-token-90ab13';
const ORIGIN = 'http://127.0.0.1:8007';
const INIT_MCP = JSON.stringify(initializeRequest('guess-test', { id: 1 }));

/** The detail of a 429 past the guess limit (a wrong and a right token both get one), its seconds blanked out. */
async function limitDetail(res: Response): Promise<string> {
  assert.equal(res.status, 429, 'the answer is the limit, as for a wrong token');
  return ((await res.json()) as { detail: string }).detail.replace(/\d+ s/, 'N s');
}

/** A right token's answer past the limit says what a wrong token's does: nothing tells the token was right. */
function sameAsWrong(right: string, wrong: string): void {
  assert.equal(right, wrong, 'the same words: nothing tells the token was right');
  assert.match(right, /a stop with a valid token is carried out all the same/);
}

describe('token guessing is slowed per client address, on both faces', () => {
  let app: TestApp;
  let dir: string;
  let file: string;
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'armgate-guess-'));
    file = path.join(dir, 'audit.jsonl');
    // No refill while the test runs (a loaded machine may take seconds over it): the counts are exact.
    app = await createTestApp({
      web: {
        token: ADMIN,
        tokens: [{ name: 'viewer', token: VIEWER, role: 'read' }],
        limits: { token_guess_refill_s: REFILL_S },
      },
      audit: { path: file },
    });
  });
  after(async () => {
    await app.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** A request from `address` with `token` (REST: a path; MCP: an initialize POST to /mcp/mcp). */
  const from = (address: string, token: string, what: 'joints' | 'stop' | 'mcp') => {
    const headers: Record<string, string> = { host: '127.0.0.1:8007', authorization: `Bearer ${token}` };
    const init: RequestInit =
      what === 'joints'
        ? { headers }
        : what === 'stop'
          ? { method: 'POST', headers }
          : {
              method: 'POST',
              headers: {
                ...headers,
                'content-type': 'application/json',
                accept: 'application/json, text/event-stream',
              },
              body: INIT_MCP,
            };
    const route = what === 'joints' ? '/robot/joint_states' : what === 'stop' ? '/stop' : '/mcp/mcp';
    return app.fetch(new Request(`${ORIGIN}${route}`, init), address);
  };

  for (const face of ['joints', 'mcp'] as const) {
    it(`${face === 'mcp' ? 'MCP' : 'REST'}: wrong tokens beyond the burst get 429 with Retry-After; a right token from the same address is served at once, /stop too`, async () => {
      const address = face === 'mcp' ? '203.0.113.20' : '203.0.113.10';
      const first = await from(address, ADMIN, face);
      assert.equal(first.status, 200, 'the client is served');
      await first.body?.cancel();
      for (let i = 0; i < GUESS_BURST; i++) {
        const res = await from(address, `guess-${i}`, face);
        assert.equal(res.status, 401, `wrong token ${i + 1} of the burst: 401`);
        await res.body?.cancel();
      }
      for (let i = 0; i < 20; i++) {
        const res = await from(address, `guess-more-${i}`, face);
        assert.equal(res.status, 429, 'beyond the burst: 429');
        const retry = Number(res.headers.get('retry-after'));
        assert.ok(retry >= REFILL_S - 60 && retry <= REFILL_S, `Retry-After ${res.headers.get('retry-after')}`);
        assert.match(((await res.json()) as { detail: string }).detail, /too many wrong tokens from this address/);
      }
      const again = await from(address, ADMIN, face);
      assert.equal(again.status, 200, 'the right token from the same address is served at once');
      await again.body?.cancel();
      const stop = await from(address, ADMIN, 'stop');
      assert.equal(stop.status, 200, '/stop with the right token is served at once');
      assert.equal(((await stop.json()) as { success: boolean }).success, true);
      const other = await from('203.0.113.99', `guess-elsewhere`, face);
      assert.equal(other.status, 401, 'another address has its own burst');
      await other.body?.cancel();
      // The rule's price (lib/auth/guesses.ts): a token never served to a guessing address waits its turn.
      const viewer = await from(address, VIEWER, face);
      assert.equal(viewer.status, 429, 'a token not yet served to a guessing address is not compared');
      await viewer.body?.cancel();
    });
  }

  it('/stop past the limit: a right token never served there stops the arm, answered as the same 429 as a wrong one', async () => {
    const address = '203.0.113.30';
    for (let i = 0; i < GUESS_BURST; i++) await (await from(address, `stop-guess-${i}`, 'joints')).body?.cancel();
    /** A slow move from another address (a client whose token is served there): its answer says how it ended. */
    const move = () =>
      app.fetch(
        new Request(`${ORIGIN}/robot/move/joints`, {
          method: 'POST',
          headers: { host: '127.0.0.1:8007', authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
          body: JSON.stringify({ joints: [1.2, 0.5, 0.5, -0.8, 0.5, 0.8, 1.0], speed: 0.05 }),
        }),
        '203.0.113.31',
      );
    const moving = async () => {
      for (let i = 0; i < 500 && app.services.arbiter.activity() === undefined; i++) await setImmediatePromise();
      assert.ok(app.services.arbiter.activity() !== undefined, 'the move holds the arm');
    };
    const first = move();
    await moving();
    const wrong = await limitDetail(await from(address, 'stop-guess-wrong', 'stop'));
    for (let i = 0; i < 5; i++) await setImmediatePromise();
    assert.ok(app.services.arbiter.activity() !== undefined, "a wrong token's stop stops nothing");
    sameAsWrong(await limitDetail(await from(address, VIEWER, 'stop')), wrong);
    const stopped = (await (await first).json()) as { success: boolean; message: string };
    assert.equal(stopped.success, false, 'the move was cut short by the stop');
    assert.match(stopped.message, /stop/i);
    assert.equal(app.services.arbiter.activity(), undefined, 'the arm is free');
    const again = await from(address, VIEWER, 'joints');
    assert.equal(again.status, 429, 'past the limit the read token still waits: only a stop is carried out');
    await again.body?.cancel();
  });

  it('MCP past the limit: a right token never served there calls the stop tool and the arm stops, answered as the same 429 as a wrong one', async () => {
    const address = '203.0.113.40';
    for (let i = 0; i < GUESS_BURST; i++) await (await from(address, `mcp-stop-guess-${i}`, 'joints')).body?.cancel();
    /** A tools/call of `stop` with `token`, in a session opened elsewhere (its id is whatever the client holds). */
    const stopTool = (token: string) =>
      app.fetch(
        new Request(`${ORIGIN}/mcp/mcp`, {
          method: 'POST',
          headers: {
            host: '127.0.0.1:8007',
            authorization: `Bearer ${token}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-session-id': 'a-session-opened-before-the-guessing',
          },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 7,
            method: 'tools/call',
            params: { name: 'stop', arguments: {} },
          }),
        }),
        address,
      );
    const move = app.fetch(
      new Request(`${ORIGIN}/robot/move/joints`, {
        method: 'POST',
        headers: { host: '127.0.0.1:8007', authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ joints: [-1.2, 0.5, 0.5, -0.8, 0.5, 0.8, 1.0], speed: 0.05 }),
      }),
      '203.0.113.41',
    );
    for (let i = 0; i < 500 && app.services.arbiter.activity() === undefined; i++) await setImmediatePromise();
    assert.ok(app.services.arbiter.activity() !== undefined, 'the move holds the arm');
    const wrong = await limitDetail(await stopTool('mcp-stop-guess-wrong'));
    for (let i = 0; i < 20; i++) await setImmediatePromise();
    assert.ok(app.services.arbiter.activity() !== undefined, "a wrong token's stop tool stops nothing");
    sameAsWrong(await limitDetail(await stopTool(VIEWER)), wrong);
    const stopped = (await (await move).json()) as { success: boolean; message: string };
    assert.equal(stopped.success, false, 'the move was cut short by the stop tool');
    assert.match(stopped.message, /stop/i);
    assert.equal(app.services.arbiter.activity(), undefined, 'the arm is free');
    const init = await from(address, VIEWER, 'mcp');
    assert.equal(init.status, 429, 'past the limit the read token still waits: only a stop is carried out');
    await init.body?.cancel();
  });

  it('the audit trail summarises the guessing: one line per address and reason with the count', async () => {
    await app.services.audit?.flush();
    const lines = (await readFile(refusalsPath(file), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { address: string; count: number; interface: string; outcome: { status: number } });
    const count = (address: string, status: number) =>
      lines.filter((l) => l.address === address && l.outcome.status === status).reduce((n, l) => n + l.count, 0);
    assert.equal(count('203.0.113.10', 401), GUESS_BURST);
    assert.equal(count('203.0.113.10', 429), 21, 'the 20 guesses and the viewer token');
    assert.equal(count('203.0.113.20', 429), 21);
    assert.ok(lines.filter((l) => l.address === '203.0.113.20').every((l) => l.interface === 'mcp'));
    assert.ok(!JSON.stringify(lines).includes('guess-'), 'no token in the trail');
  });
});

describe("the guesses' refill runs on the app's clock", () => {
  it('one more wrong token is compared each token_guess_refill_s of the clock, not before; Retry-After counts it down', async () => {
    const { app, clock } = await createSteppedApp({ web: { token: ADMIN, limits: { token_guess_refill_s: 2 } } });
    try {
      const address = '203.0.113.40';
      const guess = async (i: number) => {
        const res = await app.fetch(
          new Request(`${ORIGIN}/robot/joint_states`, {
            headers: { host: '127.0.0.1:8007', authorization: `Bearer guess-clock-${i}` },
          }),
          address,
        );
        await res.body?.cancel();
        return { status: res.status, retry: res.headers.get('retry-after') };
      };
      for (let i = 0; i < GUESS_BURST; i++) assert.equal((await guess(i)).status, 401, `wrong token ${i + 1}: 401`);
      assert.deepEqual(await guess(100), { status: 429, retry: '2' }, 'beyond the burst: 429, one more in 2 s');
      await clock.advance(1000);
      assert.deepEqual(await guess(101), { status: 429, retry: '1' }, 'after 1 s of the clock: 1 s more');
      await clock.advance(999);
      assert.equal((await guess(102)).status, 429, 'not before 2 s of the clock');
      await clock.advance(1);
      assert.equal((await guess(103)).status, 401, 'at 2 s of the clock one more is compared');
      assert.equal((await guess(104)).status, 429, 'and only one');
    } finally {
      await app.close();
    }
  });
});

describe('beyond the table of addresses: no fresh burst for an address the table has no room for', () => {
  let app: TestApp;
  before(async () => {
    app = await createTestApp({ web: { token: ADMIN, limits: { token_guess_refill_s: REFILL_S } } });
  });
  after(() => app.close());

  const get = (address: string, token: string, route = '/robot/joint_states', method = 'GET') =>
    app.fetch(
      new Request(`${ORIGIN}${route}`, {
        method,
        headers: { host: '127.0.0.1:8007', authorization: `Bearer ${token}` },
      }),
      address,
    );
  /** An address in its own IPv6 /64 (the i-th of a /48: what one site is given). */
  const v6 = (i: number, host = 1) => `2001:db8:77:${i.toString(16)}::${host.toString(16)}`;

  it('IPv6 addresses of one /64 share a bucket, and an IPv4-mapped address is its IPv4', async () => {
    const statuses: number[] = [];
    for (let i = 0; i <= GUESS_BURST; i++)
      statuses.push((await get(`2001:db8:99:1::${(i + 1).toString(16)}`, `w-${i}`)).status);
    assert.deepEqual(statuses, [...new Array(GUESS_BURST).fill(401), 429], 'eleven hosts of one /64: one burst');
    for (let i = 0; i < GUESS_BURST; i++) await (await get('192.0.2.77', `m-${i}`)).body?.cancel();
    assert.equal((await get('::ffff:192.0.2.77', 'm-beyond')).status, 429, '::ffff:192.0.2.77 is 192.0.2.77');
    assert.equal((await get('::ffff:c000:24d', 'm-beyond-2')).status, 429, 'and so is ::ffff:c000:24d');
  });

  it('more addresses than the table holds share one bucket: the wrong tokens compared stay bounded', async () => {
    const client = '198.51.100.7';
    const served = await get(client, ADMIN);
    assert.equal(served.status, 200, 'a client served before the guessing');
    await served.body?.cancel();
    // Fill the table (with the addresses already in it): one wrong token from each of other /64s.
    const held = app.services.guesses?.size ?? 0;
    for (let i = 0; i < GUESS_ADDRESSES_MAX - held; i++) {
      const res = await get(v6(i), `fill-${i}`);
      assert.equal(res.status, 401, `address ${i}: a wrong token within its burst`);
      await res.body?.cancel();
    }
    // 200 more /64s, 3 wrong tokens each: before, each one forgot the oldest address and had a fresh burst (600 x 401).
    let compared = 0;
    let limited = 0;
    for (let i = GUESS_ADDRESSES_MAX; i < GUESS_ADDRESSES_MAX + 200; i++)
      for (let k = 0; k < 3; k++) {
        const res = await get(v6(i, k + 1), `overflow-${i}-${k}`);
        if (res.status === 401) compared++;
        else if (res.status === 429) {
          limited++;
          assert.match(((await res.json()) as { detail: string }).detail, /too many wrong tokens from this address/);
        } else assert.fail(`status ${res.status}`);
        await res.body?.cancel();
      }
    assert.equal(compared, GUESS_BURST, 'the addresses beyond the table share one burst');
    assert.equal(limited, 600 - GUESS_BURST);
    // The first addresses were not forgotten: each still has its own 9 wrong tokens.
    for (let i = 0; i < 50; i++) {
      const res = await get(v6(i), `again-${i}`);
      assert.equal(res.status, 401, `address ${i} keeps its own bucket`);
      await res.body?.cancel();
    }
    const back = await get(client, ADMIN);
    assert.equal(back.status, 200, 'a client served before the guessing is served at once');
    await back.body?.cancel();
    const stop = await get(client, ADMIN, '/stop', 'POST');
    assert.equal(stop.status, 200, 'its /stop at once');
    await stop.body?.cancel();
    const overflowStop = await get(v6(GUESS_ADDRESSES_MAX + 500), ADMIN, '/stop', 'POST');
    assert.equal(overflowStop.status, 429, 'a new address beyond the table: the same 429 as a wrong token');
    assert.match(
      ((await overflowStop.json()) as { detail: string }).detail,
      /a stop with a valid token is carried out/,
    );
    assert.equal(app.services.guesses?.size, GUESS_ADDRESSES_MAX, 'the table stays bounded');
  });
});

describe('guessing over a socket counts the peer address', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ web: { token: ADMIN, limits: { token_guess_refill_s: REFILL_S } } });
  });
  after(() => server.close());

  /** GET /robot/joint_states with `token` from the local address `from` (any 127.x.y.z is another client). */
  const read = async (from: string, token: string) => {
    const c = await connect(portOf(server.url), from);
    try {
      c.write(`GET /robot/joint_states HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\n\r\n`);
      return await c.response();
    } finally {
      c.destroy();
    }
  };

  it('wrong tokens from 127.0.0.3 beyond the burst get 429; 127.0.0.4 still has its own burst', async () => {
    const statuses: number[] = [];
    for (let i = 0; i <= GUESS_BURST; i++) statuses.push((await read('127.0.0.3', `wrong-${i}`)).status);
    assert.deepEqual(statuses, [...new Array(GUESS_BURST).fill(401), 429]);
    assert.equal((await read('127.0.0.3', ADMIN)).status, 429, 'a token never served to 127.0.0.3 waits its turn');
    assert.equal((await read('127.0.0.4', 'wrong-elsewhere')).status, 401, 'another address: its own burst');
    assert.equal((await read('127.0.0.4', ADMIN)).status, 200);
  });

  it("the jog WebSocket's upgrade counts against the same limiter: 429 with Retry-After, the right token still opens", async () => {
    /** An upgrade to GET /robot/jog with `token` from the local address `from`. */
    const upgrade = async (from: string, token: string) => {
      const c = await connect(portOf(server.url), from);
      try {
        c.write(
          'GET /robot/jog HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n' +
            'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n' +
            `Authorization: Bearer ${token}\r\n\r\n`,
        );
        return await c.response();
      } finally {
        c.destroy();
      }
    };
    assert.equal((await upgrade('127.0.0.5', ADMIN)).status, 101, 'the client is served');
    for (let i = 0; i < GUESS_BURST; i++) assert.equal((await upgrade('127.0.0.5', `wrong-${i}`)).status, 401);
    const refused = await upgrade('127.0.0.5', 'wrong-beyond');
    assert.equal(refused.status, 429);
    const retry = Number(refused.headers['retry-after']);
    assert.ok(retry >= REFILL_S - 60 && retry <= REFILL_S, `Retry-After ${refused.headers['retry-after']}`);
    assert.match((JSON.parse(refused.body) as { detail: string }).detail, /too many wrong tokens from this address/);
    assert.equal((await read('127.0.0.5', 'wrong-over-rest')).status, 429, 'the REST face counts the same guesses');
    assert.equal((await upgrade('127.0.0.5', ADMIN)).status, 101, 'the right token from that address still opens');
  });
});

describe('Foxglove past the guess limit', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({
      web: {
        token: ADMIN,
        tokens: [{ name: 'viewer', token: VIEWER, role: 'read' }],
        limits: { token_guess_refill_s: REFILL_S },
      },
      foxglove: { enabled: true, port: 0, address: '127.0.0.1' },
    });
  });
  after(() => server.close());

  it("a connection past the limit offers the stop services only, whatever its token; a right token's stop stops the arm, answered as a wrong one's", async () => {
    const from = '127.0.0.8';
    const url = server.foxglove?.url ?? '';
    const open = (token: string) => foxgloveConnect(`${url}/?token=${token}`, {}, { localAddress: from });
    for (let i = 0; i < GUESS_BURST; i++)
      await assert.rejects(open(`fox-guess-${i}`), (e: { status?: number }) => e.status === 401);
    const wrong = await open('fox-guess-beyond');
    const right = await open(VIEWER);
    for (const c of [wrong, right]) {
      assert.deepEqual(
        c.services.map((s) => s.name),
        ['/armgate/stop', '/armgate/pause'],
        'the stop services, nothing else',
      );
      assert.equal(c.channels.length, 0, 'no channel');
      assert.match(
        c.statuses[0]?.message ?? '',
        /too many wrong tokens from this address; .*: this connection offers the stop services only/,
      );
    }
    assert.deepEqual(right.info.metadata, wrong.info.metadata, 'nothing tells the token was right');
    // A slow move from another address (a token served there): its answer says how it ended.
    const move = fetch(`${server.url}/robot/move/joints`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ joints: [1.2, -0.5, 0.5, -0.8, 0.5, 0.8, 1.0], speed: 0.05 }),
    });
    for (let i = 0; i < 500 && server.services.arbiter.activity() === undefined; i++)
      await new Promise((r) => setTimeout(r, 10));
    assert.ok(server.services.arbiter.activity() !== undefined, 'the move holds the arm');
    const refused = await wrong.call('/armgate/stop', {});
    assert.ok(!refused.ok);
    await new Promise((r) => setTimeout(r, 100));
    assert.ok(server.services.arbiter.activity() !== undefined, "a wrong token's stop stops nothing");
    const carried = await right.call('/armgate/stop', {});
    assert.ok(!carried.ok, 'answered as a wrong token is');
    const seconds = (text: string) => text.replace(/\d+ s/, 'N s');
    assert.equal(seconds(carried.message), seconds(refused.message), 'the same words');
    assert.match(carried.message, /a stop with a valid token is carried out all the same/);
    const stopped = (await (await move).json()) as { success: boolean; message: string };
    assert.equal(stopped.success, false, 'the move was cut short by the stop');
    assert.match(stopped.message, /stop/i);
    wrong.close();
    right.close();
  });
});

describe('the per-address table', () => {
  it('refills one guess per GUESS_REFILL_S, keys IPv6 by /64 and stays bounded', () => {
    let now = 0;
    const limiter = new GuessLimiter(GUESS_POLICY, () => now);
    for (let i = 0; i < GUESS_BURST; i++) {
      assert.equal(limiter.decide('192.0.2.5').kind, 'check');
      limiter.wrong('192.0.2.5');
    }
    const limited = limiter.decide('192.0.2.5');
    assert.deepEqual(limited, { kind: 'served_only', retryAfterS: GUESS_REFILL_S });
    now += GUESS_REFILL_S * 1000;
    assert.equal(limiter.decide('192.0.2.5').kind, 'check', 'one more after the refill');
    assert.equal(addressKey('2001:db8:1:2:aaaa::1'), addressKey('2001:db8:1:2:bbbb:cccc:dddd:eeee'));
    assert.notEqual(addressKey('2001:db8:1:2::1'), addressKey('2001:db8:1:3::1'));
    assert.equal(addressKey('::ffff:10.0.0.1'), '10.0.0.1');
    for (let i = 0; i < GUESS_ADDRESSES_MAX * 3; i++)
      limiter.wrong(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
    assert.equal(limiter.size, GUESS_ADDRESSES_MAX, 'the table stays bounded');
  });

  it('forgets an address only once its bucket is full again; until then a new one shares the overflow', () => {
    let now = 0;
    const limiter = new GuessLimiter(GUESS_POLICY, () => now, 4);
    for (const a of ['10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.0.4']) limiter.wrong(a);
    for (let i = 0; i < GUESS_BURST; i++) {
      assert.equal(limiter.decide(`10.1.0.${i}`).kind, 'check', `overflow guess ${i + 1}`);
      limiter.wrong(`10.1.0.${i}`);
    }
    assert.equal(limiter.decide('10.2.0.1').kind, 'served_only', 'a new address past the overflow: limited');
    now += GUESS_REFILL_S * 1000;
    assert.equal(limiter.decide('10.2.0.1').kind, 'check', 'the overflow refills too');
    now += GUESS_BURST * GUESS_REFILL_S * 1000;
    limiter.wrong('10.2.0.2');
    assert.equal(limiter.size, 4, 'a refilled address made room');
    assert.equal(limiter.decide('10.2.0.2').kind, 'check', 'the new address has its own bucket now');
  });

  it("a token served from an address is served at once only while the table keeps it: once forgotten with its address, that address's guessing holds it too", () => {
    const limiter = new GuessLimiter({ burst: 2, refillS: 3600 }, () => 0, 2);
    const authenticate = authorizationAuth([{ name: 'web.token', token: ADMIN, role: 'admin' }], limiter);
    const kindOf = (token: string, address: string) => {
      const result = authenticate(`Bearer ${token}`, address);
      return result.ok ? 'ok' : result.error.kind;
    };
    assert.equal(kindOf(ADMIN, '192.0.2.1'), 'ok');
    assert.equal(kindOf(ADMIN, '192.0.2.1'), 'ok', 'served again');
    // Two more addresses served: the table (2 addresses) forgets the least recently seen one, with its served token.
    assert.equal(kindOf(ADMIN, '192.0.2.2'), 'ok');
    assert.equal(kindOf(ADMIN, '192.0.2.3'), 'ok');
    assert.equal(limiter.size, 2);
    // 192.0.2.1 guesses past its burst (the table full of served addresses: the overflow's).
    assert.deepEqual(
      [kindOf('wrong-1', '192.0.2.1'), kindOf('wrong-2', '192.0.2.1')],
      ['unauthorized', 'unauthorized'],
    );
    assert.equal(kindOf(ADMIN, '192.0.2.1'), 'too_many_requests', 'no longer served there: limited as a new token');
    assert.equal(kindOf(ADMIN, '192.0.2.3'), 'ok', 'an address the table keeps is served at once');
  });
});
