import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as v from 'valibot';
import { defineOperation } from '../../lib/core/operation.ts';
import { restHandler } from '../../lib/http/rest.ts';
import { type CallExtra, callTool } from '../../lib/mcp/tools.ts';
import { ok } from '../../lib/result.ts';
import type { RobotContext } from '../../lib/ros/context.ts';
import { servicesFor, TEST_CALLER } from '../support/services.ts';

describe('a call without a caller is refused on both faces, never run', () => {
  let runs = 0;
  const probe = defineOperation({
    name: 'caller_probe',
    summary: 'probe',
    description: 'Counts its runs.',
    effect: 'read',
    idempotent: true,
    output: v.object({ runs: v.number() }),
    errors: {},
    rest: { method: 'GET', path: '/caller-probe', operationId: 'callerProbe', tags: [], ok: 'runs' },
    mcp: { title: 'probe' },
    run: async () => ok({ runs: ++runs }),
  });
  // The probe reads nothing of the robot.
  const context = {} as RobotContext;
  const state = { services: servicesFor(context), ros: context };

  it('REST: 401 without a caller, and the operation does not run', async () => {
    const handler = restHandler(probe);
    const before = runs;
    const res = await handler(new Request('http://armgate.test/caller-probe'), { ...state, caller: undefined });
    assert.equal(res.status, 401);
    assert.match(((await res.json()) as { detail: string }).detail, /without a caller/);
    assert.equal(runs, before, 'not run');
    const served = await handler(new Request('http://armgate.test/caller-probe'), { ...state, caller: TEST_CALLER });
    assert.equal(served.status, 200, 'the same call with a caller is served');
    assert.equal(runs, before + 1);
  });

  it('MCP: a tool error without a caller (no authInfo), and the operation does not run', async () => {
    const before = runs;
    const extra = { signal: new AbortController().signal, requestId: 1 } as unknown as CallExtra;
    const result = await callTool(probe, {}, extra, { state });
    assert.equal(result.isError, true);
    assert.match(JSON.stringify(result.content), /without a caller/);
    assert.equal(runs, before, 'not run');
    const authInfo = { token: '', clientId: 'test', scopes: ['admin'], extra: { principal: TEST_CALLER } };
    const served = await callTool(probe, {}, { ...extra, authInfo } as CallExtra, { state });
    assert.equal(served.isError, undefined, 'the same call with a caller is served');
    assert.equal(runs, before + 1);
  });

  it('MCP: a principal with an unknown role counts as no caller', async () => {
    const before = runs;
    const authInfo = { token: '', clientId: 'x', scopes: [], extra: { principal: { name: 'x', role: 'root' } } };
    const extra = { signal: new AbortController().signal, requestId: 2, authInfo } as unknown as CallExtra;
    const result = await callTool(probe, {}, extra, { state });
    assert.equal(result.isError, true);
    assert.equal(runs, before);
  });
});
