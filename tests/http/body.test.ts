import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as v from 'valibot';
import { parseJsonBody } from '../../lib/http/body.ts';
import { errorResponse } from '../../lib/http/errors.ts';
import { finiteNumber, intField } from '../../lib/http/schemas.ts';
import { defineOperation } from '../../lib/core/operation.ts';
import { restHandler } from '../../lib/http/rest.ts';
import { ok } from '../../lib/result.ts';
import type { RobotContext } from '../../lib/ros/context.ts';
import { servicesFor, TEST_CALLER } from '../support/services.ts';

const Body = v.object({ x: finiteNumber('metres'), joints: v.array(finiteNumber('radians')) });
const post = (body: BodyInit, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
  new Request('http://armgate.test/x', {
    method: 'POST',
    body,
    headers,
    ...(body instanceof ReadableStream ? { duplex: 'half' } : {}),
  });

async function detailOf(request: Request) {
  const parsed = await parseJsonBody(request, Body);
  assert.equal(parsed.ok, false);
  if (parsed.ok) throw new Error('unreachable');
  const res = errorResponse(parsed.error);
  return {
    status: res.status,
    body: (await res.json()) as { detail: { loc: (string | number)[]; msg: string; type: string }[] | string },
  };
}

describe('JSON request bodies', () => {
  it('parses a valid body into typed values', async () => {
    const parsed = await parseJsonBody(post('{"x": 1.5, "joints": [0, 1]}'), Body);
    assert.deepEqual(parsed, { ok: true, value: { x: 1.5, joints: [0, 1] } });
  });

  const cases: [string, string, number, (string | number)[], string][] = [
    ['malformed JSON', '{"x": 1,', 422, ['body'], 'json_invalid'],
    ['NaN literal', '{"x": NaN, "joints": []}', 422, ['body'], 'json_invalid'],
    ['Infinity literal', '{"x": Infinity, "joints": []}', 422, ['body'], 'json_invalid'],
    ['a number that overflows to Infinity', '{"x": 1e999, "joints": []}', 422, ['body', 'x'], 'finite'],
    ['an overflowing array element', '{"x": 0, "joints": [0, -1e400]}', 422, ['body', 'joints', 1], 'finite'],
    ['a missing field', '{"joints": []}', 422, ['body', 'x'], 'missing'],
    ['a string for a number', '{"x": "1", "joints": []}', 422, ['body', 'x'], 'number'],
    ['an empty body', '', 422, ['body'], 'missing'],
  ];
  for (const [name, text, status, loc, type] of cases) {
    it(`rejects ${name} with ${status} at ${loc.join('.')}`, async () => {
      const { status: got, body } = await detailOf(post(text));
      assert.equal(got, status);
      assert.ok(Array.isArray(body.detail));
      assert.deepEqual(body.detail[0]?.loc, loc);
      assert.equal(body.detail[0]?.type, type);
    });
  }

  it('reads a body alike by its declared Content-Length and streamed: UTF-8, a byte order mark dropped', async () => {
    const text = '\uFEFF{"x": 2.5, "joints": [0.1, -0.2]}';
    const length = String(new TextEncoder().encode(text).byteLength);
    for (const headers of [
      { 'content-type': 'application/json', 'content-length': length },
      { 'content-type': 'application/json' },
    ]) {
      const parsed = await parseJsonBody(post(text, headers), Body);
      assert.deepEqual(parsed, { ok: true, value: { x: 2.5, joints: [0.1, -0.2] } }, JSON.stringify(headers));
    }
  });

  it('rejects a body over 1 MiB by its Content-Length with 413', async () => {
    const big = `{"x": 1, "joints": [${'0,'.repeat(600_000)}0]}`;
    const { status, body } = await detailOf(
      post(big, { 'content-type': 'application/json', 'content-length': String(big.length) }),
    );
    assert.equal(status, 413);
    assert.match(String(body.detail), /larger than 1048576 bytes/);
  });

  it('rejects a streamed body over 1 MiB without Content-Length with 413', async () => {
    const chunk = new TextEncoder().encode(' '.repeat(64 * 1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        sent++;
        if (sent > 40) controller.close();
        else controller.enqueue(chunk);
      },
    });
    const { status } = await detailOf(post(stream));
    assert.equal(status, 413);
    assert.ok(sent < 40, 'stops reading once the limit is passed');
  });
});

describe('query parameters through the REST face', () => {
  const probe = defineOperation({
    name: 'query_probe',
    summary: 'probe',
    description: 'echoes n',
    effect: 'read',
    idempotent: true,
    input: v.strictObject({ n: intField(1, 300, 50, 'how many') }),
    output: v.object({ n: v.number() }),
    errors: {},
    rest: { method: 'GET', path: '/probe', operationId: 'probe', tags: [], query: ['n'], ok: 'n' },
    run: async ({ n }) => ok({ n }),
  });
  const handler = restHandler(probe);
  // The probe reads nothing of the app: its services and robot are never looked at.
  const context = {} as RobotContext;
  const call = { services: servicesFor(context), ros: context, caller: TEST_CALLER };
  const query = (qs: string) => handler(new Request(`http://armgate.test/probe${qs}`), call);

  it('converts and defaults integers', async () => {
    assert.deepEqual(await (await query('')).json(), { n: 50 });
    assert.deepEqual(await (await query('?n=300')).json(), { n: 300 });
    assert.deepEqual(await (await query('?n=+7')).json(), { n: 7 });
  });

  for (const qs of ['?n=0', '?n=301', '?n=abc', '?n=1.5', '?n=', '?n=1e3', '?n=1&n=2', '?m=1']) {
    it(`rejects ${qs} with 422 at the parameter`, async () => {
      const res = await query(qs);
      assert.equal(res.status, 422);
      const body = (await res.json()) as { detail: { loc: unknown[] }[] };
      assert.deepEqual(body.detail[0]?.loc, ['query', qs === '?m=1' ? 'm' : 'n']);
    });
  }
});
