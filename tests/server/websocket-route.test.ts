/**
 * A WebSocket route is a file and a catalog line: a route declared with webSocketRoute (here over PUT
 * /robot/override's operation) and listed in the catalog's `websockets` is served by the listener's one upgrade
 * dispatcher from the route table, gated by its operation's role and its token rules, and each message goes through
 * the call pipeline: the operation's validation (field paths under `message`), its own errors with the status of the
 * one table, and its effect.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { catalog } from '../../handlers/index.ts';
import { operation as setOverride } from '../../handlers/robot/set-override.ts';
import { webSocketRoute } from '../../lib/http/websocket.ts';
import { type RunningServer, startServer } from '../../lib/server/start.ts';
import { testConfig, withOwnPositionsFile } from '../support/server.ts';

const OPERATOR = 'operator-token-7d1e3c5a9b';
const VIEWER = 'viewer-token-2b4d6f8a0c';
const ADMIN = 'admin-token-5e7a9c1b3d';
const PATH = '/probe/override';

/** Connections the probe route served, and the ones that ended. */
const seen = { opened: 0, closed: 0 };
const probe = webSocketRoute({
  name: 'probe',
  path: PATH,
  operation: setOverride,
  protocol: 'armgate.probe.v1',
  maxMessageBytes: 1024,
  maxMessagesPerS: 50,
  serve: () => (connection) => {
    seen.opened++;
    connection.send({ type: 'hello', caller: connection.caller.name });
    return { closed: () => seen.closed++ };
  },
});

let server: RunningServer;
let cleanup: () => Promise<void>;

interface Opened {
  readonly ws: WebSocket;
  readonly messages: Record<string, unknown>[];
  next(): Promise<Record<string, unknown>>;
  readonly closed: Promise<number>;
}

function open(token: string): Promise<Opened> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${server.url.replace('http', 'ws')}${PATH}`, ['armgate.probe.v1'], {
      headers: { authorization: `Bearer ${token}` },
    });
    const messages: Record<string, unknown>[] = [];
    const waiting: ((m: Record<string, unknown>) => void)[] = [];
    ws.on('message', (data) => {
      const message = JSON.parse(data.toString()) as Record<string, unknown>;
      const waiter = waiting.shift();
      if (waiter) waiter(message);
      else messages.push(message);
    });
    const closed = new Promise<number>((done) => ws.on('close', (code) => done(code)));
    const next = () =>
      new Promise<Record<string, unknown>>((done) => {
        const queued = messages.shift();
        if (queued) done(queued);
        else waiting.push(done);
      });
    ws.on('open', () => resolve({ ws, messages, next, closed }));
    ws.on('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    ws.on('error', reject);
  });
}

const override = async () =>
  (
    (await (await fetch(`${server.url}/robot/override`, { headers: { authorization: `Bearer ${ADMIN}` } })).json()) as {
      percent: number;
    }
  ).percent;

describe('a WebSocket route of the catalog', () => {
  before(async () => {
    const own = await withOwnPositionsFile(
      await testConfig({
        web: {
          token: ADMIN,
          tokens: [
            { name: 'operator', token: OPERATOR, role: 'operate' },
            { name: 'viewer', token: VIEWER, role: 'read' },
          ],
        },
      }),
    );
    cleanup = own.cleanup;
    server = await startServer(
      own.config,
      { ...catalog, websockets: [...(catalog.websockets ?? []), probe] },
      {
        log: () => {},
      },
    );
  });
  after(async () => {
    await server.close();
    await cleanup();
  });

  it('is served by the upgrade dispatcher (beside the jog socket), answering its own subprotocol', async () => {
    const a = await open(OPERATOR);
    assert.equal(a.ws.protocol, 'armgate.probe.v1');
    assert.deepEqual(await a.next(), { type: 'hello', caller: 'operator' });
    a.ws.close();
    await a.closed;
    assert.equal(seen.closed, seen.opened, 'its file is told the connection ended');
    // The catalog's own WebSocket route is still served: GET /robot/jog upgrades (a read token is refused there).
    const jog = new WebSocket(`${server.url.replace('http', 'ws')}/robot/jog`, {
      headers: { authorization: `Bearer ${VIEWER}` },
    });
    const status = await new Promise<number>((done) =>
      jog.on('unexpected-response', (_req, res) => done(res.statusCode ?? 0)),
    );
    assert.equal(status, 403);
  });

  it("calls its operation for each message through the pipeline: validation, the operation's errors, its effect", async () => {
    const a = await open(OPERATOR);
    await a.next();
    a.ws.send(JSON.stringify({ percent: 500 }));
    const tooHigh = (await a.next()) as { type: string; status: number; detail: { loc: unknown[] }[] };
    assert.deepEqual([tooHigh.type, tooHigh.status, tooHigh.detail[0]?.loc], ['error', 422, ['message', 'percent']]);
    a.ws.send('[1, 2]');
    const notObject = (await a.next()) as { status: number; detail: { loc: unknown[] }[] };
    assert.deepEqual([notObject.status, notObject.detail[0]?.loc], [422, ['message']]);
    a.ws.send(JSON.stringify({ percent: 40 }));
    a.ws.send(JSON.stringify({ percent: 30 }));
    // A call that is taken answers nothing: the next message's error shows both ran, in order.
    a.ws.send('{');
    assert.equal(((await a.next()) as { status: number }).status, 422);
    assert.equal(await override(), 30);
    a.ws.close();
    await a.closed;
    // The operation's own refusal (a read token may lower the override, not raise it): 403 from the one table.
    const viewer = await open(VIEWER);
    await viewer.next();
    viewer.ws.send(JSON.stringify({ percent: 90 }));
    const raised = (await viewer.next()) as { status: number; detail: string };
    assert.equal(raised.status, 403);
    assert.match(raised.detail, /needs the role 'operate'/);
    assert.equal(await override(), 30, 'not raised');
    viewer.ws.close();
    await viewer.closed;
    const admin = await open(ADMIN);
    await admin.next();
    admin.ws.send(JSON.stringify({ percent: 100 }));
    admin.ws.send('{');
    await admin.next();
    assert.equal(await override(), 100);
    admin.ws.close();
    await admin.closed;
  });

  it('refuses an upgrade without a valid token (401) before any connection is served', async () => {
    const before = seen.opened;
    await assert.rejects(open('not-a-token-at-all'), /HTTP 401/);
    assert.equal(seen.opened, before);
  });

  it('answers its HTTP edges as every WebSocket route: 422 for a query, 426 for a GET, 405 with Allow: GET', async () => {
    const before = seen.opened;
    const refused = await new Promise<{ status: number; body: string }>((done, fail) => {
      const ws = new WebSocket(`${server.url.replace('http', 'ws')}${PATH}?percent=5`, ['armgate.probe.v1'], {
        headers: { authorization: `Bearer ${OPERATOR}` },
      });
      ws.on('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => done({ status: res.statusCode ?? 0, body }));
      });
      ws.on('open', () => fail(new Error('opened with a query')));
    });
    assert.equal(refused.status, 422);
    assert.deepEqual((JSON.parse(refused.body) as { detail: { loc: unknown[] }[] }).detail[0]?.loc, [
      'query',
      'percent',
    ]);
    assert.equal(seen.opened, before, 'no connection served');
    const get = await fetch(`${server.url}${PATH}`, { headers: { authorization: `Bearer ${OPERATOR}` } });
    assert.equal(get.status, 426);
    assert.equal(get.headers.get('upgrade'), 'websocket');
    assert.match(((await get.json()) as { detail: string }).detail, new RegExp(`GET ${PATH} is a WebSocket`));
    const options = await fetch(`${server.url}${PATH}`, {
      method: 'OPTIONS',
      headers: { authorization: `Bearer ${OPERATOR}` },
    });
    assert.equal(options.status, 405);
    assert.equal(options.headers.get('allow'), 'GET');
    await options.body?.cancel();
  });
});
