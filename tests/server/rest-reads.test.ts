import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { handlers } from '../../handlers/index.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/**
 * The REST reads (GET of an exact path) reach the app from the listener as a light view of Node's request, not
 * through @whatwg-node's adapter (lib/server/request.ts). Over the socket every one of them answers exactly
 * what the same app answers a real fetch Request in memory: the same admission (Host, Origin, CORS), authentication,
 * roles, query validation, status, headers and body, and each has its request line.
 */
const ADMIN = 'admin-token-for-rest-reads-0123456789';
const READER = 'read-token-for-rest-reads-0123456789';
const UI = 'http://cell-ui.example:3000';

const reads = handlers
  .map(({ operation }) => operation.rest)
  .filter((rest) => rest.method === 'GET' && !rest.params?.length)
  .map((rest) => rest.path);

/** The headers a client reads besides the body (the ones Node adds itself, Date and Connection, left out). */
const COMPARED = [
  'content-type',
  'content-length',
  'www-authenticate',
  'access-control-allow-origin',
  'access-control-expose-headers',
  'vary',
  'allow',
  'retry-after',
];

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | undefined>;
  readonly body: string;
}

/** A GET over the socket with exactly these headers (node:http lets a test set Host). */
function overSocket(url: string, target: string, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}${target}`, { method: 'GET', headers }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => {
        const picked: Record<string, string | undefined> = {};
        for (const name of COMPARED) {
          const value = res.headers[name];
          picked[name] = Array.isArray(value) ? value.join(', ') : value;
        }
        resolve({ status: res.statusCode ?? 0, headers: picked, body });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

async function inMemory(server: TestServer, target: string, headers: Record<string, string>): Promise<Answer> {
  const res = await server.request(target, { headers });
  const picked: Record<string, string | undefined> = {};
  for (const name of COMPARED) picked[name] = res.headers.get(name) ?? undefined;
  return { status: res.status, headers: picked, body: await res.text() };
}

describe('REST reads over the light way answer as the app does', { timeout: 120_000 }, () => {
  let server: TestServer;
  let host: string;
  before(async () => {
    server = await startTestServer({
      web: {
        token: ADMIN,
        tokens: [{ name: 'viewer', token: READER, role: 'read' }],
        allowed_hosts: ['cell.example'],
        cors_origins: [UI],
      },
    });
    host = new URL(server.url).host;
  });
  after(async () => {
    await server?.close();
  });

  it('covers every REST read of the catalog', () => {
    for (const path of ['/robot/joint_states', '/robot/pose', '/robot/positions', '/robot/override']) {
      assert.ok(reads.includes(path), path);
    }
  });

  const cases: Record<string, (path: string) => { target: string; headers: Record<string, string> }> = {
    'without a token': (path) => ({ target: path, headers: {} }),
    'with a malformed Authorization header': (path) => ({ target: path, headers: { authorization: 'Basic eDp5' } }),
    'with a wrong token': (path) => ({ target: path, headers: { authorization: 'Bearer not-a-token' } }),
    'with a read token': (path) => ({ target: path, headers: { authorization: `Bearer ${READER}` } }),
    'with the admin token': (path) => ({ target: path, headers: { authorization: `Bearer ${ADMIN}` } }),
    'with a foreign Host': (path) => ({
      target: path,
      headers: { authorization: `Bearer ${ADMIN}`, host: 'evil.example' },
    }),
    'with an allowed Host name': (path) => ({
      target: path,
      headers: { authorization: `Bearer ${ADMIN}`, host: `cell.example:${new URL(server.url).port}` },
    }),
    'from a foreign Origin': (path) => ({
      target: path,
      headers: { authorization: `Bearer ${ADMIN}`, origin: 'http://evil.example' },
    }),
    'from the admitted front end (CORS)': (path) => ({
      target: path,
      headers: { authorization: `Bearer ${ADMIN}`, origin: UI },
    }),
    'with an unknown query parameter': (path) => ({
      target: `${path}?nonsense=1`,
      headers: { authorization: `Bearer ${ADMIN}` },
    }),
    'with a query parameter twice': (path) => ({
      target: `${path}?lines=1&lines=2`,
      headers: { authorization: `Bearer ${ADMIN}` },
    }),
  };

  for (const path of reads) {
    for (const [name, make] of Object.entries(cases)) {
      it(`GET ${path} ${name}`, async () => {
        const { target, headers } = make(path);
        const sent = { host, ...headers };
        const lines = server.logs.length;
        const socket = await overSocket(server.url, target, sent);
        const memory = await inMemory(server, target, sent);
        assert.equal(socket.status, memory.status, socket.body);
        assert.notEqual(socket.status, 500, socket.body);
        assert.deepEqual(socket.headers, memory.headers);
        assert.deepEqual(JSON.parse(socket.body), JSON.parse(memory.body));
        // Its request line (the in-memory request has one too): method, path without the query, status.
        const logged = server.logs
          .slice(lines)
          .filter((l) => l.msg === 'request' && l.path === path && l.status === socket.status);
        assert.equal(logged.length, 2, JSON.stringify(server.logs.slice(lines)));
      });
    }
  }

  it('an answer to a client gone before it was written costs nothing: the next read is served', async () => {
    await new Promise<void>((resolve) => {
      const req = httpRequest(`${server.url}/robot/joint_states`, { headers: { authorization: `Bearer ${ADMIN}` } });
      req.on('error', () => resolve());
      req.end(() => {
        req.destroy();
        resolve();
      });
    });
    const next = await overSocket(server.url, '/robot/joint_states', { authorization: `Bearer ${ADMIN}` });
    assert.equal(next.status, 200);
  });
});
